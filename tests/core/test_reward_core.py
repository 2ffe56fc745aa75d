"""The reward wrapper: shapes, chat/plain text, error policy, reasons to TRL, contract errors, pickling."""

import asyncio
import pickle

import pytest

import rewardhub
from rewardhub import ConfigError, RewardContractError, RewardInputError


def test_plain_and_chat_completions_score_alike(core_registry):
    reward = rewardhub.get("t_contains")
    plain = reward(prompts=["q", "q"], completions=["it is 42", "it is 41"], solution=["42", "42"])
    chat = reward(
        prompts=[[{"role": "user", "content": "q"}]] * 2,
        completions=[[{"role": "assistant", "content": "it is 42"}], [{"role": "assistant", "content": "it is 41"}]],
        solution=["42", "42"],
    )
    assert plain == chat == [1.0, 0.0]


def test_content_parts_and_multiple_assistant_messages(core_registry):
    reward = rewardhub.get("t_contains")
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "value "}, {"type": "text", "text": "42"}]}]
    turns = [{"role": "assistant", "content": "first"}, {"role": "tool", "content": "42"},
             {"role": "assistant", "content": "so 42"}]
    assert reward(["q", "q"], [parts, turns], solution=["42", "42"]) == [1.0, 1.0]


def test_params_reach_the_scorer(core_registry):
    strict = rewardhub.get("t_contains")
    loose = rewardhub.get("t_contains", ignore_case=True)
    assert strict(["q"], ["ANSWER"], solution=["answer"]) == [0.0]
    assert loose(["q"], ["ANSWER"], solution=["answer"]) == [1.0]


def test_reasons_and_counters_go_to_trainer_hooks(core_registry):
    extra, metrics = {}, {}
    reward = rewardhub.get("t_flaky")
    values = reward(
        prompts=["q"] * 4,
        completions=["fine", "boom", "skip", 17],
        log_extra=lambda column, vals: extra.setdefault(column, []).extend(vals),
        log_metric=lambda name, value: metrics.setdefault(name, []).append(value),
    )
    assert values == [1.0, None, None, None]
    reasons = extra["t_flaky/reason"]
    assert reasons[0] == ""
    assert reasons[1].startswith("error: RuntimeError: exploded on purpose")
    assert reasons[2] == "not applicable"
    assert "not text" in reasons[3]
    assert metrics["t_flaky/errors"] == [1.0]
    assert metrics["t_flaky/abstained"] == [0.75]


def test_works_without_trainer_hooks(core_registry):
    assert rewardhub.get("t_length", per_char=0.5)(None, ["ab", ""]) == [1.0, 0.0]


@pytest.mark.parametrize(("policy", "expected"), [("none", None), ("zero", 0.0)])
def test_error_policy(core_registry, policy, expected):
    reward = rewardhub.get("t_flaky", on_error=policy)
    assert reward(["q", "q"], ["ok", "boom"]) == [1.0, expected]
    assert reward.totals["errors"] == 1


def test_error_policy_raise(core_registry):
    with pytest.raises(RuntimeError, match="exploded"):
        rewardhub.get("t_flaky", on_error="raise")(["q"], ["boom"])


def test_bad_policy_is_a_config_error(core_registry):
    with pytest.raises(rewardhub.ConfigError, match="on_error must be one of"):
        rewardhub.get("t_flaky", on_error="ignore")


def test_batch_scorer_failure_loses_only_the_bad_row(core_registry):
    reward = rewardhub.get("t_batch_len", scale=2.0)
    values = reward(["q"] * 3, ["ab", "boom", "abcd"])
    assert values == [4.0, None, 8.0]
    assert reward.evaluate(["q"] * 3, ["ab", "boom", "abcd"]).reasons[1].startswith("error: ValueError")


def test_wrong_length_names_the_reward(core_registry):
    with pytest.raises(RewardContractError, match="'t_wrong_length' returned 3 values for a batch of 2"):
        rewardhub.get("t_wrong_length")(["q", "q"], ["a", "b"])


def test_missing_column_abstains_with_reason_even_under_zero_policy(core_registry):
    result = rewardhub.get("t_contains", on_error="zero").evaluate(["q"], ["42"])
    assert result.values == [None]
    assert "needs column 'solution'" in result.reasons[0]


