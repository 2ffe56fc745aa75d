"""The uvicorn settings every rewardhub HTTP process runs with (reward server, router, sandbox service).

HTTP/1.1 keep-alive has a race: a client that reuses an idle connection at the moment the server
closes it gets "server disconnected" for a request the server never read. Clients only avoid it if
they drop idle connections first, so the server keeps them open longer than common clients keep
them (httpx 5 s, aiohttp 15 s) and load balancers' idle timeouts (60 s): uvicorn's own default, 5 s,
is the same as httpx's and loses that race under load.
"""

from __future__ import annotations

from typing import Any

KEEP_ALIVE_SECONDS = 75  # nginx's default; longer than every client pool and balancer idle timeout above


def uvicorn_config(app: Any, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
                   **options: Any) -> Any:
    """A ``uvicorn.Config`` for ``app`` with rewardhub's keep-alive and no uvicorn access log
    (rewardhub's servers log requests themselves)."""
    import uvicorn

    settings = {"access_log": False, "timeout_keep_alive": KEEP_ALIVE_SECONDS, **options}
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, **settings)
