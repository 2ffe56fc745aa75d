"""Shared helpers for the trainer, server and shim tests: test-local rewards and a threaded server.

Importing this module registers the rewards (source "test"); child processes import it too, so
pickled rewards and ``rewardhub serve`` subprocesses see the same names. It holds no tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading

from paths import TESTS

import rewardhub
from rewardhub import registry

# Set by tests to release `th_gate` rewards that block until then (no timed assertions needed).
GATE = threading.Event()


@rewardhub.sample_reward(name="th_contains")
def th_contains(text, solution, *, bonus: float = 0.0):
    """1.0 (+bonus) when the reference solution appears in the completion."""
    if solution is None:
        return None, "no reference solution"
    found = str(solution) in text
    return (1.0 + bonus if found else 0.0), ("found the solution" if found else f"missing {solution!r}")


@rewardhub.sample_reward(name="th_async_len")
async def th_async_len(text, *, target: int = 20):
    """Async: length of the completion relative to ``target`` chars, capped at 1."""
    await asyncio.sleep(0)
    return min(len(text) / target, 1.0), f"{len(text)} chars"


@rewardhub.sample_reward(name="th_sometimes")
def th_sometimes(text):
    """Abstains (None) on completions of even length; 0.5 otherwise."""
    if len(text) % 2 == 0:
        return None, "even length: not applicable"
    return 0.5, "odd length"


@rewardhub.sample_reward(name="th_gate")
def th_gate(text, wait="no"):
    """Blocks rows whose ``wait`` column is "yes" until GATE is set (a slow reward on demand)."""
    if wait == "yes" and not GATE.wait(timeout=60):
        return None, "gate never opened"
    return 1.0, "passed the gate"


@rewardhub.sample_reward(name="th_async_gate")
async def th_async_gate(text, wait="no"):
    """Async twin of th_gate: waits without holding a thread of the pool."""
    if wait == "yes":
        opened = await asyncio.to_thread(GATE.wait, 60)
        if not opened:
            return None, "gate never opened"
    return 1.0, "passed the async gate"


@rewardhub.sample_reward(name="th_boom")
def th_boom(text):
    """Raises on completions containing "boom" (the error policy turns that into None + reason)."""
    if "boom" in text:
        raise RuntimeError("exploded on purpose")
    return 1.0


FACTORIES = (th_contains, th_async_len, th_sometimes, th_gate, th_async_gate, th_boom)


def ensure_registered() -> None:
    """(Re-)register the test rewards: another test's registry snapshot may have dropped them."""
    for factory in FACTORIES:
        if factory.name not in registry:
            registry.add(factory, source="test")


ensure_registered()


COMPOSED = {
    "rewards": [
        {"name": "th_contains", "weight": 1.0},
        {"name": "th_async_len", "alias": "length", "weight": 0.5},
        {"name": "th_sometimes", "weight": 0.25},
    ]
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_server(app):
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread, with the settings rewardhub's commands use
    (their keep-alive included); yields the base URL."""
    import uvicorn

    from rewardhub.http_serving import uvicorn_config

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the test server did not start")
            threading.Event().wait(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def reuse_after_idle(base_url: str, idle: float, path: str = "/ready") -> list[int]:
    """Two GETs of ``path`` on one kept-alive TCP connection, ``idle`` seconds apart: their status codes.
    Raises (``RemoteDisconnected``) when the server closed the idle connection meanwhile."""
    import http.client
    import time
    from urllib.parse import urlsplit

    where = urlsplit(base_url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        connection.request("GET", path)
        first = connection.getresponse()
        first.read()
        sock = connection.sock
        time.sleep(idle)
        connection.request("GET", path)
        second = connection.getresponse()
        second.read()
        assert connection.sock is sock, "http.client opened a second connection"
        return [first.status, second.status]
    finally:
        connection.close()


# How a drained ``rewardhub serve`` / ``route`` exits: 0, or 143 (128 + SIGTERM) as the CLI ends a command a
# SIGTERM stopped.
DRAINED_EXIT = (0, 128 + signal.SIGTERM, -signal.SIGTERM)

# majority_vote over groups of 4 (string equality) plus a per-sample reward: group-assembly tests.
VOTE = {"rewards": [{"name": "majority_vote", "alias": "vote", "weight": 1.0,
                     "params": {"group_size": 4, "equivalence": "string"}},
                    {"name": "th_contains", "alias": "contains", "weight": 0.5}]}


@contextlib.contextmanager
def serve_process(serve_args: list[str], *, env: dict | None = None):
    """``rewardhub serve`` in its own process on a free port; yields ``(base URL, process)`` once /health
    answers, and stops the process on exit (its stderr stays readable). ``serve_args`` follow ``serve``."""
    with command_process("serve", serve_args, "/health", env=env) as running:
        yield running


@contextlib.contextmanager
def route_process(route_args: list[str], *, env: dict | None = None):
    """``rewardhub route`` in its own process on a free port, as :func:`serve_process` (ready at /ready)."""
    with command_process("route", route_args, "/ready", env=env) as running:
        yield running


@contextlib.contextmanager
def command_process(command: str, args: list[str], ready_path: str, *, env: dict | None = None,
                    port: int | None = None):
    """``rewardhub COMMAND --port P ARGS`` in its own process; yields ``(base URL, process)`` once
    ``ready_path`` answers 200, and stops it on exit (SIGTERM, then SIGKILL; its stderr stays readable)."""
    import subprocess
    import sys
    import time

    import httpx

    port = port or free_port()
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import serving; "
              "from rewardhub.cli import main; sys.exit(main(sys.argv[2:]))")  # the test rewards registered too
    proc = subprocess.Popen([sys.executable, "-c", script, str(TESTS), command, "--port", str(port), *args],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}{ready_path}", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                if proc.poll() is not None:
                    raise RuntimeError(f"rewardhub {command} exited: {proc.stderr.read()}") from None
                time.sleep(0.1)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def in_flight(base: str) -> float:
    """The server's requests in flight, the /metrics request asking included."""
    import httpx

    text = httpx.get(base + "/metrics", timeout=30).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("rewardhub_requests_in_flight"))


def counted(base: str, prefix: str) -> float:
    import httpx

    text = httpx.get(base + "/metrics", timeout=30).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


def until(condition, what: str, tries: int = 1200) -> None:
    """Poll ``condition`` (every 50 ms, a minute at most: a generous bound, not a timing)."""
    for _ in range(tries):
        if condition():
            return
        threading.Event().wait(0.05)
    raise AssertionError(f"never happened: {what}")
