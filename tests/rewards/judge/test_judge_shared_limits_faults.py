"""Judge budgets in Redis under faults (issue 35 item 2), with a real ``redis-server`` started on a free port
(``--save '' --appendonly no``) and stopped or frozen by pid, and the judge on a real HTTP chat server:
one Redis round trip per judge request; a frozen Redis neither blocks the judge's event loop nor costs a
row its score (a circuit breaker holds the fallback); the fallback is a fair share of the limit.
"""

from __future__ import annotations

import multiprocessing
import signal

import pytest
from judge_server import judge_fixture, rows, running_server_fixture, server_fixture  # noqa: F401
from test_judge_shared_limits import redis_server

from rewardhub.rewards.judge.shared_limits import RedisBucket, bucket_name

pytest.importorskip("redis")


def evalsha_calls(url: str) -> int:
    import redis

    stats = redis.Redis.from_url(url).info("commandstats")
    return sum(stats.get(name, {}).get("calls", 0) for name in ("cmdstat_evalsha", "cmdstat_eval"))


def test_one_redis_round_trip_per_judge_request(tmp_path, judge):
    with redis_server(tmp_path) as (url, _):
        reward = judge(rpm=6000, tpm=10_000_000, share_limits=url)
        assert reward.evaluate(*rows("7")).values == [0.7]  # loads the script
        before = evalsha_calls(url)
        result = reward.evaluate(*rows(*"12345678"))
        assert result.outcomes == ["ok"] * 8
        assert evalsha_calls(url) - before == 8  # RPM and TPM booked together, the unused tokens sent along


def test_a_frozen_redis_costs_no_row_its_score(tmp_path, judge):
    """Frozen (SIGSTOP), Redis accepts connections and never answers: each round trip would wait out its
    2 s timeout. Booked on the event loop, 16 rows x 2 budgets took far past the batch's deadline; now the
    first bookings fail in threads, the breaker holds the fallback, and every row is judged."""
    with redis_server(tmp_path) as (url, process):
        reward = judge(rpm=6000, tpm=10_000_000, share_limits=url, deadline=60, concurrency=16)
        assert reward.evaluate(*rows("5")).outcomes == ["ok"]
        process.send_signal(signal.SIGSTOP)
        try:
            for _ in range(2):
                result = reward.evaluate(*rows(*["6"] * 16))
                assert result.outcomes == ["ok"] * 16, result.reasons
                assert result.values == [0.6] * 16
        finally:
            process.send_signal(signal.SIGCONT)


def _fair_share_child(url: str, key: str, barrier, out) -> None:
    bucket = RedisBucket(url, key, 6)  # 6 a minute, shared
    bucket.reserve(0.25)  # Redis counts this process as drawing from the budget
    barrier.wait(120)
    bucket.reserve(0.25)  # and tells it how many do (both, now)
    barrier.wait(120)
    barrier.wait(120)  # Redis is gone
    out.put(sum(bucket.reserve(0.25) == 0.0 for _ in range(40)))  # Redis gone: what this process takes at once


def test_without_redis_each_process_keeps_a_fair_share_not_a_full_bucket(tmp_path):
    context = multiprocessing.get_context("spawn")
    with redis_server(tmp_path) as (url, process):
        key = bucket_name("http://judge/v1|fair", "rpm")
        out, barrier = context.Queue(), context.Barrier(3)
        children = [context.Process(target=_fair_share_child, args=(url, key, barrier, out)) for _ in range(2)]
        for child in children:
            child.start()
        try:
            barrier.wait(120)
            barrier.wait(120)
            process.send_signal(signal.SIGKILL)
            process.wait(30)
            barrier.wait(120)
            taken = [out.get(timeout=120) for _ in children]
        finally:
            for child in children:
                child.join(30)
                if child.is_alive():
                    child.kill()
    assert taken == [12, 12]  # half of 6 each (3 / 0.25); a full bucket each would be 24 and 24
