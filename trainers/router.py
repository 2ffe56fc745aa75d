"""``rewardhub route``: one front for several ``rewardhub serve`` replicas that keeps each group on one.

OpenRLHF round-robins over its ``--reward.remote_url`` list and verl picks reward workers at random,
so N replicas assembling groups of 8 would each see fragments of a group. The router reads each
sample's group key (OpenRLHF's ``prompts[i]``; a native row's ``group`` field, else its prompt) and
sends the sample to the replica a consistent-hash ring gives for that key, splitting a request
whose samples belong to several replicas and merging the answers back in order.

Replica health comes from polling each replica's ``GET /ready`` and from the forwards themselves: a
replica that refuses connections, answers 503 (draining) or fails mid-request is marked down at once
and its groups move to the next replica on the ring (only its own groups move); a check that is
merely slow (a busy replica) moves nothing, since moving a group in progress would split it, but
``DOWN_AFTER_TIMEOUTS`` checks in a row without an answer mark a hung replica (one that accepts
connections and never answers) down for new groups, and a forward gives up after ``request_timeout``,
below the clients' own budgets, so their retries reach a live replica. A group keeps the replica it started on
while that replica is up, so a replica coming back does not split groups in progress. A request
whose replica failed after receiving it is answered ``503`` with ``retryable: true`` and
``Retry-After`` (OpenRLHF retries it; the retry lands on the group's new replica): the router never
makes up a score. One that was never received (connection refused, replica draining) is sent to
the next replica right away.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from rewardhub import GROUP_FIELD, group_key

from .disconnect import ClientDisconnected, gone_response, unless_disconnected
from .drain import Drain, DrainMiddleware, readiness
from .errors import BadRequest
from .metrics import Metrics, MetricsMiddleware, metrics_response
from .server import DEFAULT_MAX_BODY_BYTES, _error, _json, _json_object, _step_field
from .steps import step_clock

__all__ = [
    "CHECK_TIMEOUT",
    "CONNECT_TRIES",
    "DOWN_AFTER_TIMEOUTS",
    "HashRing",
    "NoReplica",
    "REQUEST_TIMEOUT",
    "RETRY_AFTER",
    "Replica",
    "ReplicaFailed",
    "Replicas",
    "STICKY_GROUPS",
    "STICKY_SECONDS",
    "VIRTUAL_NODES",
    "create_router_app",
    "logger",
    "merge",
    "route",
]

logger = logging.getLogger("rewardhub.router")

VIRTUAL_NODES = 160  # points per replica on the ring: groups spread within a few percent of evenly
STICKY_SECONDS = 300.0  # how long a group keeps its replica (well past the servers' 120 s group timeout)
STICKY_GROUPS = 200_000  # groups remembered at most (the oldest are forgotten first)
# Below OpenRLHF's 180 s request timeout (a forward to a hung replica is answered 503, retryable, before the
# client gives up) and above a replica's 120 s group timeout plus a scoring.
REQUEST_TIMEOUT = 170.0
CHECK_TIMEOUT = 5.0  # seconds a readiness check waits for its answer
DOWN_AFTER_TIMEOUTS = 3  # readiness checks in a row without an answer before a replica counts as down
RETRY_AFTER = 1
CONNECT_TRIES = 3  # connection attempts (5 s each) to a replica before it counts as down


class ReplicaFailed(Exception):
    """A replica failed with a request it had received: the client must retry it."""


class NoReplica(Exception):
    """No replica is up to take a group."""


def _point(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class HashRing:
    """Consistent hashing: each replica owns many points of a ring; a key belongs to the first point
    clockwise from its hash. Removing a replica moves only the keys it owned."""

    def __init__(self, replicas: Sequence[str], virtual_nodes: int = VIRTUAL_NODES):
        self.replicas = list(replicas)
        points = sorted((_point(f"{replica}#{i}"), replica) for replica in self.replicas for i in range(virtual_nodes))
        self._hashes = [h for h, _ in points]
        self._owners = [r for _, r in points]

    def candidates(self, key: str) -> Iterator[str]:
        """The replicas in the order a key falls back through them: its owner first."""
        start = bisect.bisect(self._hashes, _point(key))
        seen: set[str] = set()
        for i in range(len(self._owners)):
            owner = self._owners[(start + i) % len(self._owners)]
            if owner not in seen:
                seen.add(owner)
                yield owner
                if len(seen) == len(self.replicas):
                    return


@dataclass
class Replica:
    url: str
    up: bool = True  # until a check says otherwise: the router serves as soon as it starts
    reason: str = ""
    since: float = 0.0


class Replicas:
    """The ring, each replica's health, and which replica each recent group went to."""

    def __init__(self, urls: Sequence[str], metrics: Metrics, sticky_seconds: float = STICKY_SECONDS):
        self.ring = HashRing(urls)
        self.state = {url: Replica(url, since=time.monotonic()) for url in urls}
        self.metrics = metrics
        self.sticky_seconds = sticky_seconds
        self._assigned: OrderedDict[str, tuple[str, float]] = OrderedDict()
        for url in urls:
            metrics.replica_up.labels(url).set(1)

    def pick(self, key: str, avoid: frozenset[str] = frozenset()) -> str:
        """The replica for group ``key``: the one it went to while that is up, else the first up on the ring."""
        now = time.monotonic()
        held = self._assigned.get(key)
        if held is not None and held[1] > now and self.state[held[0]].up and held[0] not in avoid:
            self._assigned.move_to_end(key)
            self._assigned[key] = (held[0], now + self.sticky_seconds)
            return held[0]
        candidates = [url for url in self.ring.candidates(key) if url not in avoid]
        up = [url for url in candidates if self.state[url].up]
        if up or candidates:  # none up: try the others all the same (a check may have been slow, not failed)
            url = (up or candidates)[0]
            if url != next(self.ring.candidates(key)):
                self.metrics.reroutes.inc()
            self._remember(key, url, now)
            return url
        raise NoReplica("no reward server replica is up: " + "; ".join(
            f"{r.url}: {r.reason or 'down'}" for r in self.state.values()))

    def _remember(self, key: str, url: str, now: float) -> None:
        self._assigned[key] = (url, now + self.sticky_seconds)
        self._assigned.move_to_end(key)
        while len(self._assigned) > STICKY_GROUPS:
            self._assigned.popitem(last=False)

    def mark(self, url: str, up: bool, reason: str = "") -> None:
        replica = self.state[url]
        if replica.up != up:
            logger.warning("replica %s is %s%s", url, "up" if up else "down", f": {reason}" if reason else "")
            replica.up, replica.since = up, time.monotonic()
        replica.reason = reason
        self.metrics.replica_up.labels(url).set(1 if up else 0)

    def describe(self) -> dict[str, Any]:
        now = time.monotonic()
        return {r.url: {"up": r.up, "reason": r.reason, "for_seconds": round(now - r.since, 1)}
                for r in self.state.values()}


