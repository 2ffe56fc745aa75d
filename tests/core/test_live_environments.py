"""TRL's ``environments`` is one live environment per rollout: every row must be scored against its own.

The wrong-gradient bug of issue 23: ``environments`` was batch-level, so a per-sample scorer got the
whole list, and rescoring row by row after a batch failure scored every row against environment 0.
Each place that splits a batch (subset, singles, groups, gates, shared verdicts, deadlines) is
checked here with environments whose state differs per row.
"""

from __future__ import annotations

import pickle

import pytest

import rewardhub
from rewardhub import Batch, ConfigError, Score
from rewardhub._reward import Reward


class Counter:
    """An environment whose state is the number it holds (what a tool call would have set)."""

    def __init__(self, value: int):
        self.value = value


def trl_batch_call(reward, values: list[int], texts: list[str] | None = None, **extra):
    """Call ``reward`` the way TRL's ``_calculate_rewards`` does: ``environments`` aligned with completions."""
    texts = texts or [str(v) for v in values]
    return reward(prompts=["p"] * len(texts), completions=texts, completion_ids=None,
                  environments=[Counter(v) for v in values], trainer_state=None, **extra)


@rewardhub.batch_reward(name="env_batch_equals")
def env_batch_equals(texts, environments, *, fail_on: str = "boom"):
    """1.0 where the text names the environment's value; raises when a text is ``fail_on``."""
    if fail_on in texts:
        raise ValueError("a row this scorer cannot handle")
    return [float(text == str(env.value)) for text, env in zip(texts, environments, strict=True)]


@rewardhub.sample_reward(name="env_sample_equals")
def env_sample_equals(text, environments):
    return float(text == str(environments.value))


@rewardhub.sample_reward(name="env_sample_env")
def env_sample_env(text, env):
    return float(text == str(env.value))


def test_batch_rescored_row_by_row_reads_each_rows_own_environment():
    """The issue's example: a batch reward that raises on one row; the others keep their true scores."""
    reward = env_batch_equals()
    assert trl_batch_call(reward, [1, 2, 3, 4], ["1", "2", "boom", "4"]) == [1.0, 1.0, None, 1.0]


def test_per_sample_scorer_gets_its_own_environment_by_either_name():
    assert trl_batch_call(env_sample_equals(), [5, 6, 7], ["5", "6", "0"]) == [1.0, 1.0, 0.0]
    assert trl_batch_call(env_sample_env(), [5, 6, 7], ["5", "0", "7"]) == [1.0, 0.0, 1.0]


def test_subset_and_singles_carry_live_objects_with_their_rows():
    envs = [Counter(i) for i in range(4)]
    batch = Batch(["p"] * 4, ["0", "1", "2", "3"], {"solution": list("abcd")}, live={"environments": envs})
    part = batch.subset([3, 1])
    assert part.live["environments"] == [envs[3], envs[1]] and part.columns["solution"] == ["d", "b"]
    assert [single.row(0)["environments"] for single in batch.singles()] == envs
    assert "environments" not in dict(batch.row(0))  # never among the columns a **columns scorer receives


def test_live_objects_given_as_columns_are_kept_apart():
    envs = [Counter(1), Counter(2)]
    batch = Batch.from_rows([{"prompt": "p", "completion": "1", "env": envs[0]},
                             {"prompt": "p", "completion": "2", "env": envs[1]}])
    assert "env" not in batch.columns and batch.live["env"] == envs


def test_groups_of_a_prompt_read_their_own_environments():
    class GroupMax(Reward):
        """1.0 for the row whose environment holds its group's largest value (needs whole groups)."""

        name = "group_max"

        def score_batch(self, batch):
            scores = [0.0] * len(batch)
            for group in batch.groups():
                best = max(group, key=lambda i: batch.row(i)["environments"].value)
                scores[best] = 1.0
            return scores

    out = GroupMax()(prompts=["a", "b", "a", "b"], completions=["x"] * 4,
                     environments=[Counter(1), Counter(9), Counter(5), Counter(2)])
    assert out == [0.0, 1.0, 1.0, 0.0]


