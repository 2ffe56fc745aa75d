"""Request pacing for the judge: token buckets for per-minute budgets, backoff with jitter, Retry-After."""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["TokenBucket", "backoff_delay", "retry_after"]


class TokenBucket:
    """A per-minute budget (requests or tokens) that refills continuously, up to one minute's worth.

    ``reserve`` books the amount at once and returns how long to wait before using it: the balance
    may go negative, so callers are served in arrival order and one bucket can be shared by every
    thread and event loop of the process.
    """

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic):
        if per_minute <= 0:
            raise ValueError(f"a per-minute budget must be positive; got {per_minute}")
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._clock = clock
        self._level = self.capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def reserve(self, amount: float) -> float:
        """Take ``amount`` (at most one minute's budget) and return the seconds to wait before using it."""
        amount = min(float(amount), self.capacity)
        with self._lock:
            self._refill()
            self._level -= amount
            return max(0.0, -self._level / self.rate)

    def give_back(self, amount: float) -> None:
        """Return unused budget (negative ``amount`` charges more, e.g. when a request used more tokens)."""
        with self._lock:
            self._refill()
            self._level = min(self.capacity, self._level + amount)

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def backoff_delay(attempt: int, base: float, cap: float, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff with jitter: between half and all of ``min(cap, base * 2**attempt)``."""
    ceiling = min(cap, base * 2**attempt)
    return ceiling / 2 + rand() * ceiling / 2


def retry_after(headers: Mapping[str, str] | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, or ``Retry-After`` in seconds or as a date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            pass
    date = lowered.get("retry-after")
    parsed = email.utils.parsedate_tz(date) if date else None
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - now())
