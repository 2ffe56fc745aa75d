"""``rewardhub sandbox serve``: rewardhub's sandbox behind SandboxFusion's HTTP API.

verl's code rewards (``reward.sandbox_fusion.url``) and other RL stacks call a SandboxFusion server;
pointing them here runs their programs in rewardhub's isolated, warm sandbox instead. Endpoints:

- ``POST /run_code`` — SandboxFusion's ``RunCodeRequest`` -> ``RunCodeResponse`` (see :mod:`.fusion`);
  a malformed body is answered 422, a request this service cannot run ``SandboxError``.
- ``GET /ready`` — 200 once the backend runs programs; ``GET /health`` runs a probe program.

With a ``token`` (``--token-env``), ``/run_code`` and ``/health`` (it runs a program) need
``Authorization: Bearer <token>`` (the remote backend's ``token`` option sends it); ``/ready`` stays open
for probes. A body over the limit is refused by its ``Content-Length``, or as soon as more arrived, never
read whole first. Programs run concurrently on the backend's slots, the event loop never waiting on one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import asynccontextmanager
from typing import Any

from rewardhub.http_serving import BodyTooLarge, bearer_problem, read_body

from .backends import get_backend
from .errors import SandboxError
from .fusion import RequestError, Unsupported, to_program, to_response
from .program import Program

__all__ = ["MAX_BODY_BYTES", "PROBE", "create_service", "logger", "serve"]

logger = logging.getLogger("rewardhub.sandbox.service")
MAX_BODY_BYTES = 64 * 1024 * 1024
PROBE = Program("print(6 * 7)", timeout=10)


def create_service(*, backend: str = "auto", max_timeout: float = 300.0, token: str | None = None,
                   max_body_bytes: int = MAX_BODY_BYTES, **backend_options: Any):
    """The Starlette app serving ``/run_code`` with the sandbox ``backend`` (started when the app starts);
    ``token`` guards running programs (see the module)."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    state: dict[str, Any] = {}

    async def run(program: Program):
        chosen = state["backend"]
        submit = getattr(chosen, "submit", None)
        if submit is not None:
            return await asyncio.wrap_future(submit(program))
        return (await asyncio.to_thread(chosen.run_many, [program]))[0]

    def refused(request):
        """The 401 for a request without the token, else None."""
        problem = bearer_problem(request.headers.get("authorization"), token)
        return None if problem is None else JSONResponse({"detail": problem}, 401, {"WWW-Authenticate": "Bearer"})

    async def run_code(request):
        if (answer := refused(request)) is not None:
            return answer
        try:
            raw = await read_body(request, max_body_bytes)
        except BodyTooLarge as exc:
            return JSONResponse({"detail": str(exc)}, 413, {"Connection": "close"})
        try:
            program = to_program(json.loads(raw), max_timeout=max_timeout)
        except (ValueError, RecursionError) as exc:  # RequestError, or JSON that does not parse
            return JSONResponse({"detail": str(exc) if isinstance(exc, RequestError) else f"invalid JSON: {exc}"}, 422)
        except Unsupported as exc:
            return JSONResponse(_sandbox_error(str(exc)))
        if state.get("problem"):
            return JSONResponse(_sandbox_error(state["problem"]))
        try:
            result = await run(program)
        except SandboxError as exc:
            return JSONResponse(_sandbox_error(f"{type(exc).__name__}: {exc}"))
        return JSONResponse(to_response(program, result))

    async def ready(request):
        problem = state.get("problem")
        return JSONResponse({"status": "not ready", "reason": problem} if problem else {"status": "ready"},
                            503 if problem else 200)

    async def health(request):
        if (answer := refused(request)) is not None:
            return answer
        if state.get("problem"):
            return await ready(request)
        result = await run(PROBE)
        ok = result.ok and result.stdout.strip() == "42"
        return JSONResponse({"status": "ok" if ok else "failing", "backend": state["backend"].name,
                             "probe": {"reason": result.reason, "error": result.error, "seconds": result.duration}},
                            200 if ok else 503)

    @asynccontextmanager
    async def lifespan(app):
        try:
            state["backend"] = await asyncio.to_thread(get_backend, backend, **backend_options)
            await run(PROBE)  # start the backend's workers now, not on the first request
        except SandboxError as exc:
            state["problem"] = f"{type(exc).__name__}: {exc}"
            logger.error("sandbox backend %r cannot run programs: %s", backend, exc)
        yield

    return Starlette(routes=[Route("/run_code", run_code, methods=["POST"]), Route("/ready", ready, methods=["GET"]),
                             Route("/health", health, methods=["GET"])], lifespan=lifespan)


def _sandbox_error(message: str) -> dict[str, Any]:
    return {"status": "SandboxError", "message": message, "compile_result": None, "run_result": None,
            "executor_pod_name": None, "files": {}}


def serve(*, host: str = "127.0.0.1", port: int = 8080, log_level: str = "info", **options: Any) -> None:
    """Run the service with uvicorn until interrupted (``options`` go to :func:`create_service`)."""
    import uvicorn

    from rewardhub.http_serving import uvicorn_config

    uvicorn.Server(uvicorn_config(create_service(**options), host=host, port=port, log_level=log_level)).run()