def test_gate_and_gated_reward_see_the_same_rows_environments(clean_registry):
    clean_registry.add(env_sample_env, source="tests")
    clean_registry.add(env_batch_equals, source="tests")
    rewards = rewardhub.load({"rewards": [
        {"name": "env_sample_env", "alias": "inner"},
        {"name": "env_batch_equals", "alias": "gated", "gate": {"reward": "inner", "threshold": 1.0}},
    ]})
    gated = rewards["gated"]
    assert trl_batch_call(gated, [1, 2, 3], ["1", "0", "3"]) == [1.0, 0.0, 1.0]
    assert trl_batch_call(gated, [1, 2, 3], ["1", "2", "0"]) == [1.0, 1.0, 0.0]


def test_shared_verdicts_never_serve_an_environment_whose_state_changed():
    """TRL resets the same environment instances every step: same texts, new state, new verdict."""
    reward = env_sample_env().share()
    envs = [Counter(1), Counter(2)]

    def call():
        return reward.evaluate(["p", "p"], ["1", "2"], env=envs).values

    assert call() == [1.0, 1.0]
    envs[1].value = 7  # the next step: the same object, reset, and a different outcome
    assert call() == [1.0, 0.0]
    envs[1].value = 2
    assert call() == [1.0, 1.0]
    # and an equal-looking environment that is another object is another key
    other = [Counter(1), Counter(2)]
    first = reward.evaluate(["p", "p"], ["1", "2"], env=other)
    assert first.values == [1.0, 1.0]


def test_a_memo_key_holds_no_live_object():
    from rewardhub._set.sharing import batch_key

    env = Counter(3)
    key = batch_key(Batch(["p"], ["3"], {}, live={"env": [env]}))

    def walk(value):
        if value is env:
            raise AssertionError("the memo key holds the environment itself")
        if isinstance(value, tuple):
            for item in value:
                walk(item)

    walk(key)


def test_an_environment_whose_state_cannot_be_read_is_never_served_from_memory():
    class Broken:
        calls = 0

        def state_dict(self):
            raise RuntimeError("not now")

    @rewardhub.sample_reward(name="count_calls")
    def count_calls(text, env):
        env.calls += 1
        return float(env.calls)

    reward = count_calls().share()
    env = Broken()
    assert reward.evaluate(["p"], ["x"], env=[env]).values == [1.0]
    assert reward.evaluate(["p"], ["x"], env=[env]).values == [2.0]


def test_a_pickled_batch_leaves_its_environments_behind_and_keeps_their_state():
    batch = Batch(["p", "p"], ["1", "2"], {}, live={"environments": [Counter(1), object()]})
    copy = pickle.loads(pickle.dumps(batch))
    assert copy.live == {} and copy.columns["env_state"] == [{"value": 1}, None]
    assert batch.live["environments"][0].value == 1  # the original keeps them


def test_isolated_rewards_cannot_ask_for_a_live_object():
    with pytest.raises(ConfigError, match="'env' is a live object that never leaves this process"):
        rewardhub.sample_reward(name="iso_env", isolated=True)(_isolated_env)()


def _isolated_env(text, env):
    return 1.0


def test_a_deadline_keeps_each_rows_environment():
    reward = env_sample_env()
    reward.batch_timeout = 60.0  # scored on the deadline's thread, sample by sample
    assert trl_batch_call(reward, [4, 5, 6], ["4", "5", "0"]) == [1.0, 1.0, 0.0]


def test_environments_of_the_wrong_length_are_a_clear_input_error():
    with pytest.raises(rewardhub.RewardInputError, match="column 'environments' must be a list with one value"):
        env_sample_env()(prompts=["p", "p"], completions=["1", "2"], environments=[Counter(1)])


