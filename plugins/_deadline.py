"""A deadline for any reward: past it, the batch's unfinished samples get ``timeout`` and training goes on.

Sync scorers run in a daemon thread that the caller stops waiting for at the deadline. Python cannot
kill a thread: a scorer stuck in a loop or a blocking call keeps its thread until it returns (the
docs point to ``isolated: true``, whose worker processes are killed). A per-sample scorer is told to
stop between samples, a batch scorer's worker pool stops working for it (``batch_abandoned``), and
while several of a reward's batches are still running past their deadline its new batches time out at
once, so stuck threads cannot pile up without bound.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._batch import Score

if TYPE_CHECKING:
    from ._batch import Batch
    from ._reward import AsyncReward, Reward

MAX_OVERDUE = 4  # a reward's batches allowed to run on past their deadline before new ones time out at once
_handoff = threading.Lock()  # a finishing scorer thread and its deadline decide who counts it as overdue
_batch = threading.local()  # in a scorer thread: ``stop``, set when its batch's deadline has passed


def batch_abandoned() -> threading.Event | None:
    """In a thread scoring a batch under a deadline, the event set once that deadline has passed (worker
    pools then stop working for the batch, so an overdue batch ends soon); None elsewhere."""
    return getattr(_batch, "stop", None)


def timed_out(seconds: float) -> Score:
    return Score(None, f"timeout after {seconds:g} s", None, "timeout")


class Overdue:
    """How many of one reward's batches are still running past their deadline (thread-safe)."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def add(self, delta: int) -> None:
        with self._lock:
            self.count += delta

    def __reduce__(self) -> tuple:
        return (Overdue, ())  # threads belong to this process: a copy starts with none


def run_sync(reward: Reward, batch: Batch, seconds: float) -> list[Score]:
    """``reward``'s scores for ``batch``, with the samples unfinished at ``seconds`` timed out."""
    n = len(batch)
    if reward._overdue.count >= MAX_OVERDUE:
        reason = (f"timeout: {reward._overdue.count} earlier batches of {reward.__name__!r} are still running "
                  f"past their {seconds:g} s deadline")
        return [Score(None, reason, None, "timeout")] * n
    scores: list[Score | None] = [None] * n
    failure: list[BaseException] = []
    stop, finished = threading.Event(), threading.Event()

    def work() -> None:
        _batch.stop = stop
        try:
            if reward._per_sample():
                for i in range(n):
                    if stop.is_set():
                        return
                    scores[i] = reward._sample_outcome(batch, i)
            else:
                scores[:] = reward._run(batch)
        except BaseException as exc:  # handed to the caller, which raises it (contract errors, worker start-up)
            failure.append(exc)
        finally:
            with _handoff:  # decided together with the caller: either it waited for us, or we were overdue
                finished.set()
                if stop.is_set():
                    reward._overdue.add(-1)

    threading.Thread(target=work, name=f"rewardhub-deadline-{reward.__name__}", daemon=True).start()
    finished.wait(seconds)
    with _handoff:
        if not finished.is_set():
            stop.set()
            reward._overdue.add(1)
    if failure and not stop.is_set():
        raise failure[0]
    settled = dict(batch.settled)  # a batch scorer's rows finished before the deadline keep their scores
    return [s if s is not None else reward._to_score(settled[i]) if i in settled else timed_out(seconds)
            for i, s in enumerate(scores)]



async def run_async(reward: AsyncReward, batch: Batch, seconds: float,
                    run_all: Callable[[], object]) -> list[Score]:
    """``run_sync`` for an async reward: unfinished samples (or the whole batch, for a batch scorer)
    are cancelled at the deadline and time out."""
    if not reward._per_sample():
        try:
            return await asyncio.wait_for(run_all(), seconds)  # type: ignore[arg-type]
        except TimeoutError:
            return [timed_out(seconds)] * len(batch)
    tasks = [asyncio.ensure_future(reward._sample_outcome_async(batch, i)) for i in range(len(batch))]
    _, pending = await asyncio.wait(tasks, timeout=seconds)
    for task in pending:
        task.cancel()
    return [timed_out(seconds) if task in pending else task.result() for task in tasks]
