"""One ``AsyncOpenAI`` client, so one connection pool, per endpoint per process.

Judge requests all run on rewardhub's persistent background loop (``rewardhub.background_loop``), which an
async HTTP client needs (it belongs to the loop that uses it), so one client per endpoint serves
every judge reward, batch and caller of the process and keeps its connections warm. The client is
built in a thread as soon as a reward is made (importing openai and loading TLS certificates take
a few hundred milliseconds), off the first batch's critical path. The API key lives only in the
client (and in the registry entry, to rebuild it); the registry is keyed by a hash of it.

The client's future is shared by every batch, so no caller can cancel it (a batch cancelled while the
client is being built, by its deadline or a caller's ``wait_for``, stops waiting, nothing more), and a
build that failed is started again by the next batch that asks, rather than kept as the endpoint's
answer for the life of the process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import os
import threading
from typing import Any

__all__ = ["EndpointId", "acquire", "client", "release"]

_SDK_TIMEOUT_S = 24 * 3600.0  # the judge's own asyncio timeout cancels each attempt; the SDK's never fires first

EndpointId = tuple[str | None, str]


class _Shared:
    """An endpoint's client (a future until built) and how many judges use it."""

    def __init__(self, base_url: str | None, api_key: str) -> None:
        self.base_url, self.api_key = base_url, api_key
        self.users = 0
        self.client = self.build()

    def build(self) -> concurrent.futures.Future[Any]:
        """Start building the client in a thread; the future is marked running, so it cannot be cancelled."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        threading.Thread(target=_build, args=(future, self.base_url, self.api_key), name="judge-client",
                         daemon=True).start()
        return future


_clients: dict[EndpointId, _Shared] = {}
_lock = threading.Lock()


def acquire(base_url: str | None, api_key: str) -> EndpointId:
    """Count one more user of the endpoint's client, starting to build it if there is none."""
    endpoint = (base_url, hashlib.sha256(api_key.encode()).hexdigest())
    with _lock:
        shared = _clients.get(endpoint)
        if shared is None:
            shared = _clients[endpoint] = _Shared(base_url, api_key)
        shared.users += 1
    return endpoint


def client(endpoint: EndpointId) -> concurrent.futures.Future[Any] | None:
    """The endpoint's client as a future (``None`` once released by all its users, or after a fork); a
    build that failed is started again (the failure was the answer of the batch that asked before)."""
    with _lock:
        shared = _clients.get(endpoint)
        if shared is None:
            return None
        if shared.client.done() and shared.client.exception() is not None:
            shared.client = shared.build()
        return shared.client


def release(endpoint: EndpointId) -> None:
    """One user fewer; the last one closes the client on the background loop (without waiting for it)."""
    with _lock:
        shared = _clients.get(endpoint)
        if shared is None:
            return
        shared.users -= 1
        if shared.users > 0:
            return
        del _clients[endpoint]
    shared.client.add_done_callback(_close)


def _build(future: concurrent.futures.Future[Any], base_url: str | None, api_key: str) -> None:
    try:
        import openai

        built = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=_SDK_TIMEOUT_S)
    except BaseException as exc:  # handed to every batch, which abstains with it
        future.set_exception(exc)
    else:
        future.set_result(built)


def _close(future: concurrent.futures.Future[Any]) -> None:
    if future.exception() is None:
        from rewardhub import background_loop

        asyncio.run_coroutine_threadsafe(future.result().close(), background_loop())


def _forget_after_fork() -> None:
    """A forked child has none of its parent's threads or loop: it builds its own clients."""
    global _lock
    _lock = threading.Lock()
    _clients.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
