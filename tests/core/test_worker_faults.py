"""Worker pools under memory pressure and on busy machines: the OOM killer takes workers (never the
trainer), a worker killed from outside costs its item an abstention, never a 0.0, a memory limit that
fits fewer workers than asked scores with those that start, and a runaway costs only its own row
(issue 21, items 4, 6 and 7)."""

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


# ----- a runaway costs only its own row (issue 21, item 6) ----------------------------------------------------
TOWER = r"\boxed{9^{9^{9^{9}}}}"  # parses at once, never evaluates: its worker is SIGKILLed at the deadline


def waits_for(path: str) -> str:
    """A runaway that ends only when the test says so: notes its pid in ``path + '.pid'``, then runs until
    ``path`` exists."""
    with open(path + ".pid", "a") as f:
        f.write(f"{os.getpid()}\n")
    while not os.path.exists(path):
        time.sleep(0.02)
    return "released"


@rewardhub.sample_reward(name="runaway_sample", isolated=True)
def runaway_sample(text):
    """1.0, after running until the file its completion names exists (``quick``: at once)."""
    if text != "quick":
        waits_for(text)
    return 1.0


def noted_pids(path: str) -> list[int]:
    try:
        with open(path + ".pid") as f:
            return [int(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def test_a_call_does_not_wait_for_another_calls_runaway(tmp_path):
    """Two workers, one held by the first call's runaway: the second call is answered by the other while
    that runaway still runs (it only ends when released, after the second call returned); before, calls
    took turns and the second waited for the runaway's kill."""
    flag = str(tmp_path / "release")
    with WorkerPool(2) as pool:
        pool.start()
        first: dict[str, list[Outcome]] = {}
        caller = threading.Thread(target=lambda: first.update(outcomes=pool.map(waits_for, [flag], timeout=20)))
        caller.start()
        while not noted_pids(flag):  # the runaway is on a worker
            time.sleep(0.02)
        assert pool.map(square, [3, 4], timeout=20) == [Outcome("ok", 9), Outcome("ok", 16)]
        assert caller.is_alive()
        open(flag, "w").close()
        caller.join()
        assert first["outcomes"] == [Outcome("ok", "released")]
        assert len(pool.pids) == 2


def mixed_batch(tag: int) -> tuple[list[str], list[str], list[float | None]]:
    """A runaway and seven ordinary rows (expressions: each needs a worker), half right, half wrong."""
    texts, golds, expected = [TOWER], ["5"], [None]
    for i in range(7):
        n = 10 * tag + i + 2
        texts.append(rf"\boxed{{{n}(x+1)}}")
        golds.append(f"{n}x+{n}" if i % 2 == 0 else f"{n}x+{n + 1}")
        expected.append(1.0 if i % 2 == 0 else 0.0)
    return texts, golds, expected


def test_concurrent_math_batches_with_runaways_score_every_ordinary_row():
    """Three callers (a server's request threads), two batches each, a runaway in every batch."""
    math = rewardhub.get("math", timeout=1.0, workers=2)
    assert math.evaluate(["q"], [r"\boxed{2(x+1)}"], solution=["2x+2"]).values == [1.0]  # workers warm
    results = {}

    def caller(thread: int) -> None:
        for round_ in range(2):
            texts, golds, expected = mixed_batch(10 * thread + round_)
            results[thread, round_] = math.evaluate(["q"] * 8, texts, solution=golds), expected

    threads = [threading.Thread(target=caller, args=(t,)) for t in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6
    ordinary = [(r.outcomes[i], r.values[i], e[i], r.reasons[i]) for r, e in results.values() for i in range(1, 8)]
    assert len(ordinary) == 42
    assert [row for row in ordinary if row[0] != "ok" or row[1] != row[2]] == []
    # A runaway that used its cpu is scored 0.0; one a busy machine starved of cpu abstains: never a pass.
    assert {(r.outcomes[0], r.values[0]) for r, _ in results.values()} <= {("timeout", None), ("timeout", 0.0)}
    math.checker.pool.close()


def test_an_abandoned_batch_gives_its_workers_back_so_the_overdue_rule_does_not_cascade(tmp_path):
    """Batches whose deadline passes while a runaway holds a worker: each is abandoned (its worker killed)
    instead of running on, so later batches never meet the 'earlier batches still running' rule."""
    flag = str(tmp_path / "never")
    reward = runaway_sample(workers=2, timeout=60)
    assert reward.evaluate(["q"] * 2, ["quick"] * 2).values == [1.0, 1.0]  # workers started
    reward.batch_timeout = 2.0
    reasons = []
    for _ in range(6):
        result = reward.evaluate(["q"] * 2, [flag, "quick"])
        assert result.outcomes[0] == "timeout"
        reasons += result.reasons
    assert [r for r in reasons if "earlier batches" in r] == []
    runaways = noted_pids(flag)
    assert runaways and wait_gone(runaways) == []  # each killed when its batch was abandoned (not 60 s later)
    reward.batch_timeout = 60
    assert reward.evaluate(["q"] * 4, ["quick"] * 4).values == [1.0] * 4
    shared_pool(2).close()


def wait_gone(pids: list[int], seconds: float = 15.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(os.path.exists(f"/proc/{p}") and not zombie(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if os.path.exists(f"/proc/{p}") and not zombie(p)]


def zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
