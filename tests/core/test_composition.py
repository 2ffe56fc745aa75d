"""Composition over a long run: the aggregate (sum / normalize_then_sum), weight schedules, routing by task."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

import rewardhub
from rewardhub import Batch, ConfigError
from rewardhub._set.aggregate import EPS, normalized_in_groups
from rewardhub._set.routing import RoutingError
from rewardhub._set.schedule import Schedule

LENGTHS = {"name": "t_batch_len", "alias": "chars", "weight": 1.0}
FLAKY = {"name": "t_flaky", "alias": "flaky", "weight": 0.5}


def state(step: int) -> SimpleNamespace:
    return SimpleNamespace(global_step=step)


# ----- config errors name the entry and the key ---------------------------------------------------------------
@pytest.mark.parametrize("config, message", [
    ({"aggregate": "normalise_then_sum", "rewards": [LENGTHS]},
     "'aggregate' must be one of sum, normalize_then_sum, got 'normalise_then_sum' (did you mean 'normalize_then_sum'?)"),
    ({"rewards": [{**LENGTHS, "weight": {"schedule": "linaer", "start": 1, "end": 0, "steps": 10}}]},
     "entry #1 (t_batch_len): weight 'schedule' is 'linaer' (did you mean 'linear'?)"),
    ({"rewards": [{**LENGTHS, "weight": {"start": 1, "end": 0, "steps": 10}}]},
     "entry #1 (t_batch_len): weight 'schedule' is missing"),
    ({"rewards": [{**LENGTHS, "weight": {"schedule": "cosine", "start": 1, "end": 0}}]},
     "entry #1 (t_batch_len): weight schedule 'cosine' needs 'steps'"),
    ({"rewards": [{**LENGTHS, "weight": {"schedule": "linear", "start": 1, "end": 0, "steps": 0}}]},
     "entry #1 (t_batch_len): weight 'steps' must be a positive whole number of steps, got 0"),
    ({"rewards": [{**LENGTHS, "weight": {"schedule": "step", "start": 1, "end": "0", "steps": 5}}]},
     "entry #1 (t_batch_len): weight 'end' must be a finite number, got '0'"),
    ({"rewards": [{**LENGTHS, "weight": {"schedule": "linear", "start": 1, "end": 0, "steps": 5, "warmpu": 2}}]},
     "entry #1 (t_batch_len): weight: unknown key(s) 'warmpu' (did you mean 'warmup'?)"),
    ({"rewards": [{**LENGTHS, "weight": {"schedule": "constant", "start": 1, "end": 0}}]},
     "weight schedule 'constant' holds 'start' and takes no 'end'"),
    ({"rewards": [{**LENGTHS, "when": {"column": "data_source", "inn": ["math"]}}]},
     "entry #1 (t_batch_len): when: unknown key(s) 'inn' (did you mean 'in'?)"),
    ({"rewards": [{**LENGTHS, "when": {"in": ["math"]}}]},
     "entry #1 (t_batch_len): when needs 'column'"),
    ({"rewards": [{**LENGTHS, "when": {"column": "task", "in": ["a"], "not_in": ["b"]}}]},
     "when needs exactly one of 'in' or 'not_in'"),
    ({"rewards": [{**LENGTHS, "when": "math"}]}, "entry #1 (t_batch_len): 'when' must be a mapping"),
    ({"rewards": [{**LENGTHS, "role": "judge"}]}, "entry #1 (t_batch_len): 'role' must be one of"),
    ({"rewards": [LENGTHS], "monitor": {"windw": 8}}, "monitor: unknown key(s) 'windw' (did you mean 'window'?)"),
    ({"rewards": [LENGTHS], "monitor": {"disable": ["lenght"]}},
     "monitor: 'disable' names unknown signal 'lenght' (did you mean 'length'?)"),
    ({"rewards": [LENGTHS], "montior": {}}, "unknown top-level key(s) 'montior' (did you mean 'monitor'?)"),
])
def test_config_errors_name_the_entry_and_the_key(core_registry, config, message):
    with pytest.raises(ConfigError) as info:
        rewardhub.load(config)
    assert message in str(info.value)


# ----- schedules -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("schedule, expected", [
    (Schedule("linear", 1.0, 0.0, 10), {0: 1.0, 5: 0.5, 10: 0.0, 50: 0.0}),
    (Schedule("cosine", 1.0, 0.0, 10), {0: 1.0, 5: 0.5, 10: 0.0, 2.5: (1 + math.cos(math.pi / 4)) / 2}),
    (Schedule("step", 0.0, 2.0, 4), {0: 0.0, 3: 0.0, 4: 2.0, 100: 2.0}),
    (Schedule("constant", 0.3, 0.3), {0: 0.3, 1000: 0.3}),
    (Schedule("linear", 1.0, 0.0, 10, warmup=4), {0: 0.0, 2: 0.5, 4: 1.0, 9: 0.5, 14: 0.0}),
    (Schedule("linear", 0.0, 1.0, 4), {-3: 0.0, 1: 0.25}),
])
def test_schedule_values(schedule, expected):
    for step, value in expected.items():
        assert schedule.at(step) == pytest.approx(value), (schedule, step)


SCHEDULED = {"rewards": [
    {**LENGTHS, "weight": {"schedule": "linear", "start": 1.0, "end": 0.0, "steps": 4}},
    {"name": "t_length", "alias": "fixed", "weight": 0.5, "params": {"per_char": 0.1}},
]}


def test_trl_reward_functions_apply_the_weight_at_the_trainers_step_and_log_it(core_registry):
    rewards = rewardhub.load(SCHEDULED)
    assert rewards.reward_weights == [1.0, 0.5]  # TRL's fixed weight for the scheduled entry is 1.0
    chars, fixed = rewards.reward_funcs
    for step, weight in [(0, 1.0), (1, 0.75), (3, 0.25), (9, 0.0)]:
        logged: dict[str, float] = {}
        values = chars(["p", "p"], ["abcd", "ab"], trainer_state=state(step), log_metric=logged.__setitem__)
        assert values == [pytest.approx(4 * weight), pytest.approx(2 * weight)]
        assert logged["chars/weight"] == pytest.approx(weight)
        assert logged["chars/mean"] == 3.0  # the unscaled mean: TRL's rewards/chars/mean is the scaled one
        assert fixed(["p"], ["abcd"], trainer_state=state(step)) == [pytest.approx(0.4)]


def test_the_weighted_callable_follows_the_schedule(core_registry):
    weighted = rewardhub.load(SCHEDULED).weighted
    logged: dict[str, float] = {}
    totals = weighted(["p"], ["abcdefghij"], trainer_state=state(2), log_metric=logged.__setitem__)
    assert totals == [pytest.approx(10 * 0.5 + 0.5 * 1.0)]
    assert logged["chars/weight"] == 0.5


def test_a_schedule_without_a_step_is_an_error_naming_the_entry(core_registry):
    rewards = rewardhub.load(SCHEDULED)
    with pytest.raises(ConfigError, match=r"reward entry 'chars' \(t_batch_len\): 'weight' follows a schedule "
                                          r"\(linear 1 -> 0 over 4 steps\).*carries no step"):
        rewards.evaluate(["p"], ["abc"])
    assert rewards.evaluate_batch(Batch(["p"], ["abc"], {}), step=2).totals == [pytest.approx(3 * 0.5 + 0.5 * 0.3)]


def test_scored_files_read_each_rows_step(core_registry):
    rows = [{"prompt": "p", "completion": "abcd", "step": 0}, {"prompt": "q", "completion": "abcd", "step": 2}]
    scored = rewardhub.load(SCHEDULED).score(rows)
    assert [r["reward"] for r in scored] == [pytest.approx(4 + 0.5 * 0.4), pytest.approx(2 + 0.5 * 0.4)]
    with pytest.raises(rewardhub.RewardInputError, match="row 0: column 'step' .* must be a number, got str"):
        rewardhub.load(SCHEDULED).score([{"prompt": "p", "completion": "a", "step": "first"}])


# ----- normalize_then_sum ----------------------------------------------------------------------------------------
def reference_normalize_then_sum(components, weights, groups):
    """The definition written out: per reward and group, an abstention counted at the group's floor (its lowest
    value, at most 0.0), then each value normalised over the group's values."""
    totals = []
    normalised = {}
    for alias, values in components.items():
        out = [None] * len(values)
        for group in groups:
            present = [values[i] for i in group if values[i] is not None]
            floor = min(0.0, *present) if present else None
            filled = [floor] * (len(group) - len(present)) + present if present else []
            mean = sum(filled) / len(filled) if filled else 0.0
            std = (sum((v - mean) ** 2 for v in filled) / (len(filled) - 1)) ** 0.5 if len(filled) > 1 else 0.0
            for i in group:
                if present:
                    value = floor if values[i] is None else values[i]
                    out[i] = 0.0 if len(filled) < 2 or std == 0 else (value - mean) / (std + EPS)
        normalised[alias] = out
    for i in range(len(next(iter(components.values())))):
        parts = [weights[a] * normalised[a][i] for a in components if normalised[a][i] is not None]
        totals.append(sum(parts) if parts else None)
    return totals


