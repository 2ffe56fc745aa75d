"""A deadline for any reward's call: past it, the batch's unsettled samples get ``timeout`` and training goes on.

Sync scorers run in a daemon thread that the caller stops waiting for at the deadline. Python cannot
kill a thread: a scorer stuck in a loop or a blocking call keeps its thread until it returns (the
docs point to ``isolated: true``, whose worker processes are killed). When the deadline passes the
call is marked abandoned (a per-sample scorer stops between samples, worker pools stop working for
it), the rows the call settled keep their scores, and while several of a reward's calls are still
running past their deadline its new calls time out at once, so stuck threads cannot pile up.

The seam is two functions, :func:`run_sync` and :func:`run_async`: each takes the call (its deadline
and settled rows), the work, and how to turn a settled value into a score; nothing of the reward.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from ._batch import Score
from ._call import Call, current_call

__all__ = ["MAX_OVERDUE", "Overdue", "batch_abandoned", "run_async", "run_sync", "timed_out"]

MAX_OVERDUE = 4  # a reward's calls allowed to run on past their deadline before new ones time out at once
_handoff = threading.Lock()  # a finishing scorer thread and its deadline decide who counts it as overdue


def batch_abandoned() -> threading.Event | None:
    """In a call under a deadline, the event set once that deadline has passed (worker pools then stop
    working for it, so an overdue call ends soon); None elsewhere."""
    call = current_call()
    return call.stop if call is not None and call.seconds is not None else None


def timed_out(seconds: float) -> Score:
    return Score(None, f"timeout after {seconds:g} s", None, "timeout")


class Overdue:
    """How many of one reward's calls are still running past their deadline (thread-safe)."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def add(self, delta: int) -> None:
        with self._lock:
            self.count += delta

    def __reduce__(self) -> tuple:
        return (Overdue, ())  # threads belong to this process: a copy starts with none


def run_sync(call: Call, size: int, work: Callable[[], list[Score]], overdue: Overdue,
             to_score: Callable[[Any], Score]) -> list[Score]:
    """``work()``'s scores for the call's ``size`` rows, or, past ``call.seconds``, the rows the call
    settled (through ``to_score``) and ``timeout`` for the others. Exceptions of ``work`` propagate
    when it finished in time."""
    seconds = call.seconds
    assert seconds is not None, "run_sync needs a call with a deadline"
    if overdue.count >= MAX_OVERDUE:
        reason = (f"timeout: {overdue.count} earlier batches of {call.reward_name!r} are still running "
                  f"past their {seconds:g} s deadline")
        return [Score(None, reason, None, "timeout")] * size
    done: list[list[Score]] = []
    failure: list[BaseException] = []
    finished = threading.Event()

    def target() -> None:
        try:
            done.append(work())
        except BaseException as exc:  # handed to the caller, which raises it (contract errors, worker start-up)
            failure.append(exc)
        finally:
            with _handoff:  # decided together with the caller: either it waited for us, or we were overdue
                finished.set()
                if call.stop.is_set():
                    overdue.add(-1)

    context = contextvars.copy_context()  # the scorer thread runs inside this call
    threading.Thread(target=context.run, args=(target,), name=f"rewardhub-deadline-{call.reward_name}",
                     daemon=True).start()
    finished.wait(seconds)
    with _handoff:
        if not finished.is_set():
            call.stop.set()
            overdue.add(1)
    if not call.stop.is_set():
        if failure:
            raise failure[0]
        return done[0]
    return _settled_or_timed_out(call, size, to_score)


async def run_async(call: Call, size: int, work: Callable[[], Awaitable[list[Score]]],
                    to_score: Callable[[Any], Score]) -> list[Score]:
    """:func:`run_sync` for a coroutine: cancelled at the deadline, its settled rows kept."""
    assert call.seconds is not None, "run_async needs a call with a deadline"
    try:
        return await asyncio.wait_for(work(), call.seconds)  # type: ignore[arg-type]
    except TimeoutError:
        call.stop.set()
        return _settled_or_timed_out(call, size, to_score)


def _settled_or_timed_out(call: Call, size: int, to_score: Callable[[Any], Score]) -> list[Score]:
    settled = dict(call.settled)
    seconds = call.seconds or 0.0
    return [to_score(settled[i]) if i in settled else timed_out(seconds) for i in range(size)]
