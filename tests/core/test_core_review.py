"""Defects found by reviewing the core, each pinned by the test that failed before its fix."""

import pickle
import threading

import numpy as np
import pytest

import rewardhub
from rewardhub import AsyncReward, ConfigError, Score
from rewardhub._batch import to_score
from rewardhub.completions import completion_text


def raw_length(text):
    return float(len(text))


# The module-level name keeps the plain function; the factory lives under another name.
raw_length_factory = rewardhub.sample_reward(name="t_raw_length")(raw_length)


class AsyncExact(AsyncReward):
    """Async exact match with a verdict, counting the batches it really scores."""

    name = "t_async_exact"

    def __init__(self, *, on_error: str = "none"):
        super().__init__(on_error=on_error)
        self.batches = 0

    async def score_batch_async(self, batch):
        self.batches += 1
        return [t == s for t, s in zip(batch.texts, batch.column("solution"), strict=True)]


class AsyncBrevityIfCorrect(AsyncReward):
    """An async reward reusing an async reward's verdicts."""

    name = "t_async_brevity"

    def dependencies(self):
        return {"correctness": "t_async_exact"}

    async def score_batch_async(self, batch):
        verdicts = await self.adependency_scores("correctness", batch)
        return [1.0 / len(t) if v.verdict else 0.0 for t, v in zip(batch.texts, verdicts, strict=True)]


# ----- shared-verdict memo ------------------------------------------------------------------------

def test_memo_tells_a_text_from_a_non_text_completion_with_the_same_repr(core_registry):
    exact = rewardhub.get("t_counting_exact").share()
    assert exact.evaluate(["q"], ["123"], solution=["123"]).values == [1.0]
    assert exact.evaluate(["q"], [123], solution=["123"]).values == [None]  # was the cached 1.0


def test_memo_sees_the_middle_of_big_array_columns(core_registry):
    exact = rewardhub.get("t_counting_exact").share()
    ids_a, ids_b = np.zeros(5000, dtype=int), np.zeros(5000, dtype=int)
    ids_b[2500] = 1  # repr() of both arrays is the same ("0, 0, 0, ..., 0, 0, 0")
    exact.evaluate(["q"], ["a"], solution=["a"], ids=[ids_a])
    exact.evaluate(["q"], ["a"], solution=["a"], ids=[ids_b])
    assert exact.batches == 2
    for flag in (1, True, 1.0, 1):  # equal in Python, not the same value to a reward
        exact.evaluate(["q"], ["a"], solution=["a"], flag=[flag])
    assert exact.batches == 5


# ----- composition --------------------------------------------------------------------------------

def test_dependency_on_a_name_used_twice_is_a_config_error(core_registry):
    with pytest.raises(ConfigError, match=r"'t_counting_exact' names several entries \(e1, e2\)"):
        rewardhub.load([
            {"name": "t_counting_exact", "alias": "e1"}, {"name": "t_counting_exact", "alias": "e2"},
            "t_length_if_correct",
        ])


def test_gate_on_a_name_used_twice_is_a_config_error(core_registry):
    with pytest.raises(ConfigError, match="gate: 't_length' names several entries"):
        rewardhub.load([
            {"name": "t_length", "alias": "a"}, {"name": "t_length", "alias": "b"},
            {"name": "t_contains", "gate": "t_length"},
        ])


def test_dependency_on_an_unknown_reward_fails_at_load_not_at_every_step(core_registry):
    with pytest.raises(ConfigError, match="dependency 'correctness': 'nope' is neither an alias of this config"):
        rewardhub.load([{"name": "t_length_if_correct", "params": {"correctness": "nope"}}])


def test_dependency_by_alias_uses_the_configured_instance(core_registry):
    rewards = rewardhub.load([
        {"name": "t_counting_exact", "alias": "judge_a"},
        {"name": "t_length_if_correct", "params": {"correctness": "judge_a"}},
    ])
    exact, brevity = rewards.reward_funcs
    brevity(["q"], ["a"], solution=["a"])
    exact(["q"], ["a"], solution=["a"])
    assert exact.batches == 1


