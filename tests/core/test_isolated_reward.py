"""``sample_reward(isolated=True)``: samples run in worker processes killed at the deadline."""

import pytest
from responsive import beats_during

import rewardhub


def test_a_runaway_sample_times_out_and_the_others_are_scored(core_registry):
    reward = rewardhub.get("t_isolated", timeout=1.0, bonus=0.5)
    result, beats = beats_during(lambda: reward.evaluate(["q"] * 4, ["42", "spin", "boom", "41"], solution=["42"] * 4))
    assert result.values == [1.5, None, None, 0.5] and result.outcomes[1] == "timeout"
    assert result.reasons[1] == "timeout after 1 s"
    assert result.reasons[2].startswith("error: IsolatedScorerError") and "exploded in a worker" in result.reasons[2]
    assert result.reasons[0] == "compared in a worker"
    assert beats >= 1  # the calling process kept running while the worker spun


def test_isolation_params_are_listed_and_checked(core_registry):
    spec = rewardhub.registry.spec("t_isolated")
    assert {"timeout", "timeout_score", "workers", "bonus", "on_error"} <= set(spec.params)
    with pytest.raises(rewardhub.ConfigError, match="timeout must be a positive number"):
        rewardhub.get("t_isolated", timeout=0)
    assert rewardhub.get("t_isolated", timeout=1.0, timeout_score=0.0).evaluate(
        ["q"], ["spin"], solution=["x"]).values == [0.0]


def test_missing_column_abstains_without_reaching_a_worker(core_registry):
    result = rewardhub.get("t_isolated").evaluate(["q"], ["42"])
    assert result.values == [None] and "needs column 'solution'" in result.reasons[0]


def test_isolated_only_for_sync_sample_scorers():
    with pytest.raises(TypeError, match="isolated=True is for synchronous per-sample scorers only"):
        rewardhub._decorators.FunctionRewardFactory(lambda texts: [], name="x", description="", batched=True, isolated=True)
