"""Configs and RewardSets: file formats, clear config errors, weights, aliases, gates, shared verdicts."""

import asyncio
import json
import math
import pickle

import pytest

import rewardhub
from rewardhub import ConfigError, UnknownRewardError

CONFIG = {
    "rewards": [
        {"name": "t_contains", "weight": 1.0},
        {"name": "t_length", "alias": "short", "weight": 0.5, "params": {"per_char": 0.1}},
        {"name": "t_length", "alias": "long", "weight": 0.25, "params": {"per_char": 0.01}},
    ]
}


def test_weights_and_funcs_for_grpo(core_registry):
    rewards = rewardhub.load(CONFIG)
    assert rewards.reward_weights == [1.0, 0.5, 0.25]
    assert [f.__name__ for f in rewards.reward_funcs] == ["t_contains", "short", "long"]
    assert rewards.reward_funcs[1](None, ["abcde"]) == [0.5]
    assert rewards.reward_funcs[2](None, ["abcde"]) == [0.05]


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".toml", ".json"])
def test_config_files(core_registry, tmp_path, suffix):
    path = tmp_path / f"rewards{suffix}"
    if suffix == ".toml":
        path.write_text(
            '[[rewards]]\nname = "t_contains"\n\n[[rewards]]\nname = "t_length"\nalias = "short"\nweight = 0.5\n'
            "[rewards.params]\nper_char = 0.1\n"
        )
    elif suffix == ".json":
        path.write_text(json.dumps(CONFIG))
    else:
        path.write_text(
            "rewards:\n  - name: t_contains\n  - name: t_length\n    alias: short\n    weight: 0.5\n"
            "    params: {per_char: 0.1}\n"
        )
    rewards = rewardhub.load(str(path))
    assert rewards.aliases[:2] == ["t_contains", "short"]
    assert rewards.reward_weights[:2] == [1.0, 0.5]


def test_a_plain_list_and_bare_names(core_registry):
    rewards = rewardhub.load(["t_contains", {"name": "t_length"}])
    assert rewards.aliases == ["t_contains", "t_length"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"rewards": [{"name": "t_contains", "wieght": 2}]}, "entry #1 (t_contains): unknown key(s) 'wieght' (did you mean 'weight'?)"),
        ({"rewards": [{"name": "t_contains", "weight": "heavy"}]}, "'weight' must be a finite number, got 'heavy'"),
        ({"rewards": [{"name": "t_length", "params": {"per_chr": 1}}]}, "accepted params: per_char: float = 0.1"),
        ({"rewards": [{"name": "t_length", "params": {"per_char": "x"}}]}, "param 'per_char': expected float or int, got str"),
        ({"rewards": [{"weight": 1}]}, "entry #1: 'name' is required"),
        ({"rewards": []}, "'rewards' is empty"),
        ({"reward": []}, "unknown top-level key(s) 'reward' (did you mean 'rewards'?)"),
        ({"rewards": ["t_length", "t_length"]}, "alias 't_length' is already used by entry #1"),
        ({"rewards": [{"name": "t_length", "gate": {"reward": "x", "treshold": 1}}]}, "unknown gate key(s) 'treshold'"),
        ({"rewards": [{"name": "t_length", "params": [1]}]}, "'params' must be a mapping"),
    ],
)
def test_config_errors_name_entry_and_key(core_registry, config, message):
    with pytest.raises(ConfigError) as info:
        rewardhub.load(config)
    assert message in str(info.value)


def test_unknown_reward_suggests_close_names(core_registry):
    with pytest.raises(UnknownRewardError) as info:
        rewardhub.load({"rewards": [{"name": "t_contain"}]})
    assert "Did you mean: 't_contains'" in str(info.value)