def test_a_members_raise_policy_is_not_swallowed_by_weighted_evaluate(core_registry):
    rewards = rewardhub.load([{"name": "t_flaky", "params": {"on_error": "raise"}}, "t_length"])
    with pytest.raises(RuntimeError, match="exploded on purpose"):
        rewards.weighted.evaluate(["q"], ["boom"])


def test_a_gates_raise_policy_propagates(core_registry):
    rewards = rewardhub.load([
        {"name": "t_flaky", "params": {"on_error": "raise"}},
        {"name": "t_length", "alias": "gated", "gate": "t_flaky"},
    ])
    with pytest.raises(RuntimeError, match="exploded on purpose"):
        rewards["gated"].evaluate(["q", "q"], ["boom", "fine"])


# ----- async --------------------------------------------------------------------------------------

def test_async_reward_awaits_an_async_dependency(core_registry):
    exact = AsyncExact()
    brevity = AsyncBrevityIfCorrect()
    brevity.bind("correctness", exact)
    assert brevity.evaluate(["q", "q"], ["ab", "x"], solution=["ab", "ab"]).values == [0.5, 0.0]
    assert exact.evaluate(["q", "q"], ["ab", "x"], solution=["ab", "ab"]).values == [1.0, 0.0]
    assert exact.batches == 1


class SyncSetInsideAsync(AsyncReward):
    """Calls a blocking composite from the background loop's own thread (a deadlock before the fix)."""

    name = "t_sync_inside_async"

    def __init__(self, rewards, *, on_error: str = "none"):
        super().__init__(on_error=on_error)
        self.rewards = rewards

    async def score_batch_async(self, batch):
        return self.rewards.weighted.evaluate_batch(batch).values


