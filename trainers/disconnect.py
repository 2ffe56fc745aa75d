"""Stop the work of a request whose client has gone, so that the request is not counted twice.

A client that gives up on an answer (a proxy's idle timeout, a reset, its own timeout) retries, as
OpenRLHF's does: the request it abandoned must stop, and a completion waiting for its group must
leave it (the group assembler withdraws a cancelled waiter), or the retry would vote a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

__all__ = ["CLIENT_CLOSED", "ClientDisconnected", "T", "gone_response", "unless_disconnected"]

CLIENT_CLOSED = 499  # nginx's "client closed request": logged and counted, never sent to anyone

T = TypeVar("T")


class ClientDisconnected(Exception):
    """The client closed its connection before its answer was ready; its work was cancelled."""


async def unless_disconnected(receive: Any, work: Awaitable[T]) -> T:
    """``work``'s result; raises :class:`ClientDisconnected` (after cancelling ``work``) once the client
    disconnects. ``receive`` is the request's ASGI receive, called only after its body was read."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnect(receive))
    try:
        done, _ = await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # this request itself was cancelled (the server stopping): so is its work
        task.cancel()
        raise
    finally:
        gone.cancel()
    if task in done:
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    raise ClientDisconnected("the client disconnected before its answer was ready")


async def _disconnect(receive: Any) -> None:
    """Return when the ASGI server reports the connection closed (the body was read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def gone_response():
    """The answer to a request whose client has gone (the ASGI server drops it; the logs count it)."""
    from starlette.responses import Response

    return Response(status_code=CLIENT_CLOSED)