def test_missing_and_unparseable_files(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        rewardhub.load(str(tmp_path / "nope.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("rewards: [unclosed")
    with pytest.raises(ConfigError, match="cannot parse"):
        rewardhub.load(str(bad))
    other = tmp_path / "rewards.ini"
    other.write_text("x")
    with pytest.raises(ConfigError, match=r"must end in \.yaml"):
        rewardhub.load(str(other))


def test_score_rows_with_weighted_total(core_registry):
    rewards = rewardhub.load(CONFIG)
    rows = [
        {"prompt": "q", "completion": "the answer is 42", "solution": "42", "id": 1},
        {"prompt": "q", "completion": "no idea", "solution": "42", "id": 2},
    ]
    scored = rewards.score(rows)
    assert scored[0]["id"] == 1
    assert scored[0]["rewards"] == {"t_contains": 1.0, "short": 1.0, "long": pytest.approx(0.16)}
    assert scored[0]["reward"] == pytest.approx(1.0 + 0.5 + 0.25 * 0.16)
    assert scored[1]["reasons"]["t_contains"] == "'42' not found"
    assert set(scored[0]["seconds"]) == {"t_contains", "short", "long"}


def test_total_skips_abstentions_like_trl_nansum(core_registry):
    rewards = rewardhub.load([{"name": "t_flaky", "weight": 2.0}, {"name": "t_length", "weight": 1.0}])
    scored = rewards.score([{"completion": "skip"}, {"completion": "ok"}])
    assert scored[0]["rewards"]["t_flaky"] is None
    assert scored[0]["reward"] == pytest.approx(0.4)  # only t_length counts
    assert scored[1]["reward"] == pytest.approx(2.0 + 0.2)
    only_flaky = rewardhub.load(["t_flaky"]).score([{"completion": "skip"}])
    assert only_flaky[0]["reward"] is None


def test_gate_counts_a_reward_only_where_another_passes(core_registry):
    rewards = rewardhub.load({"rewards": [
        {"name": "t_length", "alias": "long_enough", "params": {"per_char": 0.25}},
        {"name": "t_contains", "alias": "gated", "gate": {"reward": "long_enough", "threshold": 1.0, "otherwise": -1}},
    ]})
    gated = rewards["gated"]
    values = gated(["q"] * 3, ["42", "42 is it", "wrong answer"], solution=["42"] * 3)
    assert values == [-1.0, 1.0, 0.0]
    reasons = gated.evaluate(["q"] * 3, ["42", "42 is it", "wrong answer"], solution=["42"] * 3).reasons
    assert reasons[0] == "gated: long_enough scored 0.5 < 1"


def test_gate_by_registry_name_not_in_the_set(core_registry):
    rewards = rewardhub.load([{"name": "t_contains", "gate": "t_flaky"}])
    result = rewards.reward_funcs[0].evaluate(["q"] * 3, ["42", "42 boom", "42 skip"], solution=["42"] * 3)
    assert result.values == [1.0, None, None]  # the gate could not decide: abstain, never 0
    assert result.reasons[1].startswith("gate 't_flaky' failed: error: RuntimeError")
    assert result.outcomes[1] == "error"  # the gate's failure is no abstention (and never an 'ok')
    assert result.reasons[2] == "gate 't_flaky' abstained: not applicable"


def test_shared_verdicts_are_computed_once_per_batch(core_registry):
    rewards = rewardhub.load(["t_counting_exact", "t_length_if_correct"])
    exact, brevity = rewards.reward_funcs
    kwargs = {"prompts": ["q"] * 3, "completions": ["a", "bb", "a"], "solution": ["a", "a", "a"]}
    assert exact(**kwargs) == [1.0, 0.0, 1.0]  # the trainer calls each reward in turn
    assert brevity(**kwargs) == [0.5, 0.0, 0.5]
    assert exact.batches == 1  # the verdicts were reused, not recomputed
    exact(prompts=["q"], completions=["b"], solution=["a"])
    assert exact.batches == 2


def test_dependency_built_from_registry_when_not_in_the_set(core_registry):
    brevity = rewardhub.get("t_length_if_correct")
    assert brevity(["q", "q"], ["abc", "x"], solution=["abc", "abc"]) == [0.25, 0.0]


def test_weighted_callable_logs_components_and_pickles(core_registry):
    rewards = rewardhub.load([{"name": "t_contains", "weight": 2.0}, {"name": "t_async_len", "weight": 0.5}])
    weighted = rewards.weighted
    metrics, extra = {}, {}
    values = weighted(
        prompts=["q", "q"], completions=["42", "no"], solution=["42", "42"],
        log_metric=lambda k, v: metrics.__setitem__(k, v), log_extra=lambda k, v: extra.__setitem__(k, v),
    )
    assert values == [2.0 + 1.0, 0.0 + 1.0]
    assert metrics["t_contains/mean"] == 0.5 and metrics["t_async_len/mean"] == 2.0
    assert extra["t_contains/reason"] == ["found", "'42' not found"]
    assert extra["t_contains/outcome"] == ["ok", "ok"]
    clone = pickle.loads(pickle.dumps(weighted))
    assert clone(prompts=["q"], completions=["42"], solution=["42"]) == [3.0]
    assert weighted.__name__ == "rewardhub"


def test_iter_scores_keeps_prompt_groups_together(core_registry):
    rewards = rewardhub.load(["t_length"])
    rows = [{"prompt": p, "completion": "x"} for p in "aaabbbbc"]
    chunks = []
    original = rewards._score_chunk
    rewards._score_chunk = lambda chunk: chunks.append([r["prompt"] for r in chunk]) or original(chunk)
    out = list(rewards.iter_scores(rows, batch_size=2))
    assert [r["prompt"] for r in out] == list("aaabbbbc")
    assert chunks == [["a"] * 3, ["b"] * 4, ["c"]]


def test_weights_can_be_negative_and_totals_are_exact(core_registry):
    rewards = rewardhub.load([{"name": "t_length", "weight": -1.0}])
    assert rewards.score([{"completion": "abc"}])[0]["reward"] == pytest.approx(-0.3)
    assert not math.isnan(rewards.score([{"completion": ""}])[0]["reward"])


def test_missing_column_reason_names_the_reward_that_needs_it(core_registry):
    rewards = rewardhub.load([{"name": "t_contains", "alias": "contains"}, "t_length"])
    scored = rewards.score([{"prompt": "q", "completion": "42"}])
    assert scored[0]["reasons"]["contains"].startswith("error: MissingColumnError: reward 'contains' needs column 'solution'")
    assert scored[0]["rewards"]["t_length"] == pytest.approx(0.2)


def test_shared_memo_is_safe_under_concurrent_threads(core_registry):
    from concurrent.futures import ThreadPoolExecutor

    exact = rewardhub.get("t_counting_exact").share()

    def work(i):
        batch_texts = [str(i % 7), "x"]
        return exact.evaluate(["q", "q"], batch_texts, solution=[str(i % 7), "y"]).values

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(2000)))
    assert results == [[1.0, 0.0]] * 2000


def test_a_gate_over_an_async_reward_is_itself_async(core_registry):
    from trl.trainer.utils import is_async_callable

    rewards = rewardhub.load([
        {"name": "t_length", "alias": "long_enough", "params": {"per_char": 0.5}},
        {"name": "t_async_len", "alias": "gated_async", "gate": "long_enough"},
        {"name": "t_contains", "alias": "gated_sync", "gate": "long_enough"},
    ])
    gated_async, gated_sync = rewards["gated_async"], rewards["gated_sync"]
    assert is_async_callable(gated_async) and not is_async_callable(gated_sync)
    kwargs = {"prompts": ["q", "q"], "completions": ["a", "abc"], "solution": ["a", "abc"]}
    assert asyncio.run(gated_async(**kwargs)) == [0.0, 3.0]
    assert gated_async.evaluate(**kwargs).values == [0.0, 3.0]
    assert gated_sync(**kwargs) == [0.0, 1.0]
    assert rewards.score([{"prompt": "q", "completion": "abc", "solution": "abc"}])[0]["rewards"]["gated_async"] == 3.0
    clone = pickle.loads(pickle.dumps(gated_async))
    assert clone.evaluate(**kwargs).values == [0.0, 3.0]


def test_rewards_reusing_each_others_verdicts_in_a_cycle_is_a_config_error(core_registry):
    with pytest.raises(ConfigError, match="in a cycle: a -> b -> a"):
        rewardhub.load([
            {"name": "t_length_if_correct", "alias": "a", "params": {"correctness": "b"}},
            {"name": "t_length_if_correct", "alias": "b", "params": {"correctness": "a"}},
        ])
    with pytest.raises(ConfigError, match="in a cycle: self -> self"):
        rewardhub.load([{"name": "t_length_if_correct", "alias": "self", "params": {"correctness": "self"}}])


def test_running_totals_are_exact_under_concurrent_threads(core_registry):
    from concurrent.futures import ThreadPoolExecutor

    reward = rewardhub.get("t_flaky")
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda i: reward.evaluate(None, ["ok", "boom", "skip"]), range(3000)))
    assert reward.totals["samples"] == 9000
    assert reward.totals["errors"] == 3000 and reward.totals["abstained"] == 6000


