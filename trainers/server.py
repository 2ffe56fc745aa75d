"""The HTTP reward server behind ``rewardhub serve``: OpenRLHF's protocol, a native endpoint, health.

Endpoints (JSON in and out; errors are ``{"error": message}`` with a 4xx/5xx status):

- ``POST /`` and ``POST /get_reward`` — OpenRLHF: ``{"query", "prompts", "labels"}`` parallel
  lists -> ``{"rewards", "scores", "extra_logs"}`` (see :mod:`rewardhub.trainers.openrlhf`).
- ``POST /score`` — native: ``{"rows": [{"prompt", "completion", "group"?, <columns>...}]}`` (or an
  episode: ``"messages"``, the whole conversation, instead of prompt and completion) ->
  ``{"values", "components": {alias: [...]}, "reasons": {alias: [...]}, "outcomes": {alias: [...]}}``
  (``null`` = no score; the outcome says why: abstain, error or timeout).
- ``POST /verify`` and ``POST /seed_session`` — a NeMo-Gym resource server (see :mod:`.hubs.nemo_gym`):
  a ``responses_create_params`` + ``response`` body and the row's fields -> the body plus ``reward``.
- ``GET /health`` — scores a probe row through the whole set; 200 with each reward's outcome, 503
  if scoring raised or did not finish within ``health_timeout`` seconds. Checks arriving together share
  one probe; with a token, a check without it is answered at once without scoring (it may bill a judge).
- ``GET /ready`` — readiness, without scoring: 200, or 503 while draining (see :mod:`.drain`).
- ``GET /metrics`` — Prometheus metrics (see :mod:`.metrics`).
- ``GET /hacking`` — the reward-hacking monitor over the steps scored so far: its alarms and the latest
  ``rewardhub/hacking/...`` metrics (see :mod:`rewardhub.hacking`); behind the token when one is set.

Both scoring endpoints take an optional ``step`` (the trainer's step: scheduled weights are read
there, the monitor's windows are made of steps); without one, steps are counted from samples when
``samples_per_step`` is set (from ``start_step``, kept in ``step_file`` across restarts: :mod:`.steps`),
and the monitor counts 256 samples per step. Behind ``rewardhub route`` the router counts and sends it.

Sync rewards run in a thread pool and async ones on rewardhub's background loop, so the event loop
keeps serving while a slow reward works; a bearer token (when set) guards the scoring endpoints.
With ``group_size`` (or group rewards that declare one) the server is where completions of one prompt
meet, whichever process or Ray worker sends them: see :mod:`rewardhub.trainers.groups`. A request
whose client disconnects is cancelled, so its samples leave their groups (:mod:`.disconnect`); a
SIGTERM answers the groups still waiting (:mod:`.drain`). Each request
is logged as one access-log line on the ``rewardhub.access`` logger.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from rewardhub import GROUP_FIELD, Batch, RewardhubError, RewardNotScoringWarning, RewardSet, group_key
from rewardhub.completions import is_conversational
from rewardhub.episode import LIVE_COLUMNS
from rewardhub.hacking import HackingMonitor
from rewardhub.http_serving import BodyTooLarge, bearer_problem, read_body

from . import openrlhf
from .disconnect import ClientDisconnected, gone_response, unless_disconnected
from .drain import DEFAULT_DRAIN_TIMEOUT, Drain, DrainMiddleware, draining_server, readiness
from .errors import BadRequest
from .groups import DEFAULT_GROUP_TIMEOUT, CallScorer
from .hubs.nemo_gym import nemo_gym_routes
from .metrics import MeteredScorer, Metrics, MetricsMiddleware, metrics_response, noting_status
from .steps import step_clock

__all__ = [
    "AccessLog",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_THREADS",
    "PROBE_ROW",
    "access_logger",
    "create_app",
    "serve",
]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_THREADS = 32
PROBE_ROW = {"prompt": "What is 1 + 1?", "completion": "2", "solution": "2"}

access_logger = logging.getLogger("rewardhub.access")


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
    group_size: int | None = None,
    group_timeout: float = DEFAULT_GROUP_TIMEOUT,
    access_log: bool = True,
    samples_per_step: int | None = None,
    monitor: bool = True,
    drain: Drain | None = None,
    start_step: int | None = None,
    step_file: str | None = None,
    on_not_scoring: Callable[[str], None] | None = None,
):
    """The Starlette app serving ``rewards`` (run it with any ASGI server; ``serve`` uses uvicorn).
    ``drain`` is the drain state a SIGTERM sets (``serve`` passes the one its uvicorn server drives).
    ``start_step`` and ``step_file`` start the step counted from samples elsewhere and keep it across
    restarts (see :mod:`.steps`). A :class:`~rewardhub.RewardNotScoringWarning` raised as an error (the
    ``--strict`` filter) answers its request 500 and is passed to ``on_not_scoring``.

    Raises :class:`~rewardhub.ConfigError` when the set has group rewards but no group size to go by.
    """
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.routing import Route

    metrics, drain = Metrics("server"), drain or Drain()
    calls = CallScorer(rewards, group_size=group_size, group_timeout=group_timeout,
                       clock=step_clock(samples_per_step, start_step, step_file))
    drain.when_draining(calls.finish_groups)  # a SIGTERM answers the groups still waiting, not their timeout
    scorer = MeteredScorer(calls, metrics)
    hacking = HackingMonitor.for_set(rewards, eager=False) if monitor else None
    if hacking is not None:
        metrics.watch_hacking(hacking)
    executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rewardhub-serve")
    probe = Batch.from_rows([probe_row or PROBE_ROW])

    async def openrlhf_endpoint(request: Request) -> Any:
        body = await _json_object(request, token, max_body_bytes)
        if "query" not in body:
            raise BadRequest("missing 'query': a list of prompt+response strings (OpenRLHF protocol)")
        if scorer.assembler is not None and body.get("prompts") is None:
            raise BadRequest("missing 'prompts': group assembly groups queries by their prompt")
        batch = openrlhf.to_batch(body["query"], body.get("prompts"), body.get("labels"), label_column, strip_tokens)
        scored = await unless_disconnected(request.receive, scorer.ascore(batch, executor=executor,
                                                                          step=_step_field(body)))
        return _json(openrlhf.to_response(scored, abstain_value))

    async def score_endpoint(request: Request) -> Any:
        body = await _json_object(request, token, max_body_bytes)
        batch, keys = _rows_batch(body.get("rows"))
        if scorer.assembler is not None:
            unkeyed = next((i for i, row in enumerate(body["rows"]) if GROUP_FIELD not in row and
                            batch.prompts[i] is None), None)
            if unkeyed is not None:
                raise BadRequest(f"rows[{unkeyed}] has neither 'group' nor 'prompt': group assembly needs one "
                                 f"to know which completions belong together")
        scored = await unless_disconnected(request.receive, scorer.ascore(batch, keys, executor=executor,
                                                                          step=_step_field(body)))
        reply = {
            "values": scored.totals,
            "components": scored.component_values(),
            "reasons": scored.component_reasons(),
            "outcomes": {alias: [s.outcome for s in r.scores] for alias, r in scored.components.items()},
        }
        if scored.group_floors is not None:
            reply["group_floors"] = scored.group_floors
        if scored.group_ranges is not None:
            reply["group_ranges"] = scored.group_ranges
        return _json(reply)

    async def hacking_endpoint(request: Request) -> Any:
        _check_token(request.headers.get("authorization"), token)
        if hacking is None:
            return _error("the reward-hacking monitor is off (rewardhub serve --no-monitor)", 404)
        return _json(hacking.report())

    probing: dict[str, asyncio.Future] = {}

    async def probe_set() -> Any:
        """Score the probe row once for every health check waiting on it (checks at once share one probe)."""
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
        return _json({"status": "ok", "seconds": time.perf_counter() - start, "rewards": outcome})

    async def health_endpoint(request: Request) -> Any:
        if bearer_problem(request.headers.get("authorization"), token) is not None:
            # Scoring the probe may bill a judge or run a sandbox: only for callers holding the token.
            return _json({"status": "ok", "rewards": None,
                          "note": "the process is up; send the bearer token to have the probe row scored"})
        if "probe" not in probing:
            probing["probe"] = asyncio.ensure_future(probe_set())
            probing["probe"].add_done_callback(lambda _: probing.pop("probe", None))
        return await asyncio.shield(probing["probe"])

    @asynccontextmanager
    async def lifespan(app):
        yield
        scorer.close()
        executor.shutdown(wait=False, cancel_futures=True)

    async def score_body(request: Request, batch: Batch, keys: list[str], body: dict[str, Any]) -> Any:
        return await unless_disconnected(request.receive, scorer.ascore(batch, keys, executor=executor,
                                                                        step=_step_field(body)))

    routes = [
        Route("/", _guarded(openrlhf_endpoint, on_not_scoring), methods=["POST"]),
        Route("/get_reward", _guarded(openrlhf_endpoint, on_not_scoring), methods=["POST"]),
        Route("/score", _guarded(score_endpoint, on_not_scoring), methods=["POST"]),
        Route("/health", health_endpoint, methods=["GET"]),
        Route("/hacking", _guarded(hacking_endpoint), methods=["GET"]),
        Route("/ready", lambda request: readiness(drain), methods=["GET"]),
        Route("/metrics", lambda request: metrics_response(metrics), methods=["GET"]),
        *nemo_gym_routes(lambda request: _json_object(request, token, max_body_bytes), score_body, _json, _guarded,
                         abstain_value),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app = MetricsMiddleware(DrainMiddleware(app, drain), metrics, {route.path for route in routes})
    return AccessLog(app) if access_log else app


class AccessLog:
    """ASGI middleware: one line per HTTP request on ``rewardhub.access`` (client, request, status, time)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, (send_and_note, noted) = time.perf_counter(), noting_status(send)
        try:
            await self.app(scope, receive, send_and_note)
        finally:
            client = scope.get("client")
            access_logger.info('%s "%s %s" %d %.1f ms', f"{client[0]}:{client[1]}" if client else "-",
                               scope["method"], scope["path"], noted["status"], 1000 * (time.perf_counter() - start))