def test_normalize_then_sum_normalises_each_reward_within_its_prompt_group(core_registry):
    rewards = rewardhub.load({"aggregate": "normalize_then_sum", "rewards": [LENGTHS, FLAKY]})
    prompts = ["a"] * 4 + ["b"] * 4 + ["c"]
    completions = ["x" * 100, "x" * 300, "skip" + "x" * 50, "xx", "x" * 7, "skip", "skip me", "x" * 9, "alone"]
    result = rewards.evaluate(prompts, completions)
    components = result.component_values()
    assert components["flaky"][2] is None and components["flaky"][5] is None  # counted at their group's floor
    groups = [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    expected = reference_normalize_then_sum(components, {"chars": 1.0, "flaky": 0.5}, groups)
    assert result.totals == pytest.approx(expected)
    assert all(t is not None and math.isfinite(t) for t in result.totals)
    assert result.totals[8] == 0.0  # a group of one has no spread: it contributes nothing, never NaN
    # the wide-range reward no longer drowns the other: both are on the same scale in each group
    assert max(abs(v) for v in normalized_in_groups(components["chars"], groups) if v is not None) < 2.0


def test_normalize_then_sum_matches_trls_code_where_both_are_defined(core_registry):
    """TRL's normalize_then_sum (GRPOTrainer._generate_and_score_completions, TRL 1.16): per function and group
    nanmean / nanstd (Bessel-corrected) with eps 1e-4, then nansum of weight * normalised. TRL then normalises
    the sum again over the batch to make advantages; rewardhub hands the sum to the trainer, which does that."""
    import torch
    from trl.trainer.utils import nanstd

    rewards = rewardhub.load({"aggregate": "normalize_then_sum", "rewards": [LENGTHS, FLAKY]})
    prompts, completions = ["a"] * 4 + ["b"] * 4 + ["c"] * 4, ["x" * 100, "skip x", "x" * 3, "xxxxx", "x" * 7, "skip",
                                                               "boom", "x" * 9, "boom", "boom", "boom", "boom"]
    result = rewards.evaluate(prompts, completions)
    handed = [func(prompts, completions) for func in rewards.reward_funcs]  # what TRL receives from each function
    per_func = torch.tensor([[math.nan if v is None else v for v in row] for row in zip(*handed, strict=True)], dtype=torch.float64)
    grouped = per_func.view(-1, 4, 2)
    reward_k = ((grouped - torch.nanmean(grouped, dim=1, keepdim=True)) / (nanstd(grouped, dim=1, keepdim=True) + 1e-4))
    trl_sums = (reward_k.view(-1, 2) * torch.tensor([1.0, 0.5], dtype=torch.float64)).nansum(dim=1)
    unscorable = torch.isnan(per_func).all(dim=1)  # TRL marks these NaN (advantage 0); rewardhub gives None
    assert unscorable.tolist() == [t is None for t in result.totals] == [False] * 8 + [True] * 4
    assert [t for t in result.totals if t is not None] == pytest.approx(trl_sums[~unscorable].tolist())
    assert result.totals[6] <= min(result.totals[4:8])  # 'boom' erred on both: never above its group's worst


def test_normalize_then_sum_groups_need_assembly_for_one_sample_callers(core_registry):
    from rewardhub.trainers.groups import CallScorer

    rewards = rewardhub.load({"aggregate": "normalize_then_sum", "rewards": [LENGTHS, FLAKY]})
    with pytest.raises(ConfigError, match="aggregate normalize_then_sum normalises each reward within its prompt "
                                          "group.*pass --group-size"):
        CallScorer(rewards)
    scorer = CallScorer(rewards, group_size=4)
    completions = ["x" * 100, "x" * 300, "skip" + "x" * 50, "xx"]
    try:  # one call per sample, each from its own thread, as verl's reward workers send them
        with ThreadPoolExecutor(4) as pool:
            one_at_a_time = list(pool.map(lambda c: scorer.score(Batch(["a"], [c], {})), completions))
    finally:
        scorer.close()
    whole = rewards.evaluate(["a"] * 4, completions)
    assert [r.totals[0] for r in one_at_a_time] == pytest.approx(whole.totals)
    assert len({round(t, 6) for t in whole.totals}) == 4


def test_sum_is_the_default_and_counts_an_abstention_at_its_groups_floor(core_registry):
    rewards = rewardhub.load([LENGTHS, FLAKY])
    assert rewards.aggregate == "sum"
    # flaky abstains on "skip": its group's floor is 0.0 (nothing lower scored, and never above a failure's 0.0)
    assert rewards.evaluate(["p", "p"], ["abc", "skip"]).totals == [3.0 + 0.5, 4.0]
    # another prompt's values are not its group: a lone abstention adds nothing (TRL's nansum)
    assert rewards.evaluate(["p", "q"], ["abc", "skip"]).totals == [3.0 + 0.5, 4.0]


# ----- routing --------------------------------------------------------------------------------------------------
ROUTED = {"rewards": [
    {"name": "t_flaky", "alias": "flaky", "when": {"column": "data_source", "in": ["math", "gsm8k"]}},
    {"name": "t_length", "alias": "chat", "params": {"per_char": 0.1}, "when": {"column": "data_source",
                                                                                 "not_in": ["math", "gsm8k"]}},
]}


def test_rows_outside_a_route_abstain_without_being_scored(core_registry):
    rewards = rewardhub.load(ROUTED)
    sources = ["math", "chat", "gsm8k", "chat"]
    result = rewards.evaluate(["p"] * 4, ["ok", "boom", "ok", "abcdefghijklmn"], data_source=sources)
    flaky, chat = result["flaky"], result["chat"]
    assert flaky.values == [1.0, None, 1.0, None]
    assert flaky.outcomes == ["ok", "abstain", "ok", "abstain"]  # "boom" would have raised: it was never scored
    assert "data_source='chat' is not in the entry's 'when'" in flaky.reasons[1]
    assert chat.values == [None, 0.4, None, 1.0]
    assert result.totals == [1.0, 0.4, 1.0, 1.0]
    trl_values = rewards.reward_funcs[0](["p"] * 2, ["ok", "x"], data_source=["math", "chat"])
    assert trl_values == [1.0, None]  # TRL leaves the reward out for that row


def test_a_route_on_a_missing_column_names_the_entry_and_the_key(core_registry):
    rewards = rewardhub.load(ROUTED)
    with pytest.raises(RoutingError, match=r"reward entry 'flaky' \(t_flaky\): when.column 'data_source' is not a "
                                           r"column of the batch \(it has: solution\)"):
        rewards.evaluate(["p"], ["ok"], solution=["1"])


def test_routing_keeps_group_rewards_and_gates_working(core_registry):
    rewards = rewardhub.load({"rewards": [
        {"name": "t_contains"},
        {"name": "t_length", "alias": "gated", "gate": "t_contains", "when": {"column": "task", "in": ["a"]}},
    ]})
    result = rewards.evaluate(["p"] * 3, ["42 yes", "41", "42"], solution=["42"] * 3, task=["a", "a", "b"])
    assert result["gated"].values == [pytest.approx(0.6), 0.0, None]


def test_async_rewards_are_routed_too(core_registry):
    rewards = rewardhub.load({"rewards": [{"name": "t_async_len", "when": {"column": "task", "in": ["a"]}}]})
    assert rewards.evaluate(["p", "p"], ["abc", "abcdef"], task=["a", "b"]).totals == [3.0, None]


def test_normalize_then_sum_by_caller_keys_normalises_within_each_key(core_registry):
    """verl's rows carry no prompt: the groups are the caller's keys (its ``uid``), also for the aggregate."""
    from rewardhub import evaluate_by_group

    rewards = rewardhub.load({"aggregate": "normalize_then_sum", "rewards": [LENGTHS, FLAKY]})
    completions = ["x" * 100, "x" * 3, "skip x", "xxxxx", "x" * 7, "x" * 9]
    keys = ["u1", "u2", "u1", "u2", "u1", "u2"]
    result = evaluate_by_group(rewards, Batch([None] * 6, completions, {}), keys)
    groups = [[0, 2, 4], [1, 3, 5]]
    expected = reference_normalize_then_sum(result.component_values(), {"chars": 1.0, "flaky": 0.5}, groups)
    assert result.totals == pytest.approx(expected)
    assert all(t is not None and math.isfinite(t) for t in result.totals)