def test_one_evaluation_path_sync_async_and_trl_style_give_the_same_result(core_registry):
    from concurrent.futures import ThreadPoolExecutor

    rewards = rewardhub.load([{"name": "t_contains", "weight": 2.0}, {"name": "t_async_len", "weight": 0.5}])
    batch = rewardhub.Batch(["q", "q", "q"], ["42", "no", 7], {"solution": ["42", "42", "42"]})
    sync = rewards.evaluate_batch(batch)
    with ThreadPoolExecutor(2) as pool:
        from_loop = asyncio.run(rewards.aevaluate_batch(batch, pool))
    trl_style = rewards.evaluate(["q", "q", "q"], ["42", "no", 7], solution=["42", "42", "42"], log_metric=print)
    for result in (sync, from_loop, trl_style):
        # 7 is no text: both members abstain, each counted at its group's floor (at most a failure's 0.0)
        assert result.totals == [2.0 + 1.0, 0.0 + 1.0, 0.0]
        assert result["t_contains"].values == [1.0, 0.0, None]
        assert result.component_values() == {"t_contains": [1.0, 0.0, None], "t_async_len": [2.0, 2.0, None]}
    assert rewards.weighted(["q"], ["42"], solution=["42"]) == [3.0]


def test_the_weighted_totals_name_is_no_alias(core_registry):
    with pytest.raises(ConfigError, match="'reward' names the weighted total"):
        rewardhub.load([{"name": "t_contains", "alias": "reward"}])


