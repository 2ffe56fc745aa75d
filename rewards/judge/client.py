"""Talk to an inference server: concurrency limit, rate budgets, retries, timeouts, deadlines.

The one HTTP client of the model-backed families: the judge's chat completions (``ask``) and the
served reward models' pooling requests (``post`` to any route, read by the caller's reader) share it.
Requests go through the process's one client for the endpoint (``pool``), on rewardhub's
background loop; the SDK's own retries are off so that this module decides what is retried and
for how long. The API key is read from the environment when the client is made, never stored on
the reward, and removed from every text the endpoint sends back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

from . import pool
from .errors import JudgeConfigError, JudgeContextOverflow, JudgeRequestError
from .limits import backoff_delay, retry_after
from .reasoning import final_answer
from .response import MalformedResponse, read_completion, read_logprobs, stored_logprobs
from .shared_limits import areserve, budget

__all__ = [
    "Answer",
    "Connection",
    "Endpoint",
    "JudgeClient",
    "JudgeStats",
    "Policy",
    "T",
    "redact",
    "shorten",
]

_RETRYABLE_STATUS = {408, 409, 429}
_PLACEHOLDER_KEY = "EMPTY"  # what local OpenAI-compatible servers (vLLM, SGLang) accept without a key
_CHARS_PER_TOKEN = 4
T = TypeVar("T")


@dataclass
class JudgeStats:
    """Counters of one batch (or, summed, of the reward's lifetime)."""

    requests: int = 0
    retries: int = 0
    failures: int = 0
    cache_hits: int = 0
    deduplicated: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: JudgeStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Answer:
    """What the endpoint said: the text, and per token its top alternatives' log-probabilities."""

    content: str
    logprobs: list[tuple[str, list[tuple[str, float]]]] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "logprobs": self.logprobs}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Answer:
        """The answer ``to_json`` stored; raises ``KeyError``/``TypeError``/``ValueError`` on another shape."""
        content = data["content"]
        if not isinstance(content, str):
            raise TypeError(f"a stored answer's content must be text, not {type(content).__name__}")
        return cls(content, stored_logprobs(data.get("logprobs")))

    def redacted(self, key: str) -> Answer:
        """This answer with the API key replaced by ``***`` (an endpoint or proxy may echo the request's
        ``Authorization`` header); its logprobs go too, since their tokens spell the key."""
        if not _secret(key) or key not in self.content:
            return self
        return Answer(self.content.replace(key, "***"), None)


@dataclass(frozen=True)
class Connection:
    """Where to send requests: the server's OpenAI base URL (``.../v1``; ``None`` is OpenAI's), the served
    model's name and the environment variable holding the API key."""

    base_url: str | None
    model: str
    api_key_env: str

    def root_url(self) -> str:
        """The server's root (``base_url`` without its ``/v1``), where vLLM and SGLang mount their
        non-OpenAI routes (``/classify``, ``/pooling``) and OpenRLHF's ``serve_rm`` its ``/get_reward``."""
        url = (self.base_url or "https://api.openai.com/v1").rstrip("/")
        return url.removesuffix("/v1")

    def api_key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if self.base_url is None:
            raise JudgeConfigError(
                f"the judge needs an API key in environment variable {self.api_key_env!r} (set it, or set "
                f"api_key_env to the variable that holds it, or point base_url at a server that needs none)"
            )
        return _PLACEHOLDER_KEY


@dataclass(frozen=True)
class Endpoint(Connection):
    """Where and how to ask: the request-shaping params of the judge."""

    temperature: float = 0.0
    max_tokens: int = 4096
    top_logprobs: int | None = None  # ask for logprobs with this many alternatives per token
    reasoning_effort: str | None = None  # "low" / "medium" / "high" for reasoning models
    thinking_budget: int | None = None  # most tokens a reasoning model may think before it answers

    def request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The chat request body for ``messages`` (reasoning fields only when set: OpenAI refuses unknown ones)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.top_logprobs:
            body.update(logprobs=True, top_logprobs=self.top_logprobs)
        if self.reasoning_effort is not None:
            body["reasoning_effort"] = self.reasoning_effort
        if self.thinking_budget is not None:  # vLLM's field, and the kwarg Qwen3-style chat templates read (SGLang)
            body["thinking_token_budget"] = self.thinking_budget
            body["chat_template_kwargs"] = {"thinking_budget": self.thinking_budget}
        return body


@dataclass(frozen=True)
class Policy:
    """How hard to try: concurrency, per-request timeout, retries and their backoff."""

    concurrency: int
    timeout: float
    max_retries: int
    backoff: float
    max_backoff: float


class _Attempt(Exception):
    """One failed attempt: a redacted reason, whether to retry, and the server's Retry-After."""

    def __init__(self, reason: str, retryable: bool, wait: float | None = None, overflow: bool = False):
        super().__init__(reason)
        self.reason, self.retryable, self.wait, self.overflow = reason, retryable, wait, overflow