def _json(content: Any, status: int = 200, headers: dict[str, str] | None = None):
    """Every answer's JSON: NaN allowed (abstentions in OpenRLHF's ``extra_logs``, which Python's ``json``
    reads back; Starlette's ``JSONResponse`` refuses it), and a lone surrogate a request carried into a
    reason sent as its ``\\ud800`` escape instead of failing to encode (a 500)."""
    from starlette.responses import Response

    try:
        body = json.dumps(content, allow_nan=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        body = json.dumps(content, allow_nan=True, separators=(",", ":")).encode("ascii")
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _guarded(endpoint, on_not_scoring: Callable[[str], None] | None = None):
    """Turn request errors into JSON 4xx answers (and contract bugs, or a reward not scoring under
    ``--strict``, into a 500 with the message)."""

    async def wrapped(request):
        try:
            return await endpoint(request)
        except BadRequest as exc:
            return _error(str(exc), exc.status, auth=exc.status == 401)
        except ClientDisconnected:  # its completions left their groups: the client's retry counts once
            return gone_response()
        except RewardhubError as exc:  # e.g. RewardInputError from malformed rows, a plugin contract bug
            status = 422 if isinstance(exc, ValueError) else 500
            return _error(f"{type(exc).__name__}: {exc}", status)
        except RewardNotScoringWarning as exc:
            if on_not_scoring is not None:
                on_not_scoring(str(exc))
            return _error(f"stopped at a reward that is not scoring (--strict): {exc}", 500)

    return wrapped


def _error(message: str, status: int, auth: bool = False):
    return _json({"error": message}, status, {"WWW-Authenticate": "Bearer"} if auth else None)


async def _json_object(request, token: str | None, max_body_bytes: int) -> dict[str, Any]:
    """Check the token, read at most ``max_body_bytes`` and parse a JSON object, or raise BadRequest."""
    _check_token(request.headers.get("authorization"), token)
    try:
        raw = await read_body(request, max_body_bytes)
    except BodyTooLarge as exc:
        raise BadRequest(str(exc), 413) from None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}", 400) from None
    except RecursionError:
        raise BadRequest("request body is nested too deeply to parse", 400) from None
    if not isinstance(body, dict):
        raise BadRequest(f"request body must be a JSON object, got {type(body).__name__}", 400)
    return body