def test_environments_none_is_no_column():
    """TRL passes environments only with an environment_factory; a caller passing None means none."""
    assert env_sample_env().evaluate(["p"], ["1"], environments=None).scores[0].outcome == "error"


def test_async_batch_rescoring_reads_each_rows_environment():
    @rewardhub.batch_reward(name="async_env_equals")
    async def async_env_equals(texts, environments):
        if "boom" in texts:
            raise ValueError("cannot")
        return [float(t == str(e.value)) for t, e in zip(texts, environments, strict=True)]

    import asyncio

    reward = async_env_equals()
    out = asyncio.run(reward(prompts=["p"] * 3, completions=["1", "boom", "3"],
                             environments=[Counter(1), Counter(2), Counter(3)]))
    assert out == [1.0, None, 1.0]
    assert isinstance(reward.evaluate(["p"], ["1"], environments=[Counter(1)]).scores[0], Score)


def test_a_memo_key_too_deep_to_compare_is_a_miss_not_a_crash():
    """A hostile column nested 900 deep freezes into a key Python cannot compare within its recursion
    limit: the shared reward scores the batch again instead of failing the request."""
    import json
    import sys

    deep = json.loads("[" * 300 + "]" * 300)  # frozen in 300 frames, compared in about 600 levels
    reward = env_sample_equals().share()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(600)  # what a server thread has left under its framework's frames
    try:
        values = [reward.evaluate(["p"], ["1"], environments=[Counter(1)], extra=[deep]).values for _ in range(2)]
    finally:
        sys.setrecursionlimit(limit)
    assert values == [[1.0], [1.0]]


class Tripwire(Counter):
    """An environment that fails the test if it is pickled, and whose repr would show wherever it is logged."""

    def __reduce_ex__(self, protocol):
        raise AssertionError("a live environment was pickled")

    def __repr__(self):
        return "<TRIPWIRE-ENV>"


@rewardhub.sample_reward(name="env_sample_raises")
def env_sample_raises(text, env):
    raise RuntimeError(f"cannot score {text}")


def test_live_environments_are_never_pickled_or_logged(clean_registry, caplog):
    """Through a whole set (shared verdicts, a deadline, a failing reward, the episode rewards, the
    hacking monitor, TRL's log hooks and a pickled batch) the environment is read in place only."""
    import logging

    from rewardhub.hacking import HackingMonitor

    for factory in (env_sample_env, env_batch_equals, env_sample_raises):
        clean_registry.add(factory, source="tests")
    rewards = rewardhub.load({"rewards": [
        {"name": "env_sample_env", "alias": "inner"},
        {"name": "env_batch_equals", "timeout": 60, "gate": {"reward": "inner", "threshold": 1.0}},
        {"name": "env_sample_raises"}, {"name": "final_state_match"}, {"name": "tool_call_match"}]})
    monitor = HackingMonitor.for_set(rewards)
    logged: list = []
    envs = [Tripwire(1), Tripwire(2), Tripwire(3)]
    with caplog.at_level(logging.DEBUG):
        totals = rewards.weighted(
            prompts=["p"] * 3, completions=["1", "boom", "0"], environments=envs, completion_ids=None,
            expected_state=[{"value": 1}, {"value": 2}, {"value": 9}], expected_calls=[[]] * 3,
            trainer_state=None, log_extra=lambda key, values: logged.append((key, values)),
            log_metric=lambda key, value: logged.append((key, value)))
        copy = pickle.loads(pickle.dumps(Batch(["p"] * 3, ["1", "2", "3"], {}, live={"environments": envs})))
    assert copy.columns["env_state"] == [{"value": 1}, {"value": 2}, {"value": 3}]
    assert len(totals) == 3 and monitor.report() is not None
    seen = repr(logged) + caplog.text + repr(monitor.report())
    assert "TRIPWIRE" not in seen and "Tripwire" not in seen and "was pickled" not in seen
    assert any(key.endswith("/reason") for key, _ in logged)  # the hooks were called: this checks something