class JudgeClient:
    """Sends requests within the concurrency limit and rate budgets, retrying transient failures.

    Its coroutines run on rewardhub's background loop (the reward moves them there). ``endpoint`` is a
    :class:`Connection` (an :class:`Endpoint` for chat completions).
    """

    def __init__(self, endpoint: Connection, policy: Policy, *, rpm: float | None = None, tpm: float | None = None,
                 share_limits: str = "process"):
        self.endpoint = endpoint
        self.policy = policy
        where = f"{endpoint.base_url or 'https://api.openai.com/v1'}|{endpoint.model}"  # one budget per key and model
        self.rpm = budget(rpm, "rpm", where, share_limits)
        self.tpm = budget(tpm, "tpm", where, share_limits)
        self._endpoint_id: pool.EndpointId | None = None
        self._acquired_in = 0  # the pid that counted itself as a user of the endpoint's client
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None
        self.warm_up()

    def warm_up(self) -> None:
        """Have the endpoint's client built now (in a thread), not when the first batch needs it."""
        self._http_client()

    def _http_client(self) -> concurrent.futures.Future[Any]:
        future = pool.client(self._endpoint_id) if self._acquired_in == os.getpid() else None
        if future is None:  # first use, after close(), or in a forked child
            self._endpoint_id = pool.acquire(self.endpoint.base_url, self.endpoint.api_key())
            self._acquired_in = os.getpid()
            future = pool.client(self._endpoint_id)
        return future

    async def _started(self) -> tuple[Any, asyncio.Semaphore]:
        """The endpoint's client (waiting for it to be built) and this judge's semaphore on this loop."""
        try:
            future = self._http_client()
        except JudgeConfigError as exc:  # the key's variable was unset since the reward was made
            raise JudgeRequestError(str(exc)) from None
        try:  # the shared build cannot be cancelled by this wait (see pool); its failure is this batch's answer
            client = await asyncio.wrap_future(future) if not future.done() else future.result()
        except Exception as exc:
            raise JudgeRequestError(f"cannot start the OpenAI client: {type(exc).__name__}: {exc}") from None
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore, self._semaphore_loop = asyncio.Semaphore(self.policy.concurrency), loop
        return client, self._semaphore

    async def ask(self, body: dict[str, Any], stats: JudgeStats, deadline: float) -> Answer:
        """The endpoint's chat answer to ``body``; raises ``JudgeRequestError`` once retries or time run out."""
        return await self.post("/chat/completions", body, stats, deadline, _read_completion)

    async def post(self, path: str, body: dict[str, Any], stats: JudgeStats, deadline: float,
                   read: Callable[[Any, str], tuple[T, tuple[int, int]]]) -> T:
        """POST ``body`` to ``path`` (relative to ``base_url``, or an absolute URL) and ``read`` the JSON answer
        into a value and its (prompt, completion) token usage. ``read`` gets the API key to redact and raises
        :class:`MalformedResponse` on an answer of another shape (not retried: the row abstains).
        Raises ``JudgeRequestError`` once retries or time run out."""
        client, semaphore = await self._started()
        tokens = _estimate_tokens(body)
        attempt = 0
        while True:
            try:
                async with semaphore:
                    await self._wait_for_budget(tokens)
                    stats.requests += 1
                    return await self._send(client, path, body, (tokens, read), stats, deadline)
            except _Attempt as failed:
                left = deadline - time.monotonic()
                if failed.overflow:
                    raise JudgeContextOverflow(failed.reason) from None
                if not failed.retryable or attempt >= self.policy.max_retries:
                    stats.failures += 1
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    raise JudgeRequestError(f"{failed.reason}{tries}") from None
                wait = failed.wait
                if wait is None:
                    wait = backoff_delay(attempt, self.policy.backoff, self.policy.max_backoff)
                if wait >= left:
                    stats.failures += 1
                    raise JudgeRequestError(f"{failed.reason}; no time left to retry before the batch deadline") from None
                stats.retries += 1
                attempt += 1
                await asyncio.sleep(wait)

    async def _wait_for_budget(self, tokens: int) -> None:
        wait = await areserve([(self.rpm, 1), (self.tpm, tokens)])  # one Redis round trip, off the loop
        if wait > 0:
            try:
                await asyncio.sleep(wait)
            except asyncio.CancelledError:  # never sent: hand the budget back
                if self.rpm:
                    self.rpm.give_back(1)
                if self.tpm:
                    self.tpm.give_back(tokens)
                raise

    async def _send(self, client: Any, path: str, body: dict[str, Any], reading: tuple[int, Callable[..., Any]],
                    stats: JudgeStats, deadline: float) -> Any:
        tokens, read = reading
        limit = min(self.policy.timeout, max(deadline - time.monotonic(), 0.0))
        try:
            # The SDK's generic POST (auth, base URL, error types) with the body as is and the JSON
            # answer as a dict: a third less CPU per request than building and validating typed models;
            # asyncio.timeout, unlike wait_for, starts no extra task per request.
            async with asyncio.timeout(limit):
                data = await client.post(path, cast_to=object, body=body)
        except Exception as exc:
            raise _classify(exc, limit, client.api_key) from None
        try:
            answer, used = read(data, client.api_key)
        except MalformedResponse as exc:
            raise _Attempt(redact(f"endpoint answered {path} in an unexpected shape ({exc})", client.api_key),
                           retryable=False) from None
        stats.prompt_tokens += used[0]
        stats.completion_tokens += used[1]
        if self.tpm and any(used):
            self.tpm.give_back(tokens - sum(used))
        return answer

    def close(self) -> None:
        """Stop using the endpoint's client (the last judge to stop closes it); a later request reopens it."""
        if self._acquired_in == os.getpid():
            pool.release(self._endpoint_id)
        self._endpoint_id, self._acquired_in = None, 0

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_endpoint_id": None, "_acquired_in": 0, "_semaphore": None, "_semaphore_loop": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        with contextlib.suppress(JudgeConfigError):  # no key here: the first batch abstains and says so
            self.warm_up()