def _check_token(header: str | None, token: str | None) -> None:
    problem = bearer_problem(header, token)
    if problem is not None:
        raise BadRequest(problem, 401)


def _step_field(body: dict[str, Any]) -> float | None:
    """A request's ``step`` (the trainer's step), or None; a 400 when it is not a number."""
    step = body.get("step")
    if step is None:
        return None
    if isinstance(step, bool) or not isinstance(step, int | float) or not step == step or step < 0:
        raise BadRequest(f"'step' must be the trainer's step, a number >= 0; got {step!r}", 400)
    return step


def _rows_batch(rows: Any) -> tuple[Batch, list[str]]:
    """The batch of native rows and each row's group key (its ``group`` field, else its prompt)."""
    if not isinstance(rows, list) or not rows:
        raise BadRequest("'rows' must be a non-empty list of objects with 'prompt', 'completion' and columns")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise BadRequest(f"rows[{i}] must be an object, got {type(row).__name__}")
        if "completion" not in row and not is_conversational(row.get("messages")):
            raise BadRequest(f"rows[{i}] has no 'completion' (nor 'messages', a whole conversation)")
        live = next((name for name in LIVE_COLUMNS if name in row), None)
        if live is not None:
            raise BadRequest(f"rows[{i}] has {live!r}: an environment is a live object of the trainer's process and "
                             f"is never sent; send its state as 'env_state'")
    batch = Batch.from_rows([{k: v for k, v in row.items() if k != GROUP_FIELD} for row in rows])
    keys = [group_key(row.get(GROUP_FIELD), batch.prompts[i], f"\x00row:{i}") for i, row in enumerate(rows)]
    return batch, keys


