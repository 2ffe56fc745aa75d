"""The ``judge`` reward: an LLM grades each completion through any OpenAI-compatible endpoint.

Async and batched: identical requests in a batch are sent once, answers come from an on-disk
cache when possible, the rest go out concurrently within rate budgets, with retries and a
deadline per batch. An endpoint that fails abstains (``None`` with the reason), it never scores 0.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from typing import Any

from rewardhub import AsyncReward, Batch, MissingColumnError, Score, hookimpl

from .cache import JudgeCache, default_cache_path, request_key
from .client import Answer, Endpoint, JudgeClient, JudgeStats, Policy, shorten
from .errors import JudgeConfigError, JudgeInputError, JudgeRequestError
from .parse import PARSE_MODES, ScoreScale, UnparsableAnswer, expected_score, parse_answer
from .prompt import JudgeTemplate

_TOP_LOGPROBS = 20
_batch_stats: contextvars.ContextVar[JudgeStats | None] = contextvars.ContextVar("judge_batch_stats", default=None)


class JudgeReward(AsyncReward):
    """LLM-as-judge: renders a rubric per completion, asks the endpoint, parses the answer to [0, 1]."""

    name = "judge"
    description = "LLM-as-judge via an OpenAI-compatible endpoint: async, rate-limited, retried, cached"

    def __init__(
        self,
        *,
        model: str = "gpt-4o-mini",
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        template: str = "pointwise",
        reference_column: str = "solution",
        system_prompt: str | None = None,
        parse: str | None = None,
        min_score: float | None = None,
        max_score: float | None = None,
        logprobs: bool = False,
        temperature: float = 0.0,
        max_tokens: int = 256,
        concurrency: int = 32,
        max_retries: int = 4,
        timeout: float = 60.0,
        deadline: float | None = 300.0,
        rpm: float | None = None,
        tpm: float | None = None,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        cache: str | None = None,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        self.template = JudgeTemplate.load(template)
        rubric = self.template.rubric
        self.parse = parse or rubric.parse
        if self.parse not in PARSE_MODES:
            raise JudgeConfigError(f"judge parse must be one of {', '.join(PARSE_MODES)}; got {self.parse!r}")
        try:
            self.scale = ScoreScale(
                rubric.low if min_score is None else float(min_score),
                rubric.high if max_score is None else float(max_score),
            )
        except ValueError as exc:
            raise JudgeConfigError(f"judge score range: {exc}") from None
        for param, value in (("concurrency", concurrency), ("max_tokens", max_tokens), ("timeout", timeout)):
            if value <= 0:
                raise JudgeConfigError(f"judge {param} must be positive; got {value}")
        for param, value in (("deadline", deadline), ("rpm", rpm), ("tpm", tpm)):
            if value is not None and value <= 0:
                raise JudgeConfigError(f"judge {param} must be positive or null; got {value}")
        if max_retries < 0 or backoff < 0 or max_backoff < 0:
            raise JudgeConfigError("judge max_retries, backoff and max_backoff must not be negative")
        self.reference_column = reference_column
        self.system_prompt = system_prompt
        self.logprobs = logprobs
        self.deadline = deadline
        endpoint = Endpoint(base_url, model, api_key_env, temperature, max_tokens, _TOP_LOGPROBS if logprobs else None)
        endpoint.api_key()  # fail now, not mid-training, when OpenAI itself is asked without a key
        self.client = JudgeClient(
            endpoint, Policy(concurrency, timeout, max_retries, backoff, max_backoff), rpm=rpm, tpm=tpm
        )
        self.cache = None if cache is None else JudgeCache(default_cache_path() if cache == "default" else cache)
        self.counters = JudgeStats()

    async def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        """The TRL entry point; also logs this batch's request counters through ``log_metric``."""
        log_metric = kwargs.get("log_metric")
        stats = JudgeStats()
        token = _batch_stats.set(stats)
        try:
            values = await super().__call__(prompts, completions, **kwargs)
        finally:
            _batch_stats.reset(token)
        if log_metric is not None:
            for counter, value in stats.as_dict().items():
                log_metric(f"{self.__name__}/{counter}", float(value))
        return values

    async def score_batch_async(self, batch: Batch) -> list[Score]:
        stats = JudgeStats()
        deadline = time.monotonic() + (self.deadline or float("inf"))
        outcomes: list[Score | str] = []
        bodies: dict[str, dict[str, Any]] = {}
        for i in range(len(batch)):
            if batch.texts[i] is None:
                outcomes.append(Score(None, batch.text_errors[i]))
                continue
            try:
                body = self.client.endpoint.request(self._messages(batch, i))
            except (MissingColumnError, JudgeInputError) as exc:
                outcomes.append(self._failure(exc))
                continue
            key = request_key({"base_url": self.client.endpoint.base_url, **body})
            if key in bodies:
                stats.deduplicated += 1
            bodies[key] = body
            outcomes.append(key)
        answers = await self._answers(bodies, stats, deadline)
        self.counters.add(stats)
        call_stats = _batch_stats.get()
        if call_stats is not None:  # set by __call__, which logs them
            call_stats.add(stats)
        return [self._score(answers[o]) if isinstance(o, str) else o for o in outcomes]

    def _messages(self, batch: Batch, index: int) -> list[dict[str, str]]:
        user = {"role": "user", "content": self.template.render(batch.row(index), self.reference_column)}
        return [{"role": "system", "content": self.system_prompt}, user] if self.system_prompt else [user]

    async def _answers(
        self, bodies: dict[str, dict[str, Any]], stats: JudgeStats, deadline: float
    ) -> dict[str, Answer | str]:
        """Answer per request key: from the cache, else from the endpoint; a reason string on failure."""
        results: dict[str, Answer | str] = {}
        if self.cache is not None and bodies:
            for key, data in (await asyncio.to_thread(self.cache.get_many, bodies)).items():
                results[key] = Answer.from_json(data)
            stats.cache_hits += len(results)
        tasks = {
            key: asyncio.ensure_future(self.client.ask(body, stats, deadline))
            for key, body in bodies.items()
            if key not in results
        }
        if not tasks:
            return results
        try:
            left = None if self.deadline is None else max(deadline - time.monotonic(), 0.0)
            await asyncio.wait(tasks.values(), timeout=left)
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
        fresh = {}
        for key, task in tasks.items():
            if task.cancelled():
                stats.failures += 1
                results[key] = f"judge gave no answer before the batch deadline of {self.deadline:g} s"
            elif isinstance(task.exception(), JudgeRequestError):
                results[key] = f"judge unavailable: {task.exception()}"
            elif task.exception() is not None:
                raise task.exception()
            else:
                results[key] = fresh[key] = task.result()
        if self.cache is not None and fresh:
            await asyncio.to_thread(self.cache.put_many, {k: a.to_json() for k, a in fresh.items()})
        return results

    def _score(self, answer: Answer | str) -> Score:
        if isinstance(answer, str):
            return Score(None, answer)
        said = shorten(answer.content)
        if self.logprobs and answer.logprobs:
            parsed = expected_score(answer.logprobs, self.parse, self.scale)
            if parsed is not None:
                return Score(parsed.value, f"judge ({parsed.how}): {said}", parsed.verdict)
        try:
            parsed = parse_answer(answer.content, self.parse, self.scale)
        except UnparsableAnswer as exc:
            return Score(None, f"unparsable judge answer ({exc}): {said!r}")
        return Score(parsed.value, f"judge ({parsed.how}): {said}", parsed.verdict)

    async def aclose(self) -> None:
        """Release the HTTP client of the running event loop and the cache connection."""
        await self.client.aclose()
        if self.cache is not None:
            self.cache.close()

    def close(self) -> None:
        """Release HTTP clients and the cache connection (from synchronous code; the reward stays usable)."""
        self.client.close()
        if self.cache is not None:
            self.cache.close()

    def __repr__(self) -> str:
        endpoint = self.client.endpoint
        return f"<JudgeReward {self.__name__!r} model={endpoint.model!r} base_url={endpoint.base_url!r}>"


@hookimpl
def register_rewards(register):
    register(JudgeReward)
