"""The uvicorn settings every rewardhub HTTP process runs with (reward server, router, sandbox service),
and the request checks they share: the bearer token, a body read within its limit, a public bind.

HTTP/1.1 keep-alive has a race: a client that reuses an idle connection at the moment the server
closes it gets "server disconnected" for a request the server never read. Clients only avoid it if
they drop idle connections first, so the server keeps them open longer than common clients keep
them (httpx 5 s, aiohttp 15 s) and load balancers' idle timeouts (60 s): uvicorn's own default, 5 s,
is the same as httpx's and loses that race under load.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from .errors import RewardhubError

__all__ = ["KEEP_ALIVE_SECONDS", "BodyTooLarge", "bearer_problem", "is_loopback", "read_body", "uvicorn_config"]

KEEP_ALIVE_SECONDS = 75  # nginx's default; longer than every client pool and balancer idle timeout above


class BodyTooLarge(RewardhubError):
    """A request body is over the process's limit (answered 413 before the rest of it is read)."""


def bearer_problem(header: str | None, token: str | None) -> str | None:
    """What is wrong with a request's ``Authorization`` header for ``token`` (None: nothing, or no token set)."""
    if token is None:
        return None
    if not header:
        return "missing bearer token: send the header 'Authorization: Bearer <token>'"
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        return "invalid bearer token"
    return None


async def read_body(request: Any, max_bytes: int) -> bytes:
    """A Starlette request's body, refused by its ``Content-Length`` before any of it is read, and while
    streaming once more than ``max_bytes`` arrived (a client lying about its length holds no more than that)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge(f"request body of {int(declared)} bytes exceeds the limit of {max_bytes} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(f"request body exceeds the limit of {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (127.0.0.1, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def uvicorn_config(app: Any, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
                   **options: Any) -> Any:
    """A ``uvicorn.Config`` for ``app`` with rewardhub's keep-alive and no uvicorn access log
    (rewardhub's servers log requests themselves)."""
    import uvicorn

    settings = {"access_log": False, "timeout_keep_alive": KEEP_ALIVE_SECONDS, **options}
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, **settings)
