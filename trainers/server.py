"""The HTTP reward server behind ``rewardhub serve``: OpenRLHF's protocol, a native endpoint, health.

Endpoints (JSON in and out; errors are ``{"error": message}`` with a 4xx/5xx status):

- ``POST /`` and ``POST /get_reward`` — OpenRLHF: ``{"query", "prompts", "labels"}`` parallel
  lists -> ``{"rewards", "scores", "extra_logs"}`` (see :mod:`rewardhub.trainers.openrlhf`).
- ``POST /score`` — native: ``{"rows": [{"prompt", "completion", <columns>...}]}`` ->
  ``{"values", "components": {alias: [...]}, "reasons": {alias: [...]}}`` (``null`` = abstained).
- ``GET /health`` — scores a probe row through the whole set; 200 with each reward's outcome, 503
  if scoring raised or did not finish within ``health_timeout`` seconds.

Sync rewards run in a thread pool and async ones on rewardhub's background loop, so the event loop
keeps serving while a slow reward works; a bearer token (when set) guards the scoring endpoints.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from rewardhub import Batch, RewardhubError, RewardSet

from . import openrlhf
from .errors import BadRequest

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_THREADS = 32
PROBE_ROW = {"prompt": "What is 1 + 1?", "completion": "2", "solution": "2"}


def create_app(
    rewards: RewardSet,
    *,
    token: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    threads: int = DEFAULT_THREADS,
    label_column: str = openrlhf.LABEL_COLUMN,
    abstain_value: float = 0.0,
    strip_tokens: Sequence[str] = openrlhf.STRIP_TOKENS,
    probe_row: dict[str, Any] | None = None,
    health_timeout: float = 30.0,
):
    """The Starlette app serving ``rewards`` (run it with any ASGI server; ``serve`` uses uvicorn)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rewardhub-serve")
    probe = Batch.from_rows([probe_row or PROBE_ROW])

    async def openrlhf_endpoint(request: Request) -> JSONResponse:
        body = await _json_object(request, token, max_body_bytes)
        if "query" not in body:
            raise BadRequest("missing 'query': a list of prompt+response strings (OpenRLHF protocol)")
        batch = openrlhf.to_batch(body["query"], body.get("prompts"), body.get("labels"), label_column, strip_tokens)
        scored = await rewards.aevaluate_batch(batch, executor)
        return JSONResponse(openrlhf.to_response(scored, rewards.reward_weights, abstain_value))

    async def score_endpoint(request: Request) -> JSONResponse:
        body = await _json_object(request, token, max_body_bytes)
        scored = await rewards.aevaluate_batch(_rows_batch(body.get("rows")), executor)
        return JSONResponse({
            "values": scored.totals,
            "components": scored.component_values(),
            "reasons": scored.component_reasons(),
        })

    async def health_endpoint(request: Request) -> JSONResponse:
        start = time.perf_counter()
        try:
            scored = await asyncio.wait_for(rewards.aevaluate_batch(probe, executor), health_timeout)
        except TimeoutError:
            return _error(f"scoring the probe row took longer than {health_timeout:g} s", 503)
        except Exception as exc:
            return _error(f"scoring the probe row failed: {type(exc).__name__}: {exc}", 503)
        outcome = {
            alias: {"value": r.scores[0].value, "reason": r.scores[0].reason, "errors": r.errors}
            for alias, r in scored.components.items()
        }
        return JSONResponse({"status": "ok", "seconds": time.perf_counter() - start, "rewards": outcome})

    @asynccontextmanager
    async def lifespan(app):
        yield
        executor.shutdown(wait=False, cancel_futures=True)

    routes = [
        Route("/", _guarded(openrlhf_endpoint), methods=["POST"]),
        Route("/get_reward", _guarded(openrlhf_endpoint), methods=["POST"]),
        Route("/score", _guarded(score_endpoint), methods=["POST"]),
        Route("/health", health_endpoint, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _guarded(endpoint):
    """Turn request errors into JSON 4xx answers (and contract bugs into a 500 with the message)."""

    async def wrapped(request):
        try:
            return await endpoint(request)
        except BadRequest as exc:
            return _error(str(exc), exc.status, auth=exc.status == 401)
        except RewardhubError as exc:  # e.g. RewardInputError from malformed rows, a plugin contract bug
            status = 422 if isinstance(exc, ValueError) else 500
            return _error(f"{type(exc).__name__}: {exc}", status)

    return wrapped


def _error(message: str, status: int, auth: bool = False):
    from starlette.responses import JSONResponse

    headers = {"WWW-Authenticate": "Bearer"} if auth else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def _json_object(request, token: str | None, max_body_bytes: int) -> dict[str, Any]:
    """Check the token, read at most ``max_body_bytes`` and parse a JSON object, or raise BadRequest."""
    _check_token(request.headers.get("authorization"), token)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body_bytes:
        raise BadRequest(f"request body of {int(declared)} bytes exceeds the limit of {max_body_bytes} bytes", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body_bytes:
            raise BadRequest(f"request body exceeds the limit of {max_body_bytes} bytes", 413)
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}", 400) from None
    except RecursionError:
        raise BadRequest("request body is nested too deeply to parse", 400) from None
    if not isinstance(body, dict):
        raise BadRequest(f"request body must be a JSON object, got {type(body).__name__}", 400)
    return body


def _check_token(header: str | None, token: str | None) -> None:
    if token is None:
        return
    if not header:
        raise BadRequest("missing bearer token: send the header 'Authorization: Bearer <token>'", 401)
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise BadRequest("invalid bearer token", 401)


def _rows_batch(rows: Any) -> Batch:
    if not isinstance(rows, list) or not rows:
        raise BadRequest("'rows' must be a non-empty list of objects with 'prompt', 'completion' and columns")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise BadRequest(f"rows[{i}] must be an object, got {type(row).__name__}")
        if "completion" not in row:
            raise BadRequest(f"rows[{i}] has no 'completion'")
    return Batch.from_rows(rows)


def serve(
    config: Any, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info", **options: Any
) -> None:
    """Load ``config`` and serve it with uvicorn until interrupted (``options`` go to :func:`create_app`)."""
    import uvicorn

    import rewardhub

    app = create_app(rewardhub.load(config), **options)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)
