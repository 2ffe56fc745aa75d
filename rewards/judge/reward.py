"""The ``judge`` reward: an LLM grades each completion through any OpenAI-compatible endpoint.

Async and batched: identical requests in a batch are sent once, answers come from an on-disk
cache when possible, the rest go out concurrently within rate budgets, with retries and a
deadline per batch. An endpoint that fails, an answer without a score and a row left unanswered
at the deadline are ``None`` with the reason (outcome ``error`` or ``timeout``), never a 0.
Reasoning models: their thinking is cut off before the answer is parsed (``reasoning.py``), so only
the final answer scores; ``reasoning_effort`` and ``thinking_budget`` go into the request.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from typing import Any

from rewardhub import AsyncReward, Batch, MissingColumnError, Score, background_loop

from .cache import default_cache_path, request_key, shared_cache
from .client import Answer, Endpoint, JudgeClient, JudgeStats, Policy, shorten
from .errors import JudgeConfigError, JudgeContextOverflow, JudgeInputError, JudgeRequestError
from .hollow import hollow_score
from .parse import PARSE_MODES, ScoreScale, UnparsableAnswer, expected_score, parse_answer
from .prompt import JudgeTemplate
from .shared_limits import check_share

__all__ = ["JudgeReward", "REASONING_EFFORTS"]

_TOP_LOGPROBS = 20
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
_batch_stats: contextvars.ContextVar[JudgeStats | None] = contextvars.ContextVar("judge_batch_stats", default=None)


class JudgeReward(AsyncReward):
    """LLM-as-judge: renders a rubric per completion, asks the endpoint, parses the answer to [0, 1]."""

    name = "judge"
    description = "LLM-as-judge via an OpenAI-compatible endpoint: async, rate-limited, retried, cached"
    refuses_hollow = True  # hollow completions score 0 unasked; ``rewardhub check-judge`` asks the endpoint itself

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
        max_tokens: int = 4096,
        reasoning_effort: str | None = None,
        thinking_budget: int | None = None,
        concurrency: int = 32,
        max_retries: int = 4,
        timeout: float = 60.0,
        deadline: float | None = 300.0,
        rpm: float | None = None,
        tpm: float | None = None,
        share_limits: str = "host",
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
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            raise JudgeConfigError(f"judge reasoning_effort must be one of {', '.join(REASONING_EFFORTS)} or null; "
                                   f"got {reasoning_effort!r}")
        if thinking_budget is not None and not 0 < thinking_budget < max_tokens:
            raise JudgeConfigError(f"judge thinking_budget must be a positive number of tokens below max_tokens "
                                   f"({max_tokens}), which holds the thinking and the answer; got {thinking_budget}")
        for param, value in (("deadline", deadline), ("rpm", rpm), ("tpm", tpm)):
            if value is not None and value <= 0:
                raise JudgeConfigError(f"judge {param} must be positive or null; got {value}")
        if max_retries < 0 or backoff < 0 or max_backoff < 0:
            raise JudgeConfigError("judge max_retries, backoff and max_backoff must not be negative")
        self.reference_column = reference_column
        self.system_prompt = system_prompt
        self.logprobs = logprobs
        self.batch_deadline = deadline  # graceful: answered rows keep their scores (``self.deadline`` is the core's)
        endpoint = Endpoint(base_url, model, api_key_env, temperature, max_tokens, _TOP_LOGPROBS if logprobs else None,
                            reasoning_effort, thinking_budget)
        endpoint.api_key()  # fail now, not mid-training, when OpenAI itself is asked without a key
        self.client = JudgeClient(
            endpoint, Policy(concurrency, timeout, max_retries, backoff, max_backoff), rpm=rpm, tpm=tpm,
            share_limits=check_share(share_limits),
        )
        self.cache = None if cache is None else shared_cache(default_cache_path() if cache == "default" else cache)
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
        """Scores the batch on rewardhub's background loop, where the endpoint's client lives."""
        loop = background_loop()
        if asyncio.get_running_loop() is loop:
            return await self._score_batch(batch)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._score_batch(batch), loop))

    async def _score_batch(self, batch: Batch) -> list[Score]:
        stats = JudgeStats()
        deadline = time.monotonic() + (self.batch_deadline or float("inf"))
        scores = await self._score_rows(batch, stats, deadline)
        self.counters.add(stats)
        call_stats = _batch_stats.get()
        if call_stats is not None:  # set by __call__, which logs them
            call_stats.add(stats)
        return scores

    async def _score_rows(self, batch: Batch, stats: JudgeStats, deadline: float) -> list[Score]:
        """One request per row (the judge modes of ``modes.py`` / ``ranking.py`` build theirs)."""
        rows: list[Score | tuple[str, ...]] = []
        requests: dict[tuple[str, ...], list[dict[str, str]]] = {}  # messages by their texts: duplicates merge
        for i in range(len(batch)):
            if batch.texts[i] is None:
                rows.append(Score(None, batch.text_errors[i]))
                continue
            try:
                hollow = self._hollow(batch, i)
                if hollow is not None:  # nothing to judge: 0.0, the judge is not asked (hollow.py)
                    rows.append(hollow)
                    continue
                messages = self._messages(batch, i)
            except (MissingColumnError, JudgeInputError) as exc:
                rows.append(self._failure(exc))
                continue
            key = tuple(message["content"] for message in messages)
            if key in requests:
                stats.deduplicated += 1
            requests[key] = messages
            rows.append(key)
        scores = await self._judged(requests, stats, deadline)
        return [row if isinstance(row, Score) else scores[row] for row in rows]

    def _hollow(self, batch: Batch, index: int) -> Score | None:
        """0.0 for a hollow completion (a judge master key) when the template shows the completion."""
        if not self.refuses_hollow or "completion" not in self.template.fields:
            return None
        return hollow_score(batch.texts[index], batch.row(index), self.reference_column)

    def _messages(self, batch: Batch, index: int) -> list[dict[str, str]]:
        return self._conversation(self.template.render(batch.row(index), self.reference_column))

    def _conversation(self, content: str) -> list[dict[str, str]]:
        """The request's messages: the system prompt, if any, then ``content`` as the user's."""
        user = {"role": "user", "content": content}
        return [{"role": "system", "content": self.system_prompt}, user] if self.system_prompt else [user]

    async def _judged(
        self, requests: dict[tuple[str, ...], list[dict[str, str]]], stats: JudgeStats, deadline: float
    ) -> dict[tuple[str, ...], Score]:
        """A score per request: from a cached answer, else from the endpoint's (parsed as it arrives)."""
        endpoint = self.client.endpoint
        bodies = {key: endpoint.request(messages) for key, messages in requests.items()}
        scores: dict[tuple[str, ...], Score] = {}
        stored: dict[tuple[str, ...], str] = {}
        if self.cache is not None and bodies:
            stored = {key: request_key({"base_url": endpoint.base_url, **body}) for key, body in bodies.items()}
            cached = _answers_from_cache(await asyncio.to_thread(self.cache.get_many, stored.values()))
            scores = {key: self._score(cached[ckey]) for key, ckey in stored.items() if ckey in cached}
            stats.cache_hits += len(scores)
        tasks = {key: asyncio.ensure_future(self._judge(body, stats, deadline))
                 for key, body in bodies.items() if key not in scores}  # fmt: skip
        if not tasks:
            return scores
        try:
            left = None if self.batch_deadline is None else max(deadline - time.monotonic(), 0.0)
            await asyncio.wait(tasks.values(), timeout=left)
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
        fresh = {}
        for key, task in tasks.items():
            if task.cancelled():
                stats.failures += 1
                reason = f"judge gave no answer before the batch deadline of {self.batch_deadline:g} s"
                scores[key] = Score(None, reason, None, "timeout")
            elif task.exception() is not None:  # not the endpoint's failure but ours: the error policy decides
                scores[key] = self._failure(task.exception())
            else:
                answer, scores[key] = task.result()
                if answer is not None and stored:
                    fresh[stored[key]] = answer.to_json()
        if fresh:
            self.cache.put_many(fresh)  # stored in the background, off the critical path
        return scores

    async def _judge(self, body: dict[str, Any], stats: JudgeStats, deadline: float) -> tuple[Answer | None, Score]:
        """Ask the endpoint and parse its answer at once (parsing overlaps the other requests' waits)."""
        try:
            answer = await self.client.ask(body, stats, deadline)
        except JudgeContextOverflow as exc:  # the completion's doing: a scored failure, never an abstention
            return None, Score(0.0, f"too long for the judge: {exc}", False)
        except JudgeRequestError as exc:
            return None, Score(None, f"judge unavailable: {exc}", None, "error")  # whatever on_error says
        return answer, self._score(answer)

    def _score(self, answer: Answer) -> Score:
        said = shorten(answer.content)
        try:
            parsed = parse_answer(answer.content, self.parse, self.scale)
        except UnparsableAnswer as exc:
            return Score(None, f"unparsable judge answer ({exc}): {said!r}", None, "error")  # the judge's failure
        if self.logprobs and answer.logprobs:
            parsed = expected_score(answer.logprobs, answer.content, parsed, self.scale) or parsed
        return Score(parsed.value, f"judge ({parsed.how}): {said}", parsed.verdict)

    async def aclose(self) -> None:
        """``close`` from async code (the cache's queued answers are stored in a thread)."""
        self.client.close()
        if self.cache is not None:
            await asyncio.to_thread(self.cache.close)

    def close(self) -> None:
        """Release the endpoint's client (closed when no judge of the process uses it) and the cache
        connection, after storing queued answers; the reward stays usable."""
        self.client.close()
        if self.cache is not None:
            self.cache.close()

    def __repr__(self) -> str:
        endpoint = self.client.endpoint
        return f"<JudgeReward {self.__name__!r} model={endpoint.model!r} base_url={endpoint.base_url!r}>"


def _answers_from_cache(stored: dict[str, dict[str, Any]]) -> dict[str, Answer]:
    """Cached answers that still read as answers (a damaged entry is a miss, replaced by a fresh answer)."""
    answers = {}
    for key, data in stored.items():
        try:
            answers[key] = Answer.from_json(data)
        except (KeyError, TypeError, ValueError):
            continue
    return answers
