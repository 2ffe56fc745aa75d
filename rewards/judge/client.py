"""Talk to an OpenAI-compatible chat endpoint: concurrency limit, rate budgets, retries, timeouts.

One ``AsyncOpenAI`` client and semaphore per event loop (async clients belong to the loop that made
them); the SDK's own retries are off so that this module decides what is retried and for how long.
The API key is read from the environment when a client is made, never stored on the reward, and
removed from every reason this module produces.
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from dataclasses import asdict, dataclass, fields
from typing import Any

from .errors import JudgeConfigError, JudgeRequestError
from .limits import TokenBucket, backoff_delay, retry_after

_RETRYABLE_STATUS = {408, 409, 429}
_PLACEHOLDER_KEY = "EMPTY"  # what local OpenAI-compatible servers (vLLM, SGLang) accept without a key
_CHARS_PER_TOKEN = 4


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
        logprobs = data.get("logprobs")
        if logprobs is not None:
            logprobs = [(token, [(alt, lp) for alt, lp in alts]) for token, alts in logprobs]
        return cls(data["content"], logprobs)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask: the request-shaping params of the judge."""

    base_url: str | None
    model: str
    api_key_env: str
    temperature: float
    max_tokens: int
    top_logprobs: int | None  # ask for logprobs with this many alternatives per token

    def request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The chat request body for ``messages``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.top_logprobs:
            body.update(logprobs=True, top_logprobs=self.top_logprobs)
        return body

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

    def redact(self, text: str) -> str:
        """``text`` with the API key (if any) replaced by ``***``."""
        key = os.environ.get(self.api_key_env)
        return text.replace(key, "***") if key and len(key) >= 4 else text


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

    def __init__(self, reason: str, retryable: bool, wait: float | None = None):
        super().__init__(reason)
        self.reason, self.retryable, self.wait = reason, retryable, wait


class JudgeClient:
    """Sends judge requests within the concurrency limit and rate budgets, retrying transient failures."""

    def __init__(self, endpoint: Endpoint, policy: Policy, *, rpm: float | None = None, tpm: float | None = None):
        self.endpoint = endpoint
        self.policy = policy
        self.rpm = TokenBucket(rpm) if rpm else None
        self.tpm = TokenBucket(tpm) if tpm else None
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, asyncio.Semaphore]]
        self._per_loop = weakref.WeakKeyDictionary()

    def _loop_state(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            import openai

            client = openai.AsyncOpenAI(
                base_url=self.endpoint.base_url,
                api_key=self.endpoint.api_key(),
                max_retries=0,
                timeout=self.policy.timeout + 1.0,  # asyncio.wait_for enforces the exact per-request limit
            )
            state = (client, asyncio.Semaphore(self.policy.concurrency))
            self._per_loop[loop] = state
        return state

    async def ask(self, body: dict[str, Any], stats: JudgeStats, deadline: float) -> Answer:
        """The endpoint's answer to ``body``; raises ``JudgeRequestError`` once retries or time run out."""
        client, semaphore = self._loop_state()
        tokens = _estimate_tokens(body)
        attempt = 0
        while True:
            try:
                async with semaphore:
                    await self._wait_for_budget(tokens)
                    stats.requests += 1
                    return await self._send(client, body, tokens, stats, deadline)
            except _Attempt as failed:
                left = deadline - time.monotonic()
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
        waits = [bucket.reserve(amount) for bucket, amount in ((self.rpm, 1), (self.tpm, tokens)) if bucket]
        if waits and max(waits) > 0:
            try:
                await asyncio.sleep(max(waits))
            except asyncio.CancelledError:  # never sent: hand the budget back
                if self.rpm:
                    self.rpm.give_back(1)
                if self.tpm:
                    self.tpm.give_back(tokens)
                raise

    async def _send(self, client: Any, body: dict[str, Any], tokens: int, stats: JudgeStats, deadline: float) -> Answer:
        limit = min(self.policy.timeout, max(deadline - time.monotonic(), 0.0))
        try:
            # The SDK's generic POST (auth, base URL, error types) with the body as is and the JSON
            # answer as a dict: a third less CPU per request than building and validating typed models.
            data = await asyncio.wait_for(client.post("/chat/completions", cast_to=object, body=body), timeout=limit)
        except Exception as exc:
            raise self._classify(exc, limit) from None
        answer, used = _read_completion(data)
        stats.prompt_tokens += used[0]
        stats.completion_tokens += used[1]
        if self.tpm and any(used):
            self.tpm.give_back(tokens - sum(used))
        return answer

    def _classify(self, exc: Exception, limit: float) -> _Attempt:
        import openai

        if isinstance(exc, asyncio.TimeoutError | openai.APITimeoutError):
            return _Attempt(f"request timed out after {limit:.3g} s", retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return _Attempt(self._reason("connection error", exc), retryable=True)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retryable = status in _RETRYABLE_STATUS or status >= 500
            wait = retry_after(exc.response.headers) if retryable else None
            return _Attempt(self._reason(f"HTTP {status}", exc), retryable, wait)
        return _Attempt(self._reason("invalid response", exc), retryable=False)

    def _reason(self, what: str, exc: Exception) -> str:
        body = getattr(exc, "body", None)  # an API error's own message reads better than the SDK's wrapper
        detail = body.get("message") if isinstance(body, dict) else None
        detail = detail if isinstance(detail, str) and detail else str(exc) or type(exc).__name__
        return self.endpoint.redact(f"{what}: {shorten(detail)}")

    async def aclose(self) -> None:
        """Close the HTTP client of the running loop."""
        state = self._per_loop.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state[0].close()

    def close(self) -> None:
        """Close the HTTP clients of every loop still alive (from synchronous code, outside those loops)."""
        for loop, (client, _) in list(self._per_loop.items()):
            if loop.is_running():
                asyncio.run_coroutine_threadsafe(client.close(), loop).result(10)
            elif not loop.is_closed():
                loop.run_until_complete(client.close())
        self._per_loop.clear()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_per_loop"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._per_loop = weakref.WeakKeyDictionary()


def _read_completion(data: Any) -> tuple[Answer, tuple[int, int]]:
    """The answer and (prompt, completion) token usage from a chat completion's JSON."""
    try:
        choice = data["choices"][0]
        content = choice["message"].get("content")
        tokens = (choice.get("logprobs") or {}).get("content") or []
        logprobs = [(t["token"], [(a["token"], a["logprob"]) for a in t.get("top_logprobs") or []]) for t in tokens]
        usage = data.get("usage") or {}
        used = (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        raise _Attempt(f"endpoint returned no chat completion: {shorten(repr(data))}", retryable=False) from None
    if not isinstance(content, str):
        raise _Attempt(f"endpoint returned no text (finish_reason={choice.get('finish_reason')!r})", retryable=False)
    return Answer(content, logprobs or None), used


def _estimate_tokens(body: dict[str, Any]) -> int:
    """Tokens a request may use before we know: prompt characters / 4 plus the answer budget."""
    chars = sum(len(str(m.get("content", ""))) for m in body["messages"])
    return chars // _CHARS_PER_TOKEN + int(body.get("max_tokens") or 0)


def shorten(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters (for reasons shown in training logs)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
