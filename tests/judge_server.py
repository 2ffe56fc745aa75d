"""A scriptable OpenAI-compatible chat server on 127.0.0.1 for the judge's tests and benchmark.

It answers ``POST /v1/chat/completions`` from a background thread. By default the answer is the
text between ``[[`` and ``]]`` in the last message (so a test scripts each row's answer inside the
completion it scores), else ``"5"``. ``server.script`` holds :class:`Reply` objects served first,
one per request (429 with Retry-After, 500s, hangs, malformed bodies...); ``server.answer`` may
be replaced by any ``body -> str | Reply`` function; ``limit_every=n`` answers every n-th request
429 with Retry-After; ``gather=n`` holds the first requests until n are in flight at once (a test of a
concurrency cap then sees the cap reached however slowly a busy machine lets the client send). It
records request bodies, headers, client connections and the maximum number of requests in flight
(also served as JSON at ``GET /stats``, reset by ``POST /reset``).
Run it as a script to serve from its own process (the benchmark does, so that it does not share
the client's GIL).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

GATHER_WAIT = 4.0  # seconds a gathering request waits at most: under the judge fixture's 5 s request timeout
MARKER = re.compile(r"\[\[(.*?)\]\]", re.S)


@dataclass
class Reply:
    """One scripted response: content with status/headers, or a failure mode."""

    content: str | None = "5"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float | None = None  # overrides the server's latency for this request
    hang: bool = False  # never answer (until the server stops)
    body: str | None = None  # raw body sent as is (e.g. malformed JSON)
    error: str = "scripted failure"
    echo_key: bool = False  # echo the Authorization header (in the error message, the answer, or for
    # "{authorization}" in a raw body), as some proxies and models do
    logprobs: list[tuple[str, dict[str, float]]] | None = None  # (token, {alternative: probability})
    reasoning: str | None = None  # a reasoning parser's thinking beside the content, in field ``reasoning_field``
    reasoning_field: str = "reasoning_content"  # vLLM 0.32 names it "reasoning"
    finish_reason: str = "stop"


def marker_answer(body: dict[str, Any]) -> str | Reply:
    """Default answer: the ``[[...]]`` marker of the last message, else "5"."""
    found = MARKER.search(str(body["messages"][-1]["content"]))
    return found.group(1) if found else "5"


class JudgeServer:
    """OpenAI-compatible chat endpoint in a thread; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        answer: Callable[[dict[str, Any]], str | Reply] = marker_answer,
        limit_every: int = 0,
        retry_after: float = 0.1,
    ):
        self.latency = latency
        self.answer = answer
        self.limit_every = limit_every  # answer every n-th request 429 with Retry-After, like a rate limiter
        self.retry_after = retry_after
        self.script: deque[Reply] = deque()
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []
        self.connections: set[tuple[str, int]] = set()  # client (host, port) pairs: new ones are new connections
        self.in_flight = 0
        self.max_in_flight = 0
        self.gather = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._release: asyncio.Event | None = None
        self._gathered: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def requests(self) -> int:
        return len(self.bodies)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> JudgeServer:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name="judge-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("judge test server did not start")
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        loop, runner = self._loop, self._runner
        loop.call_soon_threadsafe(self._release.set)
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        self._loop = None

    def reset(self) -> None:
        """Forget recorded requests (the script and answer function stay)."""
        with self._lock:
            self.bodies.clear()
            self.headers.clear()
            self.arrivals.clear()
            self.connections.clear()
            self.max_in_flight = 0
        if self._loop is not None:  # on the server's loop, before any request sent after this call
            self._loop.call_soon_threadsafe(self._gathered.clear)

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- serving ----------------------------------------------------------------------------
    def _serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/reset", self._reset)
        runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        loop.run_until_complete(site.start())
        self.port = runner.addresses[0][1]
        self._loop, self._runner, self._release, self._gathered = loop, runner, asyncio.Event(), asyncio.Event()
        ready.set()
        loop.run_forever()
        loop.close()

    async def _stats(self, request: web.Request) -> web.Response:
        """Counters for a client in another process (the benchmark)."""
        return web.json_response({"requests": self.requests, "max_in_flight": self.max_in_flight})

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.bodies.append(body)
            self.headers.append(dict(request.headers))
            self.arrivals.append(time.monotonic())
            self.connections.add(request.transport.get_extra_info("peername"))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            gathering = self.gather and not self._gathered.is_set() and self.in_flight < self.gather
            scripted = self.script.popleft() if self.script else None
            if scripted is None and self.limit_every and len(self.bodies) % self.limit_every == 0:
                scripted = Reply(status=429, headers={"Retry-After": f"{self.retry_after:g}"}, error="rate limited")
        try:
            if gathering:
                with contextlib.suppress(TimeoutError):  # released anyway short of the judge's 5 s timeout
                    async with asyncio.timeout(GATHER_WAIT):
                        await self._gathered.wait()
            elif self.gather:
                self._gathered.set()
            reply = scripted or self.answer(body)
            if isinstance(reply, str):
                reply = Reply(reply)
            if reply.hang:
                await self._release.wait()
                return web.Response(status=503)
            delay = self.latency if reply.delay is None else reply.delay
            if delay:
                await asyncio.sleep(delay)
            return self._response(body, reply, request)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _response(self, body: dict[str, Any], reply: Reply, request: web.Request) -> web.Response:
        authorization = request.headers.get("Authorization", "")
        if reply.body is not None:
            text = reply.body.replace("{authorization}", authorization) if reply.echo_key else reply.body
            return web.Response(text=text, status=reply.status, headers=reply.headers, content_type="application/json")
        if reply.status != 200:
            message = reply.error
            if reply.echo_key:
                message += f" (key used: {authorization.removeprefix('Bearer ')})"
            error = {"error": {"message": message, "type": "scripted", "code": reply.status}}
            return web.json_response(error, status=reply.status, headers=reply.headers)
        if reply.echo_key:
            reply = dataclasses.replace(reply, content=f"{reply.content} (your request said Authorization: {authorization})")
        return web.json_response(_completion(body, reply), headers=reply.headers)


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body["messages"])
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.content,
                    **({reply.reasoning_field: reply.reasoning} if reply.reasoning is not None else {})},
        "finish_reason": reply.finish_reason,
        "logprobs": None,
    }
    if body.get("logprobs") and reply.logprobs is not None:
        choice["logprobs"] = {
            "content": [
                {
                    "token": token,
                    "logprob": math.log(alternatives.get(token, 1.0)),
                    "bytes": None,
                    "top_logprobs": [
                        {"token": alt, "logprob": math.log(p), "bytes": None} for alt, p in alternatives.items()
                    ],
                }
                for token, alternatives in reply.logprobs
            ]
        }
    content_chars = len(reply.content or "")
    usage = {"prompt_tokens": prompt_chars // 4 + 1, "completion_tokens": content_chars // 4 + 1}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {
        "id": f"chatcmpl-{len(body['messages'])}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "judge"),
        "choices": [choice],
        "usage": usage,
    }


