"""Sandbox services for the remote backend's tests: ``rewardhub sandbox serve`` in its own process
(the command as a user runs it, stopped by its pid), and a misbehaving SandboxFusion look-alike on
127.0.0.1 whose base path says how it fails (``/status500``, ``/status503``, ``/garbage``, ...)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import httpx


@contextlib.contextmanager
def sandbox_serve(port: int, workers: int = 2, args: tuple[str, ...] = (), env: dict[str, str] | None = None):
    """``rewardhub sandbox serve --port PORT [args]`` once its ``/ready`` answers; yields ``(url, process)``."""
    proc = subprocess.Popen([sys.executable, "-m", "rewardhub.cli", "sandbox", "serve", "--port", str(port),
                             "--backend", "local", "--workers", str(workers), "--log-level", "warning", *args],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            try:
                if httpx.get(url + "/ready").status_code == 200:
                    break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.1)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


# What each failure mode answers to POST {mode}/run_code: (status, body as JSON or raw text).
FINISHED = {"status": "Finished", "return_code": 0, "stdout": "3\n", "stderr": "", "execution_time": 0.1}
FAILURES = {
    "/status500": (500, "internal error"),
    "/status503": (503, {"detail": "not ready"}),
    "/garbage": (200, "<html>proxy error</html>"),
    "/not-a-response": (200, {"result": "ok"}),
    "/wrong-types": (200, {"status": "Success", "message": "", "compile_result": None, "files": {},
                           "run_result": {**FINISHED, "stdout": 3}}),
    "/no-return-code": (200, {"status": "Success", "message": "", "compile_result": None, "files": {},
                              "run_result": {**FINISHED, "return_code": None}}),
    "/run-error": (200, {"status": "Failed", "message": "", "compile_result": None, "files": {},
                         "run_result": {**FINISHED, "status": "Error", "return_code": None}}),
    "/sandbox-error": (200, {"status": "SandboxError", "message": "pod evicted", "compile_result": None,
                             "run_result": None, "files": {}}),
}


def failing_service(hang: threading.Event | None = None):
    """A Starlette app failing as its path's mode says; ``/hang/run_code`` waits until ``hang`` is set
    (never answering in time). ``app.state.hits`` counts requests by path (``/ready`` answers 503 everywhere)."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, PlainTextResponse
    from starlette.routing import Route

    hits: Counter[str] = Counter()

    async def answer(request):
        path = request.url.path
        hits[path] += 1
        if path.endswith("/ready"):
            return JSONResponse({"status": "not ready"}, 503)
        mode = path.removesuffix("/run_code")
        if mode == "/hang":
            while not (hang and hang.is_set()):
                await asyncio.sleep(0.05)
            return JSONResponse({}, 500)
        status, body = FAILURES[mode]
        return PlainTextResponse(body, status) if isinstance(body, str) else JSONResponse(body, status)

    app = Starlette(routes=[Route("/{path:path}", answer, methods=["GET", "POST"])])
    app.state.hits = hits
    return app