def _read_completion(data: Any, key: str) -> tuple[Answer, tuple[int, int]]:
    """The answer (the API key redacted before it reaches a reason, a log line or the cache) and the
    (prompt, completion) token usage from a chat completion's JSON, read by :mod:`.response`."""
    try:
        content, choice, used = read_completion(data)
    except MalformedResponse as exc:
        raise _Attempt(redact(f"endpoint returned no chat completion ({exc}): {_described(data)}", key),
                       retryable=False) from None
    finish = redact(_described(choice.get("finish_reason")), key)
    thinking = any(isinstance(choice["message"].get(f), str) for f in ("reasoning_content", "reasoning"))
    if content is None or not content.strip():
        hint = ": it was still reasoning; raise max_tokens or set thinking_budget" if thinking else ""
        raise _Attempt(f"endpoint returned no text (finish_reason={finish}){hint}", retryable=False)
    final, logprobs, unclosed = final_answer(content, read_logprobs(choice))
    if unclosed or not final.strip():
        raise _Attempt(f"endpoint returned reasoning and no final answer (finish_reason={finish}): raise max_tokens "
                       f"or set thinking_budget", retryable=False)
    return Answer(final, logprobs).redacted(key), used


def _described(data: Any) -> str:
    """The repr of parsed JSON for a reason (cut later, after redaction), or its type if it has none."""
    try:
        return repr(data)
    except (RecursionError, ValueError):  # nested too deeply, or an integer of too many digits
        return f"<a JSON {type(data).__name__}>"


def _classify(exc: Exception, limit: float, key: str) -> _Attempt:
    import openai

    if isinstance(exc, asyncio.TimeoutError | openai.APITimeoutError):
        return _Attempt(f"request timed out after {limit:.3g} s", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return _Attempt(_reason("connection error", exc, key), retryable=True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retryable = status in _RETRYABLE_STATUS or status >= 500
        wait = retry_after(exc.response.headers) if retryable else None
        overflow = status in (400, 413) and _past_context(exc)
        return _Attempt(_reason(f"HTTP {status}", exc, key), retryable and not overflow, wait, overflow)
    return _Attempt(_reason("invalid response", exc, key), retryable=False)


def _past_context(exc: Exception) -> bool:
    """The endpoint refused the request as longer than its model's context (OpenAI, vLLM, TGI, llama.cpp wordings)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("code") == "context_length_exceeded":
        return True
    detail = body.get("message") if isinstance(body, dict) else None
    return _CONTEXT_OVERFLOW.search(detail if isinstance(detail, str) else str(exc)) is not None


_CONTEXT_OVERFLOW = re.compile(
    r"context[ _](?:length|size|window)|maximum context|prompt is too long|too many (?:input )?tokens"
    r"|max_new_tokens`? must be <=|exceeds? the (?:available )?context", re.IGNORECASE)


def _reason(what: str, exc: Exception, key: str) -> str:
    body = getattr(exc, "body", None)  # an API error's own message reads better than the SDK's wrapper
    detail = body.get("message") if isinstance(body, dict) else None
    detail = detail if isinstance(detail, str) and detail else str(exc) or type(exc).__name__
    return redact(f"{what}: {detail}", key)


def redact(text: str, key: str) -> str:
    """``text`` with the API key replaced by ``***``, then on one line and cut for a reason (in that order:
    a cut could leave part of the key)."""
    return shorten(text.replace(key, "***") if _secret(key) else text)


def _secret(key: str) -> bool:
    return len(key) >= 4 and key != _PLACEHOLDER_KEY


def _estimate_tokens(body: dict[str, Any]) -> int:
    """Tokens a request may use before we know: prompt characters / 4 (token ids count one each) plus the
    answer budget."""
    chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", ()))
    ids = sum(len(item) if isinstance(item, list) else len(str(item)) // _CHARS_PER_TOKEN
              for item in body.get("input", ()))
    return chars // _CHARS_PER_TOKEN + ids + int(body.get("max_tokens") or 0)


def shorten(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters (for reasons shown in training logs)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