def serve(
    config: Any, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info", access_log: bool = True,
    reward_timeout: float | None = None, strict: bool = False, **options: Any,
) -> str | None:
    """Load ``config`` and serve it with uvicorn until interrupted (``options`` go to :func:`create_app`);
    the access log goes to stderr unless ``access_log`` is false. ``reward_timeout`` is the batch
    deadline of config entries that set no ``timeout``: a stuck reward answers, it never wedges the server.
    ``strict`` stops the server (a drain, as on SIGTERM) at the first reward that is not scoring; the
    message saying which is returned (None when it stopped otherwise)."""
    import rewardhub
    from rewardhub.http_serving import uvicorn_config

    stopped: list[str] = []

    def stop(message: str) -> None:
        if not stopped:
            stopped.append(message)
            logging.getLogger("rewardhub.serve").error("stopping (--strict): %s", message)
            server.stop()  # drains: the requests in flight are answered first

    if strict:
        warnings.simplefilter("error", RewardNotScoringWarning)
    drain = Drain(options.pop("drain_timeout", None) or DEFAULT_DRAIN_TIMEOUT)
    app = create_app(rewardhub.load(config, default_timeout=reward_timeout), access_log=access_log, drain=drain,
                     on_not_scoring=stop if strict else None, **options)
    if access_log:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        access_logger.addHandler(handler)
        access_logger.setLevel(logging.INFO)
        access_logger.propagate = False
    server = draining_server(uvicorn_config(app, host=host, port=port, log_level=log_level), drain)
    server.run()
    return stopped[0] if stopped else None