# ----- pytest fixtures and helpers of tests/test_judge*.py ---------------------------------------------
# Test modules import the *_fixture functions; the fixtures are named running_server, server and judge.
KEY_ENV = "REWARDHUB_TEST_JUDGE_KEY"
SECRET = "sk-test-DO-NOT-LEAK-4f9a2c"


@pytest.fixture(scope="session", name="running_server")
def running_server_fixture():
    with JudgeServer() as server:
        yield server


@pytest.fixture(name="server")
def server_fixture(running_server):
    """The session's server, with recorded requests, script, latency and answer function reset."""
    running_server.reset()
    running_server.script.clear()
    running_server.latency = 0.0
    running_server.gather = 0
    running_server.answer = marker_answer
    return running_server


@pytest.fixture(name="judge")
def judge_fixture(server, monkeypatch):
    """Build a judge on the test server with fast retries; keyword args override params."""
    import rewardhub

    monkeypatch.setenv(KEY_ENV, SECRET)
    made = []

    def make(**params):
        params = {"base_url": server.base_url, "model": "judge-test", "api_key_env": KEY_ENV,
                  "backoff": 0.01, "max_backoff": 0.05, "timeout": 5.0, **params}  # fmt: skip
        made.append(rewardhub.get("judge", **params))
        return made[-1]

    yield make
    for reward in made:
        reward.close()


def rows(*answers: str) -> tuple[list[str], list[str]]:
    """Prompts and completions whose scripted judge answers are ``answers``."""
    return [f"question {i}" for i in range(len(answers))], [f"completion {i} [[{a}]]" for i, a in enumerate(answers)]


def sent(server: JudgeServer, needle: str) -> list[dict]:
    """The messages of the request whose last message contains ``needle`` (requests arrive in any order)."""
    return next(b["messages"] for b in server.bodies if needle in b["messages"][-1]["content"])



def main() -> None:
    """Serve in the foreground (``python tests/judge_server.py --latency 0.1``); prints the base URL."""
    import argparse

    parser = argparse.ArgumentParser(description="scriptable OpenAI-compatible judge server on 127.0.0.1")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--limit-every", type=int, default=0, help="answer every n-th request 429 (0: never)")
    parser.add_argument("--retry-after", type=float, default=0.1, help="Retry-After of those 429s, in seconds")
    args = parser.parse_args()
    with JudgeServer(latency=args.latency, limit_every=args.limit_every, retry_after=args.retry_after) as server:
        print(server.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