def test_mismatched_column_length_is_a_clear_error(core_registry):
    with pytest.raises(RewardInputError, match="column 'solution' must be a list with one value per completion"):
        rewardhub.get("t_contains")(["q", "q"], ["a", "b"], solution=["x"])


def test_completions_must_be_a_list(core_registry):
    with pytest.raises(RewardInputError, match="takes a list of completions"):
        rewardhub.get("t_length")(["q"], "just a string")


def test_one_megabyte_completion_and_empty_strings(core_registry):
    big = "x" * (1 << 20)
    assert rewardhub.get("t_length", per_char=1e-6)(None, [big, ""]) == [1.0, 0.0]


def test_nan_becomes_none_and_inf_is_an_error(clean_registry):
    @rewardhub.sample_reward(name="t_nonfinite")
    def nonfinite(text):
        return float(text)

    clean_registry.add(nonfinite, source="tests")
    result = rewardhub.get("t_nonfinite").evaluate(None, ["nan", "inf", "2"])
    assert result.values == [None, None, 2.0]
    assert result.reasons[0] == "NaN score"
    assert "finite" in result.reasons[1]


def test_async_reward_is_awaitable_and_has_sync_evaluate(core_registry):
    reward = rewardhub.get("t_async_len", delay=0.01)
    assert asyncio.iscoroutinefunction(type(reward).__call__)
    values = asyncio.run(reward(prompts=["q", "q"], completions=["abc", 5]))
    assert values == [3.0, None]
    assert reward.evaluate(["q", "q"], ["abc", "de"]).values == [3.0, 2.0]


IN_FLIGHT = {"now": 0, "peak": 0}


@rewardhub.sample_reward(name="t_in_flight")
async def in_flight(text):
    IN_FLIGHT["now"] += 1
    IN_FLIGHT["peak"] = max(IN_FLIGHT["peak"], IN_FLIGHT["now"])
    await asyncio.sleep(0.01)
    IN_FLIGHT["now"] -= 1
    return 1.0


def test_async_samples_run_concurrently():
    IN_FLIGHT.update(now=0, peak=0)
    assert in_flight().evaluate(None, ["a"] * 20).values == [1.0] * 20
    assert IN_FLIGHT["peak"] == 20  # every sample was waiting at once (one at a time would be 1)


@pytest.mark.parametrize("name", ["t_contains", "t_batch_len", "t_async_len", "t_counting_exact"])
def test_rewards_pickle_and_keep_their_name(core_registry, name):
    reward = rewardhub.get(name)
    reward.__name__ = "renamed"
    clone = pickle.loads(pickle.dumps(reward))
    assert clone.__name__ == "renamed"
    assert clone.evaluate(["q"], ["42"], solution=["42"]).values == reward.evaluate(["q"], ["42"], solution=["42"]).values


def test_trl_sees_async_callables_and_names():
    import core_rewards
    from trl.trainer.utils import get_callable_name, is_async_callable

    assert is_async_callable(core_rewards.t_async_len())
    assert not is_async_callable(core_rewards.t_contains())
    assert get_callable_name(core_rewards.t_contains()) == "t_contains"


def test_subclass_reward_with_verdicts(core_registry):
    reward = rewardhub.get("t_counting_exact")
    result = reward.evaluate(["q", "q"], ["a", "b"], solution=["a", "a"])
    assert result.values == [1.0, 0.0]
    assert result.verdicts == [True, False]


def test_async_batch_scorer_failure_loses_only_the_bad_row(core_registry):
    result = rewardhub.get("t_async_batch").evaluate(["q"] * 3, ["ab", "boom", "abcd"])
    assert result.values == [2.0, None, 4.0]
    assert result.reasons[1] == "error: ValueError: bad row in async batch"


def _positive_scale(*, scale: float) -> None:
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")


@rewardhub.sample_reward(name="t_checked", check=_positive_scale)
def checked(text, *, scale: float = 1.0):
    return scale * len(text)


def test_a_sample_reward_check_runs_at_construction_with_defaults_filled_in():
    assert checked()(None, ["ab"]) == [2.0]
    assert checked(scale=3)(None, ["ab"]) == [6.0]
    with pytest.raises(ConfigError, match=r"reward 't_checked': scale must be > 0, got -1"):
        checked(scale=-1)
    clone = pickle.loads(pickle.dumps(checked))
    with pytest.raises(ConfigError, match="scale must be > 0"):
        clone(scale=0)