def create_router_app(
    replicas: Sequence[str], *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, check_interval: float = 1.0,
    request_timeout: float = REQUEST_TIMEOUT, sticky_seconds: float = STICKY_SECONDS, drain: Drain | None = None,
    token: str | None = None, samples_per_step: int | None = None, start_step: int | None = None,
    step_file: str | None = None, check_timeout: float = CHECK_TIMEOUT,
):
    """The router's Starlette app over ``replicas`` (base URLs of ``rewardhub serve``).

    ``token`` is checked here when set; the client's ``Authorization`` header is passed on to the
    replicas either way (so replicas started with ``--token-env`` check it too). A request's ``step``
    goes to every replica with its samples; without one, ``samples_per_step`` counts it here, once for
    the whole deployment (from ``start_step``, kept in ``step_file``: see :mod:`.steps`).
    """
    import httpx
    from starlette.applications import Starlette
    from starlette.routing import Route

    urls = [url.rstrip("/") for url in replicas]
    if not urls or len(set(urls)) != len(urls):
        raise ValueError(f"give one or more distinct replica URLs; got {list(replicas)}")
    metrics, drain = Metrics("router"), drain or Drain()
    pool = Replicas(urls, metrics, sticky_seconds)
    clock = step_clock(samples_per_step, start_step, step_file)
    state: dict[str, Any] = {}

    async def stepped(request, body: dict[str, Any], samples: int, part_body, keys: list[str]) -> Any:
        """Dispatch with the request's step (given, else counted here) in every replica's part."""
        step = _step_field(body)
        counted = step is None and clock is not None
        if counted:
            step = clock.advance(samples)

        def part(indices: list[int]) -> dict[str, Any]:
            sub = part_body(indices)
            return sub if step is None else {**sub, "step": step}

        try:
            return await unless_disconnected(request.receive, dispatch(request.url.path, keys, part,
                                                                       request.headers.get("authorization")))
        except (ReplicaFailed, NoReplica, ClientDisconnected):
            if counted:  # not scored: its retry counts it again
                clock.give_back(samples)
            raise

    async def forward(url: str, path: str, body: dict[str, Any], auth: str | None) -> tuple[int, Any]:
        """POST to one replica. Raises ConnectionRefusedError when it never got the request (safe to
        send elsewhere) and ReplicaFailed when it failed holding it."""
        headers = {"authorization": auth} if auth else {}
        try:
            for attempt in range(CONNECT_TRIES):  # a busy replica may be slow to accept: not a dead one
                try:
                    reply = await state["client"].post(url + path, json=body, headers=headers)
                    break
                except httpx.ConnectTimeout:
                    if attempt == CONNECT_TRIES - 1:
                        raise
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            pool.mark(url, False, f"{type(exc).__name__}: {exc}")
            metrics.forwards.labels(url, "unreachable").inc()
            raise ConnectionRefusedError(str(exc)) from exc
        except httpx.HTTPError as exc:
            pool.mark(url, False, f"{type(exc).__name__}: {exc}")
            metrics.forwards.labels(url, "failed").inc()
            raise ReplicaFailed(f"replica {url} failed while scoring ({type(exc).__name__}: {exc})") from exc
        if reply.status_code == 503:  # draining or not ready: it scored nothing, so another may take it
            pool.mark(url, False, "answered 503")
            metrics.forwards.labels(url, "unavailable").inc()
            raise ConnectionRefusedError(f"{url} answered 503")
        metrics.forwards.labels(url, "ok" if reply.status_code == 200 else str(reply.status_code)).inc()
        try:
            return reply.status_code, reply.json()
        except ValueError as exc:
            raise ReplicaFailed(f"replica {url} sent an answer that is not JSON: {exc}") from exc

    async def dispatch(path: str, keys: list[str], part_body, auth: str | None,
                       indices: list[int] | None = None, tried: frozenset[str] = frozenset()) -> list[tuple[list[int], Any]]:
        """Send each sample to its group's replica; ``part_body(indices)`` builds a replica's request.
        Samples a replica never received go, each by its own key, to the next replica up."""
        parts: dict[str, list[int]] = {}
        for i in range(len(keys)) if indices is None else indices:
            parts.setdefault(pool.pick(keys[i], avoid=tried), []).append(i)

        async def send(url: str, indices: list[int]) -> list[tuple[list[int], Any]]:
            try:
                status, answer = await forward(url, path, part_body(indices), auth)
            except ConnectionRefusedError:
                return await dispatch(path, keys, part_body, auth, indices, tried | {url})
            if status != 200:
                raise BadRequest(answer.get("error", str(answer)) if isinstance(answer, dict) else str(answer), status)
            return [(indices, answer)]

        answers = await asyncio.gather(*(send(url, idx) for url, idx in parts.items()))
        return [part for answer in answers for part in answer]

    async def answered(coroutine):
        try:
            return await coroutine
        except (ReplicaFailed, NoReplica) as exc:
            body = {"error": f"{exc}; retry the request", "retryable": True}
            return _json(body, 503, {"Retry-After": str(RETRY_AFTER)})
        except BadRequest as exc:
            return _error(str(exc), exc.status, auth=exc.status == 401)
        except ClientDisconnected:  # the forwards were cancelled, so the replicas withdraw the samples too
            return gone_response()

    async def openrlhf_endpoint(request):
        async def run():
            body = await _json_object(request, token, max_body_bytes)
            queries = body.get("query")
            if not isinstance(queries, list) or not queries:
                raise BadRequest("missing 'query': a list of prompt+response strings (OpenRLHF protocol)")
            prompts, labels = body.get("prompts"), body.get("labels")
            for name, column in (("prompts", prompts), ("labels", labels)):
                if column is not None and (not isinstance(column, list) or len(column) != len(queries)):
                    raise BadRequest(f"'{name}' must be a list as long as 'query' ({len(queries)})")
            keys = [str(p) for p in prompts] if prompts is not None else [str(q) for q in queries]

            def part(indices: list[int]) -> dict[str, Any]:
                sub = {"query": [queries[i] for i in indices]}
                for name, column in (("prompts", prompts), ("labels", labels)):
                    if column is not None:
                        sub[name] = [column[i] for i in indices]
                return sub

            return _json(merge(await stepped(request, body, len(queries), part, keys), len(queries)))
        return await answered(run())

    async def score_endpoint(request):
        async def run():
            body = await _json_object(request, token, max_body_bytes)
            rows = body.get("rows")
            if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
                raise BadRequest("'rows' must be a non-empty list of objects with 'prompt', 'completion' and columns")
            keys = [group_key(r.get(GROUP_FIELD), r.get("prompt"), f"\x00row:{i}") for i, r in enumerate(rows)]
            parts = await stepped(request, body, len(rows), lambda idx: {"rows": [rows[i] for i in idx]}, keys)
            return _json(merge(parts, len(rows)))
        return await answered(run())

    async def health_endpoint(request):
        described = pool.describe()
        up = any(r["up"] for r in described.values())
        return _json({"status": "ok" if up else "no replica up", "replicas": described}, 200 if up else 503)

    async def check_replicas() -> None:
        """Poll each replica's readiness: 200 is up; a refusal, an error status or ``DOWN_AFTER_TIMEOUTS``
        checks in a row without an answer (a hung replica: it accepts connections but never answers) is down."""
        timeouts = dict.fromkeys(urls, 0)
        while True:
            async def check(url: str) -> None:
                try:
                    reply = await state["client"].get(url + "/ready", timeout=check_timeout)
                except httpx.TimeoutException:
                    timeouts[url] += 1  # one late answer is a busy replica; several in a row, a hung one
                    if timeouts[url] >= DOWN_AFTER_TIMEOUTS:
                        pool.mark(url, False, f"no answer to {timeouts[url]} readiness checks in a row "
                                              f"({check_timeout:g} s each)")
                    return
                except httpx.HTTPError as exc:
                    timeouts[url] = 0
                    pool.mark(url, False, f"{type(exc).__name__}: {exc}")
                    return
                timeouts[url] = 0
                pool.mark(url, reply.status_code == 200, "" if reply.status_code == 200
                          else f"/ready answered {reply.status_code}")
            await asyncio.gather(*(check(url) for url in urls))
            await asyncio.sleep(check_interval)

    @asynccontextmanager
    async def lifespan(app):
        # Idle connections are dropped well before a replica's keep-alive would close them under a request.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=256, keepalive_expiry=2.0)
        state["client"] = httpx.AsyncClient(timeout=httpx.Timeout(request_timeout, connect=5.0), limits=limits)
        checker = asyncio.create_task(check_replicas())
        try:
            yield
        finally:
            checker.cancel()
            await state["client"].aclose()

    routes = [
        Route("/", openrlhf_endpoint, methods=["POST"]),
        Route("/get_reward", openrlhf_endpoint, methods=["POST"]),
        Route("/score", score_endpoint, methods=["POST"]),
        Route("/health", health_endpoint, methods=["GET"]),
        Route("/ready", lambda request: readiness(drain, any(r.up for r in pool.state.values()),
                                                  "no replica is up"), methods=["GET"]),
        Route("/metrics", lambda request: metrics_response(metrics), methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    return MetricsMiddleware(DrainMiddleware(app, drain), metrics, {route.path for route in routes})


def merge(parts: list[tuple[list[int], Any]], size: int) -> Any:
    """The replicas' answers put back in request order: each list (and each list inside a mapping,
    as in ``extra_logs`` or ``components``) is filled at the sample positions its replica had."""

    def fill(target: Any, indices: list[int], piece: Any) -> Any:
        if isinstance(piece, list):
            target = target if isinstance(target, list) else [None] * size
            for i, value in zip(indices, piece, strict=True):
                target[i] = value
            return target
        if isinstance(piece, dict):
            target = target if isinstance(target, dict) else {}
            for name, value in piece.items():
                target[name] = fill(target.get(name), indices, value)
            return target
        return piece

    merged: Any = None
    for indices, answer in parts:
        merged = fill(merged, indices, answer)
    return merged


def route(replicas: Sequence[str], *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
          drain_timeout: float | None = None, **options: Any) -> None:
    """Run the router with uvicorn until interrupted; SIGTERM drains it (see :mod:`.drain`)."""
    from rewardhub.http_serving import uvicorn_config

    from .drain import DEFAULT_DRAIN_TIMEOUT, draining_server

    drain = Drain(drain_timeout or DEFAULT_DRAIN_TIMEOUT)
    app = create_router_app(replicas, drain=drain, **options)
    draining_server(uvicorn_config(app, host=host, port=port, log_level=log_level), drain).run()
