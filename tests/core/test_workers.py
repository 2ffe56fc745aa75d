"""The deadline worker pool: real worker processes, real kills, real start-up failures, no orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from interrupts import Interrupted, interrupt_after
from paths import TESTS
from responsive import beats_during

import rewardhub
from rewardhub import WorkerStartupError
from rewardhub.workers import Outcome, WorkerFunctionError, WorkerPool, shared_pool, usable_cores

# ----- work functions (module level: the workers import them by name) ----------------------------------


def square(x: int) -> int:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def spin(x: int) -> int:
    """Pure-Python loop: interrupted by the worker's own timer, the worker survives."""
    if x < 0:
        while True:
            pass
    return x


def stuck(x: int) -> int:
    """Ignores the timer (as a GIL-holding C call would): only a SIGKILL stops it."""
    if x < 0:
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
        while True:
            pass
    return x


def crash(x: int) -> int:
    if x < 0:
        os._exit(3)
    return x


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def generator(x: int):
    return (i for i in range(x))


def refuse_to_load() -> None:
    raise RuntimeError("this item only loads in the caller")


class LoadsOnlyHere:
    """Pickles fine in the caller; unpickling it (in the worker) raises."""

    def __reduce__(self):
        return (refuse_to_load, ())


WARMED: list[str] = []


def warm() -> None:
    WARMED.append("warm")


def warmed(x: int) -> tuple[int, list[str]]:
    return x, WARMED


@rewardhub.sample_reward(name="napping", isolated=True)
def napping(text):
    """Sleeps for the seconds its completion names, then scores 1.0."""
    time.sleep(float(text))
    return 1.0


def alive(pid: int) -> bool:
    """True while ``pid`` runs (zombies count as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def wait_gone(pids: list[int], seconds: float = 15.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(2) as p:
        p.start()
        yield p


# ----- results -----------------------------------------------------------------------------------------
def test_map_returns_values_in_order_across_chunks(pool):
    assert pool.map(square, range(50), timeout=5, chunksize=3) == [Outcome("ok", i * i) for i in range(50)]
    assert pool.map(square, [], timeout=5) == []


def test_exception_is_an_error_outcome_and_others_still_run(pool):
    outcomes = pool.map(fail_on_three, [1, 2, 3, 4], timeout=5, chunksize=4)
    assert [o.status for o in outcomes] == ["ok", "ok", "error", "ok"]
    assert outcomes[2].value == "ValueError: three is not allowed"
    assert outcomes[3].value == 4


def test_items_and_results_that_cannot_cross_are_errors_of_their_own_items(pool):
    before = set(pool.pids)
    outcomes = pool.map(square, [1, LoadsOnlyHere(), 3], timeout=5, chunksize=1)
    assert outcomes[0] == Outcome("ok", 1) and outcomes[2] == Outcome("ok", 9)
    assert outcomes[1] == Outcome("error", "item cannot be sent: RuntimeError: this item only loads in the caller")
    outcomes = pool.map(generator, [2], timeout=5)
    assert outcomes[0].status == "error" and outcomes[0].value.startswith("result cannot be sent back: TypeError")
    assert set(pool.pids) == before  # the workers survived both


def test_python_loop_times_out_in_place_and_worker_survives(pool):
    before = set(pool.pids)
    outcomes = pool.map(spin, [1, -1, 2], timeout=1.5, chunksize=3)  # the quick items finish inside it under any load
    assert [o[:2] for o in outcomes] == [("ok", 1), ("timeout", "timeout after 1.5 s"), ("ok", 2)]
    assert 0 < outcomes[1].cpu <= 1.5 + 0.5 and outcomes[0].cpu is None  # a timeout says the cpu its item used
    assert set(pool.pids) == before


def test_worker_ignoring_its_timer_is_killed_replaced_and_the_chunk_finishes(pool):
    before = set(pool.pids)
    outcomes = pool.map(stuck, [1, -1, 2, 3], timeout=1.5, chunksize=4)
    assert [o[:2] for o in outcomes] == [("ok", 1), ("timeout", "timeout after 1.5 s"), ("ok", 2), ("ok", 3)]
    assert outcomes[1].cpu is not None  # read from /proc before the kill
    killed = before - set(pool.pids)
    assert len(killed) == 1 and wait_gone(list(killed)) == []
    assert len(pool.pids) == 2


def test_crashing_worker_gives_an_error_outcome(pool):
    outcomes = pool.map(crash, [5, -1, 6], timeout=5, chunksize=3)
    assert outcomes[0] == Outcome("ok", 5) and outcomes[2] == Outcome("ok", 6)
    assert outcomes[1].status == "error" and "exit code 3" in outcomes[1].value


def test_an_interrupted_call_leaves_no_stale_answers_for_the_next(pool):
    """Workers still busy with an interrupted call's items must not answer the next call's items."""

    with pytest.raises(Interrupted), interrupt_after(0.3):
        pool.map(nap, [0.8] * 4, timeout=5, chunksize=2)
    assert pool.map(square, [5, 6], timeout=5, chunksize=1) == [Outcome("ok", 25), Outcome("ok", 36)]
    assert pool.map(square, range(8), timeout=5, chunksize=1) == [Outcome("ok", i * i) for i in range(8)]


def test_caller_thread_and_main_thread_stay_responsive(pool):
    """A stuck item in a worker thread's call: the main thread keeps running, the call ends at the deadline."""
    before = set(pool.pids)
    outcomes, beats = beats_during(lambda: pool.map(stuck, [-1], timeout=1.0))
    assert [o[:2] for o in outcomes] == [("timeout", "timeout after 1 s")]
    assert beats >= 1  # the main thread ran while the call waited out the deadline
    killed = before - set(pool.pids)
    assert len(killed) == 1 and wait_gone(list(killed)) == []  # the stuck worker was killed, not left


