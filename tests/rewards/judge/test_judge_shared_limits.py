"""Judge rate budgets shared across processes: a flock'd state file on one host, Redis across hosts
(a real Debian ``redis-server`` the test starts on a free port and stops by pid).

The buckets return how long a reservation must wait instead of sleeping, so these tests check the
arithmetic of one shared budget (values, never timings).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import shutil
import signal
import socket
import subprocess
import time

import pytest

from rewardhub.rewards.judge.client import Endpoint, JudgeClient, Policy
from rewardhub.rewards.judge.errors import JudgeConfigError
from rewardhub.rewards.judge.shared_limits import FileBucket, RedisBucket, bucket_name, check_share


def _reserve_in_child(path: str, per_minute: float, count: int, out) -> None:
    bucket = FileBucket(path, per_minute)
    out.send([bucket.reserve(1) for _ in range(count)])


def reserve_in_process(path, per_minute: float, count: int) -> list[float]:
    """``count`` one-request reservations made by another process on the bucket file ``path``."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    child = context.Process(target=_reserve_in_child, args=(str(path), per_minute, count, theirs))
    child.start()
    waits = ours.recv()
    child.join(30)
    return waits


def test_two_processes_draw_from_one_file_bucket(tmp_path):
    path = tmp_path / "budget"
    first = reserve_in_process(path, 60, 45)  # 60 requests a minute: 45 fit at once
    second = reserve_in_process(path, 60, 45)  # 15 more fit; the other 30 wait up to ~30 s
    assert max(first) == 0.0
    assert second[:14] == [0.0] * 14
    assert 25 < max(second) <= 31 and second == sorted(second)
    alone = FileBucket(tmp_path / "other", 60)  # another endpoint's bucket is untouched
    assert alone.reserve(1) == 0.0


def test_given_back_budget_is_shared_too(tmp_path):
    a, b = FileBucket(tmp_path / "b", 60), FileBucket(tmp_path / "b", 60)
    assert a.reserve(60) == 0.0
    assert b.reserve(30) > 25
    b.give_back(30)
    a.give_back(30)
    assert a.reserve(20) == 0.0


def test_a_state_file_from_another_boot_starts_full(tmp_path):
    path = tmp_path / "stale"
    FileBucket(path, 60, clock=lambda: 1e12).reserve(60)  # written "in the future" (a clock since reset)
    assert FileBucket(path, 60).reserve(60) == 0.0


def test_judges_of_one_endpoint_share_a_bucket_and_others_do_not(tmp_path):
    endpoint = Endpoint("http://127.0.0.1:9/v1", "judge-model", "NO_KEY", 0.0, 16, None)
    policy = Policy(4, 5.0, 0, 0.1, 1.0)
    one, two = (JudgeClient(endpoint, policy, rpm=60, share_limits=str(tmp_path)) for _ in range(2))
    other = JudgeClient(Endpoint("http://127.0.0.1:9/v1", "another-model", "NO_KEY", 0.0, 16, None), policy, rpm=60,
                        share_limits=str(tmp_path))
    assert one.rpm.path == two.rpm.path != other.rpm.path
    assert one.rpm.reserve(60) == 0.0 and two.rpm.reserve(1) > 0.5 and other.rpm.reserve(1) == 0.0
    assert one.tpm is None
    local = JudgeClient(endpoint, policy, rpm=60, share_limits="process")
    assert local.rpm.reserve(60) == 0.0  # a process-local bucket of its own
    for client in (one, two, other, local):
        client.close()


def test_bad_share_settings_say_what_is_allowed():
    with pytest.raises(JudgeConfigError, match="redis://"):
        check_share("http://cache:6379")
    with pytest.raises(JudgeConfigError, match="'process', 'host'"):
        check_share("")


@contextlib.contextmanager
def redis_server(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (scripts/test.sh installs Debian's package)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def test_redis_bucket_is_one_budget_for_every_holder_and_survives_redis_going_away(tmp_path, caplog):
    pytest.importorskip("redis")
    with redis_server(tmp_path) as (url, process):
        key = bucket_name("http://judge/v1|m", "rpm")
        host_a, host_b = RedisBucket(url, key, 60), RedisBucket(url, key, 60)
        assert [host_a.reserve(1) for _ in range(40)] == [0.0] * 40
        waits = [host_b.reserve(1) for _ in range(40)]
        assert waits[:19] == [0.0] * 19 and 15 < waits[-1] <= 21
        host_b.give_back(20)  # back to about empty: what b gave back, a can use
        assert host_a.reserve(1) < 2
        unrelated = RedisBucket(url, bucket_name("http://judge/v1|m", "tpm"), 60)
        assert unrelated.reserve(60) == 0.0
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        with caplog.at_level(logging.WARNING, logger="rewardhub.judge"):
            assert host_a.reserve(1) == 0.0  # no Redis: this process goes on with a bucket of its own
        assert "keeps its own budget" in caplog.text
