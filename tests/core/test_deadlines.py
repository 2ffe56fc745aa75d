"""A deadline for every reward: a config entry's ``timeout`` bounds a batch; unfinished samples time out."""

import asyncio
import threading
import time

import pytest

import rewardhub
from rewardhub import ConfigError

RELEASE = threading.Event()  # set at the end of each test: stuck scorer threads may then finish
STUCK = {"entered": 0, "left": 0}  # calls of the stuck scorers that began hanging, and that returned since


@pytest.fixture(autouse=True)
def count_stuck_calls():
    STUCK.update(entered=0, left=0)


def _hang() -> None:
    STUCK["entered"] += 1
    RELEASE.wait(60)  # a blocking call that never returns in time
    STUCK["left"] += 1


@pytest.fixture(autouse=True)
def release_stuck_threads():
    RELEASE.clear()
    yield
    RELEASE.set()


@rewardhub.sample_reward(name="t_stuck_sample")
def stuck_sample(text):
    if "hang" in text:
        _hang()
    return 1.0


@rewardhub.batch_reward(name="t_stuck_batch")
def stuck_batch(texts):
    if any("hang" in t for t in texts):
        _hang()
    return [1.0] * len(texts)


@rewardhub.sample_reward(name="t_stuck_async")
async def stuck_async(text):
    if "hang" in text:
        await asyncio.sleep(60)
    return 1.0


def _with_deadline(factory, seconds, **params):
    reward = factory(**params)
    reward.batch_timeout = seconds
    return reward


def test_a_per_sample_scorer_keeps_its_finished_samples_and_times_out_the_rest():
    reward = _with_deadline(stuck_sample, 2.0)  # a and b finish well inside it, whatever the machine's load
    result = reward.evaluate(None, ["a", "b", "hang", "c"])
    assert STUCK == {"entered": 1, "left": 0}  # back while the stuck sample still hangs: it did not wait for it
    assert result.values == [1.0, 1.0, None, None]
    assert result.outcomes == ["ok", "ok", "timeout", "timeout"]
    assert result.reasons[2] == "timeout after 2 s"
    assert reward.totals["timeouts"] == 2


def test_a_batch_scorer_times_out_whole():
    result = _with_deadline(stuck_batch, 0.3).evaluate(None, ["a", "hang"])
    assert result.values == [None, None] and result.outcomes == ["timeout", "timeout"]


def test_an_async_scorer_keeps_its_finished_samples():
    result = _with_deadline(stuck_async, 2.0).evaluate(None, ["a", "hang", "b"])
    assert result.values == [1.0, None, 1.0]
    assert result.outcomes == ["ok", "timeout", "ok"]


def test_stuck_threads_do_not_pile_up():
    reward = _with_deadline(stuck_batch, 0.1)
    for _ in range(4):
        assert reward.evaluate(None, ["hang"]).outcomes == ["timeout"]
    assert STUCK == {"entered": 4, "left": 0}
    result = reward.evaluate(None, ["hang"])
    assert STUCK == {"entered": 4, "left": 0}  # no fifth stuck thread: it answers without calling the scorer
    assert result.outcomes == ["timeout"]
    assert "4 earlier batches of 't_stuck_batch' are still running" in result.reasons[0]
    RELEASE.set()
    deadline = time.monotonic() + 120  # a bound on a hang, not a timing
    while reward._overdue.count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reward._overdue.count == 0
    assert reward.evaluate(None, ["fine"]).values == [1.0]  # the stuck ones finished: back to normal


def test_a_contract_error_inside_the_deadline_still_raises():
    reward = _with_deadline(rewardhub.batch_reward(lambda texts: [1.0], name="t_short"), 5)
    with pytest.raises(rewardhub.RewardContractError):
        reward.evaluate(None, ["a", "b"])


def test_config_entries_set_the_deadline_and_a_default_fills_the_rest(clean_registry):
    clean_registry.add(stuck_sample, source="tests")
    clean_registry.add(stuck_async, source="tests")
    rewards = rewardhub.load(
        [{"name": "t_stuck_sample", "timeout": 2.5}, {"name": "t_stuck_async", "alias": "other"}],
        default_timeout=2.0,
    )
    assert [m.reward.batch_timeout for m in rewards] == [2.5, 2.0]
    result = rewards.evaluate(["q", "q"], ["ok", "hang"])
    assert result["t_stuck_sample"].outcomes == ["ok", "timeout"]
    # Both rewards timed out on the second row: each counts at its group's floor (a failure's 0.0), never more.
    assert result.totals == [2.0, 0.0]
    assert rewardhub.load([{"name": "t_stuck_sample"}]).members[0].reward.batch_timeout is None


@pytest.mark.parametrize("bad", [0, -1, "5", True, float("inf")])
def test_a_bad_timeout_is_a_config_error(bad, clean_registry):
    clean_registry.add(stuck_sample, source="tests")
    with pytest.raises(ConfigError, match="'timeout' must be a positive number of seconds"):
        rewardhub.load([{"name": "t_stuck_sample", "timeout": bad}])