def test_a_list_param_given_text_is_a_config_error_not_read_letter_by_letter():
    with pytest.raises(ConfigError, match="param 'required_keywords': expected list or null, got str 'name'"):
        rewardhub.load([{"name": "heuristic", "params": {"required_keywords": "name"}}])
    assert rewardhub.load([{"name": "heuristic", "params": {"required_keywords": ["name"]}}])


def test_a_gate_naming_an_unknown_alias_suggests_the_configs_aliases():
    with pytest.raises(ConfigError, match=r"'acuracy' is neither an alias of this config .* Did you mean: 'accuracy'"):
        rewardhub.load([{"name": "exact_match", "alias": "accuracy"}, {"name": "format_regex", "gate": "acuracy"}])


def test_batch_size_bounds_memory_even_when_one_prompt_has_thousands_of_rows(core_registry):
    rewards = rewardhub.load(["t_length"])
    sizes = []
    original = rewards._score_chunk
    rewards._score_chunk = lambda chunk: sizes.append(len(chunk)) or original(chunk)
    rows = [{"prompt": "p", "completion": "x"}] * 5 + [{"prompt": "same", "completion": "x"}] * 5000
    with pytest.warns(RuntimeWarning, match="more than 1024 consecutive rows"):
        scored = list(rewards.iter_scores(rows, batch_size=64))
    assert len(scored) == 5005 and max(sizes) <= 64 + 1024
    assert sum(sizes) == 5005