def test_requires_imports_and_warms_up_each_worker_once(pool):
    outcomes = pool.map(warmed, [1, 2, 3], timeout=5, requires=["json", f"{__name__}:warm"])
    assert [o.value for o in outcomes] == [(1, ["warm"]), (2, ["warm"]), (3, ["warm"])]
    assert pool.map(warmed, [4], timeout=5, requires=[f"{__name__}:warm"]) == [Outcome("ok", (4, ["warm"]))]
    assert WARMED == []  # it ran in the workers, not here


def test_functions_must_be_importable_by_name(pool):
    with pytest.raises(WorkerFunctionError, match="module-level"):
        pool.map(lambda x: x, [1], timeout=1)

    def local(x):
        return x

    with pytest.raises(TypeError, match="module-level"):
        pool.map(local, [1], timeout=1)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="at least one"):
        WorkerPool(0)
    with pytest.raises(ValueError, match="timeout"):
        WorkerPool(1).map(square, [1], timeout=0)


def test_default_size_is_usable_cores_and_shared_pool_is_shared():
    assert WorkerPool().size == usable_cores() == len(os.sched_getaffinity(0))
    assert shared_pool(1) is shared_pool(1)


def test_module_that_cannot_be_imported_raises_startup_error_after_retries():
    with WorkerPool(1, start_retries=1) as p:
        with pytest.raises(WorkerStartupError, match="no_such_module_for_rewardhub") as info:
            p.map(square, [1], timeout=5, requires=["no_such_module_for_rewardhub"])
        message = str(info.value)
        assert "2 attempts" in message and "ModuleNotFoundError" in message
        assert "__main__" not in message  # workers never re-import the caller's script: no guard to advise
        assert p.pids == []


def test_close_stops_workers_and_the_pool_restarts_lazily():
    p = WorkerPool(1)
    assert p.map(square, [3], timeout=5) == [Outcome("ok", 9)]
    pids = p.pids
    p.close()
    assert p.pids == [] and wait_gone(pids) == []
    assert p.map(square, [4], timeout=5) == [Outcome("ok", 16)]
    p.close()


# ----- workers that die on their own (the OOM killer, a stray kill) ----------------------------------------
def kill(pids: list[int], settled: bool) -> None:
    """SIGKILL the workers, as the OOM killer does between two batches; ``settled``: wait until they are
    dead (zombies the pool has not noticed yet), else the next batch starts at once."""
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    if settled:
        assert wait_gone(pids) == []


@pytest.mark.parametrize("settled", [False, True], ids=["just-killed", "dead-for-a-while"])
def test_workers_killed_while_idle_are_replaced_before_work_is_sent(settled):
    with WorkerPool(2) as p:
        assert p.map(square, range(4), timeout=5) == [Outcome("ok", i * i) for i in range(4)]
        before = p.pids
        kill(before, settled)
        assert p.map(square, range(8), timeout=5, chunksize=1) == [Outcome("ok", i * i) for i in range(8)]
        assert len(p.pids) == 2 and not set(p.pids) & set(before)


def test_item_whose_worker_is_killed_from_outside_runs_again_on_a_fresh_worker():
    with WorkerPool(1) as p:
        p.start()
        victim = p.pids[0]
        threading.Timer(0.3, os.kill, (victim, signal.SIGKILL)).start()
        assert p.map(nap, [0.8, 0.01], timeout=5, chunksize=2) == [Outcome("ok", 0.8), Outcome("ok", 0.01)]
        assert p.pids != [victim]


