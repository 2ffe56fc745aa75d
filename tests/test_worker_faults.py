"""Worker pools under memory pressure: the OOM killer takes workers (never the trainer), a worker killed
from outside costs its item an abstention, never a 0.0, and a memory limit that fits fewer workers than
asked scores with those that start (issue 21, items 4 and 7)."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings

import pytest

import rewardhub
from rewardhub import WorkerShortfallWarning, WorkerStartupError
from rewardhub.workers import Outcome, WorkerPool, shared_pool


def held(path: str) -> str:
    """Notes its worker's pid in ``path``, then runs long enough to be killed mid-item."""
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(30)
    return "finished"


def square(x: int) -> int:
    return x * x


@rewardhub.sample_reward(name="held_sample", isolated=True)
def held_sample(text):
    """Scores 1.0; a completion naming a file holds its worker there (``held``)."""
    if text != "quick":
        held(text)
    return 1.0


def oom_score_adj(pid: int) -> str:
    with open(f"/proc/{pid}/oom_score_adj") as f:
        return f.read().strip()


class Killer:
    """SIGKILLs (by pid) each worker that notes itself in ``path``, as the OOM killer takes the biggest
    process, until ``times`` kills are done."""

    def __init__(self, path: str, times: int):
        self.path, self.times, self.killed = path, times, []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        end = time.monotonic() + 60
        while len(self.killed) < self.times and time.monotonic() < end:
            try:
                with open(self.path) as f:
                    pids = [int(line) for line in f if line.strip()]
            except FileNotFoundError:
                pids = []
            for pid in pids:
                if pid not in self.killed:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
            time.sleep(0.02)

    def join(self) -> list[int]:
        self._thread.join()
        return self.killed


def test_workers_offer_themselves_to_the_oom_killer_first():
    with WorkerPool(2) as pool:
        pool.start()
        assert [oom_score_adj(pid) for pid in pool.pids] == ["1000", "1000"]
    math = rewardhub.get("math", workers=1)
    assert math.evaluate(["q"], [r"\boxed{2(x+1)}"], solution=["2x+2"]).values == [1.0]
    assert [oom_score_adj(pid) for pid in math.checker.pool.pids] == ["1000"]
    assert oom_score_adj(os.getpid()) != "1000"  # the caller keeps its own


def test_an_item_whose_workers_are_killed_from_outside_is_killed_not_failed_and_the_pool_goes_on(tmp_path):
    path = str(tmp_path / "pids")
    with WorkerPool(1) as pool:
        pool.start()
        killer = Killer(path, times=2)
        outcomes = pool.map(held, [path], timeout=60)
        killed = killer.join()
        assert len(killed) == 2 and outcomes[0].status == "killed"
        assert "SIGKILL" in outcomes[0].value and "OOM killer" in outcomes[0].value
        assert pool.map(square, range(6), timeout=5) == [Outcome("ok", i * i) for i in range(6)]
        assert not set(pool.pids) & set(killed)


def test_an_isolated_sample_killed_from_outside_abstains_under_on_error_zero(tmp_path):
    path = str(tmp_path / "pids")
    reward = held_sample(on_error="zero", workers=1, timeout=60)
    assert reward.evaluate(["q"], ["quick"]).values == [1.0]
    killer = Killer(path, times=2)
    result = reward.evaluate(["q"] * 3, ["quick", path, "quick"])
    assert len(killer.join()) == 2
    assert result.values == [1.0, None, 1.0], result.reasons
    assert result.outcomes[1] == "error" and "killed by SIGKILL" in result.reasons[1]
    assert reward.evaluate(["q"] * 2, ["quick", "quick"]).values == [1.0, 1.0]
    shared_pool(1).close()


# ----- a memory limit that fits fewer workers than asked (issue 21, item 7) ------------------------------------
SCARCE = "scarce_memory:claim_a_slot"


def scarce(monkeypatch, folder, slots: int) -> None:
    monkeypatch.setenv("SCARCE_MEMORY_DIR", str(folder))
    monkeypatch.setenv("SCARCE_MEMORY_SLOTS", str(slots))


def test_a_pool_that_can_start_only_some_workers_scores_with_them_and_says_how_many(tmp_path, monkeypatch):
    scarce(monkeypatch, tmp_path, 2)
    with WorkerPool(4, preload=[SCARCE]) as pool:
        with pytest.warns(WorkerShortfallWarning, match="started only 2 of the 4 worker processes") as caught:
            pool.start()
        assert len(caught) == 1
        assert len(pool.pids) == 2 and pool.capacity == 2
        assert pool.map(square, range(20), timeout=30) == [Outcome("ok", i * i) for i in range(20)]
        with warnings.catch_warnings():
            warnings.simplefilter("error", WorkerShortfallWarning)  # said once: later batches start no doomed workers
            assert pool.map(square, range(8), timeout=30) == [Outcome("ok", i * i) for i in range(8)]
        assert len(pool.pids) == 2


def test_a_pool_that_can_start_no_worker_still_raises(tmp_path, monkeypatch):
    scarce(monkeypatch, tmp_path, 0)
    with WorkerPool(2, start_retries=1) as pool:
        with pytest.raises(WorkerStartupError, match="killed by SIGKILL"):
            pool.map(square, [1], timeout=30, requires=[SCARCE])
        assert pool.pids == []
