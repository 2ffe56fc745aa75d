"""One background event loop that runs async rewards for synchronous callers.

Async clients (HTTP pools, semaphores) belong to the loop that made them; a persistent loop lets
them be reused across calls instead of being rebuilt by a fresh ``asyncio.run`` per batch.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["T", "background_loop", "run_coroutine", "submit"]

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared loop, started on first use in a daemon thread."""
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed() or _thread is None or not _thread.is_alive():
            _loop = asyncio.new_event_loop()
            _thread = threading.Thread(target=_loop.run_forever, name="rewardhub-loop", daemon=True)
            _thread.start()
        return _loop


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedule ``coro`` on the background loop; refuse from the loop's own thread (waiting there deadlocks)."""
    loop = background_loop()
    if threading.current_thread() is _thread:
        coro.close()
        raise RuntimeError(
            "a synchronous rewardhub call was made from inside an async reward; await the async API "
            "(aevaluate / aevaluate_batch / adependency_scores) instead"
        )
    return asyncio.run_coroutine_threadsafe(coro, loop)


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code and return its result."""
    return submit(coro).result()