def test_math_batch_after_its_workers_were_killed_scores_right():
    """The issue's report: after an OOM kill between batches the next batch was all None, or all 0.0
    under on_error zero, or raised BrokenPipeError."""
    reward = rewardhub.get("math", on_error="zero", workers=1)
    texts = [r"\boxed{2(x+1)}", r"\boxed{2x+1}", r"\boxed{\sqrt{12}}", r"\boxed{3\sqrt{2}}"]
    golds = ["2x+2", "2x+2", r"2\sqrt{3}", r"2\sqrt{3}"]
    assert reward.evaluate(["q"] * 4, texts, solution=golds).values == [1.0, 0.0, 1.0, 0.0]
    kill(reward.checker.pool.pids, settled=False)
    result = reward.evaluate(["q"] * 4, texts[::-1], solution=golds[::-1])
    assert result.values == [0.0, 1.0, 0.0, 1.0], result.reasons
    reward.checker.pool.close()


def test_isolated_sample_whose_worker_is_killed_mid_item_is_scored_not_zeroed():
    reward = napping(on_error="zero", workers=1, timeout=10)
    assert reward.evaluate(["q"], ["0"]).values == [1.0]
    pool = shared_pool(1)
    threading.Timer(0.3, os.kill, (pool.pids[0], signal.SIGKILL)).start()
    assert reward.evaluate(["q"] * 2, ["0.8", "0"]).values == [1.0, 1.0]


def test_an_item_that_kills_every_worker_is_an_error_after_one_retry(pool):
    outcomes = pool.map(crash, [-1], timeout=5)
    assert outcomes == [Outcome("error", "worker process died on this item twice (exit code 3)")]


# ----- callers: threads and forks -------------------------------------------------------------------------
def test_workers_outlive_the_thread_that_started_them():
    """Linux's parent-death signal follows the starting thread: workers are started from a long-lived one."""
    with WorkerPool(1) as p:
        thread = threading.Thread(target=p.start)
        thread.start()
        thread.join()
        started = p.pids
        time.sleep(0.3)
        assert alive(started[0])
        assert p.map(square, [7], timeout=5) == [Outcome("ok", 49)] and p.pids == started


def test_a_forked_child_starts_its_own_workers_and_leaves_the_parents_alone(pool):
    assert pool.map(square, [1, 2], timeout=5) == [Outcome("ok", 1), Outcome("ok", 4)]
    parents = set(pool.pids)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: must not talk to, wait for or kill the parent's workers
        try:
            ok = pool.map(square, [3], timeout=5) == [Outcome("ok", 9)] and not set(pool.pids) & parents
            pool.close()
            os.write(write, b"ok" if ok else b"bad")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 10) == b"ok"
    os.waitpid(child, 0)
    assert set(pool.pids) == parents and all(alive(p) for p in parents)
    assert pool.map(square, [4], timeout=5) == [Outcome("ok", 16)]


# ----- whole programs: start-up failures and orphans --------------------------------------------------------
def run_script(tmp_path, body: str, timeout: float = 90) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), str(TESTS)])}
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_workers_stop_when_the_program_exits(tmp_path):
    done = run_script(
        tmp_path,
        """
        from rewardhub.workers import shared_pool
        import test_workers
        if __name__ == "__main__":
            pool = shared_pool(2)
            assert pool.map(test_workers.square, range(10), timeout=5)[-1].value == 81
            print(*pool.pids)
        """,
    )
    assert done.returncode == 0, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    assert wait_gone(pids) == []


def test_busy_workers_die_with_a_killed_program(tmp_path):
    """SIGKILL of the trainer (no atexit runs) while a worker is stuck: the worker must not survive."""
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, threading
            from rewardhub.workers import WorkerPool
            import test_workers
            if __name__ == "__main__":
                pool = WorkerPool(1)
                pool.start()
                print(*pool.pids, flush=True)
                pool.map(test_workers.stuck, [-1], timeout=600)
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), str(TESTS)])}
    victim = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pids = [int(p) for p in victim.stdout.readline().split()]
        assert len(pids) == 1
        time.sleep(0.5)  # let the worker enter its endless item
        assert alive(pids[0])
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        assert wait_gone(pids) == []
    finally:
        if victim.poll() is None:
            victim.kill()
        victim.stdout.close()


def test_an_item_that_waits_past_its_deadline_did_not_run_away(pool):
    """A runaway is an item that used its cpu budget; one the deadline caught while it had the cpu of a sleeping
    process (what a busy machine does to an honest item: it gets no cores) is not the item's doing."""
    [outcome] = pool.map(nap, [30], timeout=1.0)
    assert outcome.status == "timeout" and outcome.cpu < 0.5 and not outcome.ran_away(1.0)
    assert Outcome("timeout", "", 0.95).ran_away(1.0) and not Outcome("timeout", "", None).ran_away(1.0)
    assert not Outcome("ok", 1, 5.0).ran_away(1.0)