def test_blocking_on_the_background_loop_from_its_own_thread_is_an_error_not_a_hang(core_registry):
    reward = SyncSetInsideAsync(rewardhub.load(["t_async_len"]))
    result = {}
    worker = threading.Thread(target=lambda: result.update(r=reward.evaluate(["q"], ["abc"])), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "deadlocked"
    assert result["r"].values == [None]
    assert "await the async API" in result["r"].reasons[0]


# ----- input shapes -------------------------------------------------------------------------------

def test_numpy_and_tuple_columns_and_completions(core_registry):
    contains = rewardhub.get("t_contains")
    assert contains(("q", "q"), np.array(["42", "x"]), solution=np.array(["42", "42"])) == [1.0, 0.0]
    assert contains(["q"], [[{"role": "assistant", "content": "42"}]], solution=("42",)) == [1.0]
    with pytest.raises(rewardhub.RewardInputError, match="column 'solution' must be a list"):
        contains(["q", "q"], ["42", "x"], solution={"42", "x"})  # a set has no row order


def test_text_part_without_text_is_empty_not_the_word_none():
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": None}, "ok"]}]) == "ok"


def test_a_string_is_not_a_score():
    with pytest.raises(TypeError, match="got str '0.5'"):
        to_score("0.5")
    assert rewardhub.batch_reward(lambda texts: ["1"] * len(texts), name="strs")().evaluate(None, ["a"]).values == [None]


def test_numpy_bool_keeps_its_verdict():
    assert to_score(np.bool_(True)) == Score(1.0, "", True)
    assert to_score(np.float32(0.5)).value == 0.5


# ----- function rewards ---------------------------------------------------------------------------

def test_a_column_named_like_the_text_argument_does_not_break_all_columns_scorers():
    @rewardhub.sample_reward(name="t_all_columns")
    def all_columns(text, **columns):
        return float(len(columns)), ",".join(sorted(columns))

    result = all_columns().evaluate(["q"], ["a"], text=["from the dataset"], other=[1])
    assert result.values == [1.0] and result.reasons == ["other"]


def test_calling_a_factory_directly_checks_param_names(core_registry):
    with pytest.raises(ConfigError, match="unknown param"):
        rewardhub.registry.spec("t_length").factory(per_chr=0.2)


def test_factory_pickles_when_its_module_name_holds_the_plain_function():
    clone = pickle.loads(pickle.dumps(raw_length_factory()))
    assert clone(None, ["abc"]) == [3.0]


# ----- case files ---------------------------------------------------------------------------------

def _cases(tmp_path, text):
    from rewardhub.testing.cases import load_case_file

    path = tmp_path / "x.cases.yaml"
    path.write_text("reward: t_contains\ncases:\n" + text)
    return load_case_file(path)


def test_a_chat_prompt_as_long_as_the_group_is_one_prompt(core_registry, tmp_path):
    from rewardhub.testing.cases import run_case

    (case,) = _cases(tmp_path, (
        "  - prompt: [{role: system, content: s}, {role: user, content: u}]\n"
        "    completions: ['42', 'x']\n    columns: {solution: '42'}\n    expect: [1.0, 0.0]\n"
    ))
    assert case.prompts == [[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]] * 2
    assert run_case(case).passed


@pytest.mark.parametrize(("text", "message"), [
    ("  - completions: 'abc'\n    expect: 0\n", "'completions' must be a non-empty list"),
    ("  - completions: []\n    expect: []\n", "'completions' must be a non-empty list"),
    ("  - prompt: [a, b, c]\n    completions: [x, y]\n    expect: 0\n", "a list of 3 prompts for 2 completions"),
    ("  - completions: [x, y]\n    columns: {solution: [a, b, c]}\n    expect: 0\n", "column 'solution' has 3 values"),
    ("  - completion: x\n    columns: [solution]\n    expect: 0\n", "'columns' must be a mapping"),
    ("  - completion: x\n    expect: {approx: high}\n", "cannot read 'expect'"),
    ("  - completion: x\n    expect: {min: 0, approx: 1}\n", "cannot read 'expect'"),
    ("  - completion: x\n    expect: 1\n    reason: 42\n", "'reason' must be text"),
    ("  - completion: x\n    reward: t_contain\n    expect: 1\n", "case 'case 1': unknown reward 't_contain'"),
    ("  - {name: a, completion: x, expect: 1}\n  - {name: a, completion: y, expect: 1}\n", "'a' used more than once"),
])
def test_malformed_cases_are_config_errors_naming_the_case(core_registry, tmp_path, text, message):
    with pytest.raises(ConfigError) as info:
        _cases(tmp_path, text)
    assert message in str(info.value)


# ----- registry and config ------------------------------------------------------------------------

class UnresolvableHints(rewardhub.Reward):
    """One annotation names a type only a type checker sees: get_type_hints() fails for all params."""

    name = "t_unresolvable_hints"

    def __init__(self, *, scale: float = 1.0, helper: "NotImportedHere | None" = None, on_error: str = "none"):  # noqa: F821
        super().__init__(on_error=on_error)
        self.scale = scale

    def score_sample(self, text, row):
        return self.scale * len(text)


def test_params_are_type_checked_even_when_another_annotation_does_not_resolve(clean_registry):
    clean_registry.add(UnresolvableHints)
    with pytest.raises(ConfigError, match="param 'scale': expected float or int, got str 'x'"):
        rewardhub.get("t_unresolvable_hints", scale="x")
    assert rewardhub.get("t_unresolvable_hints", scale=2).evaluate(None, ["ab"]).values == [4.0]


def test_isolation_params_are_type_checked(core_registry):
    with pytest.raises(ConfigError, match="reward 't_isolated', param 'timeout': expected float or int, got str '5s'"):
        rewardhub.load([{"name": "t_isolated", "params": {"timeout": "5s"}}])
    with pytest.raises(ConfigError, match="param 'workers': expected int or null, got float"):
        rewardhub.get("t_isolated", workers=2.5)


def test_yaml_exponents_without_a_dot_get_a_hint(core_registry, tmp_path):
    path = tmp_path / "rewards.yaml"
    path.write_text("rewards:\n  - name: t_length\n    weight: 1e-3\n")
    with pytest.raises(ConfigError, match="'weight' must be a finite number, got '1e-3' .*write 1.0e-3"):
        rewardhub.load(str(path))
    path.write_text("rewards:\n  - name: t_length\n    params: {per_char: 1e-3}\n")
    with pytest.raises(ConfigError, match="got str '1e-3' .*write 1.0e-3"):
        rewardhub.load(str(path))


def test_a_tuple_config_and_a_nan_gate_threshold(core_registry):
    assert rewardhub.load(("t_length", "t_contains")).aliases == ["t_length", "t_contains"]
    with pytest.raises(ConfigError, match="gate 'threshold' must be a finite number, got nan"):
        rewardhub.load([{"name": "t_length", "gate": {"reward": "t_contains", "threshold": float("nan")}}])


def test_a_subclass_that_skips_super_init_is_told_so():
    class Forgetful(rewardhub.Reward):
        name = "t_forgetful"

        def __init__(self, *, scale: float = 1.0):
            self.scale = scale

        def score_sample(self, text, row):
            return self.scale

    with pytest.raises(AttributeError, match=r"Forgetful has no .*must call super\(\).__init__\(on_error=on_error\)"):
        Forgetful()(None, ["a"])
    assert not hasattr(Forgetful(), "totals")


def test_rows_without_prompts_are_chunked_at_batch_size(core_registry):
    rewards = rewardhub.load(["t_length"])
    sizes = []
    original = rewards._score_chunk
    rewards._score_chunk = lambda chunk: sizes.append(len(chunk)) or original(chunk)
    out = list(rewards.iter_scores(({"completion": "x"} for _ in range(5)), batch_size=2))
    assert len(out) == 5 and sizes == [2, 2, 1]  # was one chunk of everything: no streaming, all in memory


def test_odd_message_contents():
    with pytest.raises(ValueError, match="message content is not text: got bytes"):
        completion_text([{"role": "assistant", "content": b"raw"}])
    assert to_score((1.0, None)) == Score(1.0, "")


def test_a_case_file_with_both_config_and_reward_is_rejected(core_registry, tmp_path):
    from rewardhub.testing.cases import load_case_file

    (tmp_path / "cfg.yaml").write_text("rewards: [t_length]\n")
    path = tmp_path / "x.cases.yaml"
    path.write_text("config: cfg.yaml\nreward: t_contains\ncases:\n  - {completion: x, expect: 0.1}\n")
    with pytest.raises(ConfigError, match="give either 'config'"):
        load_case_file(path)


@rewardhub.sample_reward(name="t_step_schedule")
def step_schedule(text, trainer_state):
    return float(trainer_state.global_step)


def test_memo_does_not_serve_the_last_steps_result_at_the_next_step():
    from types import SimpleNamespace

    scheduled = step_schedule().share()
    state = SimpleNamespace(global_step=1)  # TRL passes the same TrainerState object at every step
    assert scheduled(["q"], ["a"], trainer_state=state) == [1.0]
    state.global_step = 2
    assert scheduled(["q"], ["a"], trainer_state=state) == [2.0]


def test_a_reward_without_a_scorer_fails_at_construction_not_with_none_at_every_step():
    class NoScorer(rewardhub.Reward):
        name = "t_no_scorer"

    class SyncScorerOnAsync(AsyncReward):
        name = "t_sync_on_async"

        def score_sample(self, text, row):  # the sync hook is never called for an AsyncReward
            return 1.0

    for cls in (NoScorer, SyncScorerOnAsync):
        with pytest.raises(TypeError, match="must override score_sample or score_batch"):
            cls()


def test_an_empty_config_file_and_a_folder_are_named_as_such(tmp_path):
    empty = tmp_path / "rewards.yaml"
    empty.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match="is empty: it needs a 'rewards' list"):
        rewardhub.load(empty)
    with pytest.raises(ConfigError, match="is a folder"):
        rewardhub.load(tmp_path)
