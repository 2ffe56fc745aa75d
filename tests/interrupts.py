"""A caller interrupted mid-call, the way Ctrl-C raises KeyboardInterrupt: for tests of what the next call sees."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class Interrupted(Exception):
    """Raised in the main thread by a timer signal."""


@contextlib.contextmanager
def interrupt_after(seconds: float) -> Iterator[None]:
    """Raise :class:`Interrupted` in the main thread ``seconds`` from now, unless the block ends first."""

    def interrupt(signum, frame):
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
