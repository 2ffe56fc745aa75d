"""Graceful drain for ``rewardhub serve`` and ``rewardhub route``: on SIGTERM, finish what is in flight.

After the first SIGTERM the process stops being ready (``GET /ready`` answers 503, so a router or a
load balancer stops sending), answers new scoring requests with a retryable 503 (``Retry-After``),
lets the requests in flight finish (their answers close their connections), then exits. Work that
would wait for more requests is told to stop waiting (``when_draining``: the server scores the groups
still waiting as incomplete) rather than held to deadlines past a supervisor's kill. A second SIGTERM,
SIGINT, or ``drain_timeout`` seconds without the work finishing ends it at once: what is still open
then (a client still sending its body, a request still scoring) is cancelled within ``SHUTDOWN_GRACE``
seconds, so nothing a client does keeps the process alive past its drain timeout.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "DEFAULT_DRAIN_TIMEOUT",
    "Drain",
    "DrainMiddleware",
    "PROBES",
    "RETRY_AFTER_SECONDS",
    "SHUTDOWN_GRACE",
    "draining_server",
    "logger",
    "readiness",
    "unavailable",
]

DEFAULT_DRAIN_TIMEOUT = 150.0  # waiting groups are answered at once; a reward still scoring has its deadline
RETRY_AFTER_SECONDS = 1
SHUTDOWN_GRACE = 1.0  # seconds uvicorn's shutdown waits for open connections before cancelling their requests
logger = logging.getLogger("rewardhub.drain")
PROBES = frozenset({"/ready", "/health", "/metrics"})  # always answered, even while draining


class Drain:
    """The process's drain state, and the count of requests in flight that a drain waits for."""

    def __init__(self, timeout: float = DEFAULT_DRAIN_TIMEOUT):
        self.timeout = timeout
        self.draining = False
        self.inflight = 0
        self._idle: asyncio.Event | None = None
        self._callbacks: list[Callable[[], None]] = []

    def start(self) -> None:
        self.draining = True

    def when_draining(self, callback: Callable[[], None]) -> None:
        """Have ``callback`` called (on the event loop, without arguments) when the drain begins."""
        self._callbacks.append(callback)

    async def finish(self) -> bool:
        """Tell the ``when_draining`` callbacks, then wait until nothing is in flight (see ``wait_idle``)."""
        for callback in self._callbacks:
            try:
                callback()
            except Exception:  # one failing callback must not keep the drain from completing
                logger.exception("a drain callback failed")
        return await self.wait_idle()

    async def wait_idle(self) -> bool:
        """Wait until nothing is in flight (True) or ``timeout`` passed (False)."""
        deadline = time.monotonic() + self.timeout
        while self.inflight > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._idle = asyncio.Event()
            try:
                await asyncio.wait_for(self._idle.wait(), min(left, 0.5))
            except TimeoutError:
                pass
        return True

    def _left(self) -> None:
        self.inflight -= 1
        if self.inflight == 0 and self._idle is not None:
            self._idle.set()


class DrainMiddleware:
    """ASGI middleware: while draining, scoring requests get a retryable 503; others are counted in flight."""

    def __init__(self, app: Any, drain: Drain):
        self.app, self.drain = app, drain

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] in PROBES:
            return await self.app(scope, receive, send)
        if self.drain.draining:
            return await unavailable(send, "this process is draining before it exits: send the request to "
                                           "another replica or retry", RETRY_AFTER_SECONDS)
        self.drain.inflight += 1
        try:
            await self.app(scope, receive, self._closing_while_draining(send))
        finally:
            self.drain._left()

    def _closing_while_draining(self, send):
        """``send`` adding ``Connection: close`` to a response that leaves while draining: its client does
        not keep a connection the exiting process is about to close under its next request."""
        async def closing(message):
            if message["type"] == "http.response.start" and self.drain.draining:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        return closing


async def unavailable(send, message: str, retry_after: int, status: int = 503) -> None:
    """Answer a raw ASGI request with a JSON error that clients retry (``retryable``, ``Retry-After``)."""
    body = json.dumps({"error": message, "retryable": True}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(retry_after).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def readiness(drain: Drain, ready: bool = True, why: str = ""):
    """The ``/ready`` answer: 200 while serving, 503 while draining (or not ready, with ``why``)."""
    from starlette.responses import JSONResponse

    if drain.draining:
        return JSONResponse({"status": "draining", "in_flight": drain.inflight}, 503)
    if not ready:
        return JSONResponse({"status": "not ready", "reason": why}, 503)
    return JSONResponse({"status": "ready"})


def draining_server(config: Any, drain: Drain):
    """A ``uvicorn.Server`` whose first SIGTERM drains (see the module) instead of stopping at once, and
    whose shutdown cancels what is still open after ``SHUTDOWN_GRACE`` (uvicorn would wait for it forever)."""
    import uvicorn

    if config.timeout_graceful_shutdown is None:
        config.timeout_graceful_shutdown = SHUTDOWN_GRACE

    class DrainingServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if sig != signal.SIGTERM or drain.draining or self.should_exit:
                return super().handle_exit(sig, frame)
            drain.start()
            asyncio.get_running_loop().call_soon_threadsafe(
                lambda: asyncio.ensure_future(self._drain_then_exit(sig, frame)))

        async def _drain_then_exit(self, sig: int, frame: Any) -> None:
            await drain.finish()
            super().handle_exit(sig, frame)

        def stop(self) -> None:
            """Drain and exit as a SIGTERM would, from the event loop, without a signal (so the process
            ends with the command's own exit code, not by the signal uvicorn would raise again)."""
            if drain.draining or self.should_exit:
                return
            drain.start()

            async def drain_then_exit() -> None:
                await drain.finish()
                self.should_exit = True

            asyncio.ensure_future(drain_then_exit())

    return DrainingServer(config)
