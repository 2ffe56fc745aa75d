"""The reward base classes: authors write ``score_sample`` or ``score_batch``; the base does the rest.

A :class:`Reward` instance is a TRL-compatible batch callable
``reward(prompts, completions, **columns) -> list[float | None]``. The base turns chat or plain
completions into text, applies the error policy, checks the contract, hands per-sample reasons to
``log_extra`` and counters to ``log_metric``, and can share its verdicts with other rewards.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ._aio import run_coroutine
from ._batch import Batch, Row, Score, to_score
from ._call import Call, current_call, entered, trainer_call
from ._deadline import Overdue, run_async, run_sync
from ._not_scoring import ScoringWatch
from ._set.sharing import VerdictMemo, batch_key
from .errors import (
    ConfigError,
    InfrastructureError,
    MissingColumnError,
    RewardContractError,
    WorkerStartupError,
)

__all__ = [
    "AsyncReward",
    "BatchResult",
    "ON_ERROR_POLICIES",
    "PROPAGATED",
    "Reward",
    "aevaluate_any",
    "is_async_reward",
    "report",
]

ON_ERROR_POLICIES = ("none", "zero", "raise")
# Not the sample's failure but the reward's or the machine's: no error policy turns them into scores.
PROPAGATED = (RewardContractError, WorkerStartupError)
_TOTALS_LOCK = threading.Lock()  # running totals are updated from several server threads at once


@dataclass(frozen=True)
class BatchResult:
    """What one call produced: a score per sample plus how long it took and how many samples failed."""

    scores: list[Score]
    seconds: float
    errors: int

    @property
    def values(self) -> list[float | None]:
        return [s.value for s in self.scores]

    @property
    def reasons(self) -> list[str]:
        return [s.reason for s in self.scores]

    @property
    def verdicts(self) -> list[bool | None]:
        return [s.verdict for s in self.scores]

    @property
    def outcomes(self) -> list[str]:
        return [s.outcome for s in self.scores]


class Reward:
    """Base class of every reward. Subclass, set ``name``, override ``score_sample`` or ``score_batch``.

    Keyword arguments of the subclass ``__init__`` are the reward's params (what a config may set);
    pass ``on_error`` on to ``super().__init__``.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    # A group reward compares the completions of one prompt (majority_vote, length_penalty's group mode):
    # callers then hand it whole groups; ``group_size`` is the group size it expects, when it knows one.
    needs_groups: bool = False
    group_size: int | None = None
    # What the reward measures, for the hacking monitor: "correctness", "format", "style", ... (None: not said).
    role: ClassVar[str | None] = None
    # Said when it is not scoring (see ``_not_scoring``); False for wrappers whose members say it themselves.
    watched: ClassVar[bool] = True
    is_async: ClassVar[bool] = False  # AsyncReward: scored by awaiting ``aevaluate_batch``

    def __init__(self, *, on_error: str = "none"):
        if on_error not in ON_ERROR_POLICIES:
            raise ConfigError(f"on_error must be one of {', '.join(ON_ERROR_POLICIES)}; got {on_error!r}")
        if not _overrides_a_scorer(type(self)):  # else every sample would abstain with NotImplementedError
            raise TypeError(f"{type(self).__name__} must override score_sample or score_batch "
                            f"(score_sample_async or score_batch_async for an AsyncReward)")
        self.on_error = on_error
        self.__name__ = self.name or type(self).__name__
        self.totals = {"samples": 0, "errors": 0, "timeouts": 0, "abstained": 0, "seconds": 0.0}
        # Seconds a batch may take (a config entry's ``timeout``); past it unfinished samples time out.
        self.batch_timeout: float | None = None
        self._overdue = Overdue()
        self._memo: VerdictMemo | None = None
        self._bound: dict[str, Reward] = {}
        self._watch = ScoringWatch()

    # ----- what authors override -------------------------------------------------------------
    def score_sample(self, text: str, row: Row) -> Any:
        """Score one completion's text; return a number, ``None``, ``(value, reason)`` or ``Score``."""
        raise NotImplementedError(f"{type(self).__name__} must override score_sample or score_batch")

    def score_batch(self, batch: Batch) -> list[Any]:
        """Score a whole batch (override for group-aware or vectorised rewards)."""
        return [self._sample_outcome(batch, i) for i in range(len(batch))]

    def dependencies(self) -> dict[str, str]:
        """Rewards whose verdicts this one reuses: role -> registry name or alias in the same set."""
        return {}

    def required_columns(self) -> tuple[str, ...]:
        """Columns this reward reads on every row. A batch without one is not scored at all: each
        sample gets outcome ``error`` naming the column (and the closest one the batch has), said once."""
        return ()

    # ----- calling -----------------------------------------------------------------------------
    def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        batch = Batch.from_call(prompts, completions, kwargs, self.__name__)
        call = self.new_call(batch, kwargs)
        result = self.evaluate_batch(batch, call)
        report(self.__name__, result, call)
        return result.values

    def evaluate(self, prompts: Any = None, completions: Any = None, **columns: Any) -> BatchResult:
        """Score a batch and return scores with reasons and verdicts (no trainer logging)."""
        return self.evaluate_batch(Batch.from_call(prompts, completions, columns, self.__name__))

    def new_call(self, batch: Batch, hooks: dict[str, Any] | None = None) -> Call:
        """The context of a trainer's call on ``batch``: this reward's deadline, the trainer's step and hooks."""
        return trainer_call(self, batch, hooks or {}, self.batch_timeout)

    def _own_call(self, call: Call | None) -> Call:
        """This reward's context for one call: its own settled rows and deadline; step and hooks from ``call``."""
        if call is None:
            return Call(self.__name__, self, self.batch_timeout)
        return call if call.owner is self else call.for_reward(self, self.__name__, self.batch_timeout)

    def evaluate_batch(self, batch: Batch, call: Call | None = None) -> BatchResult:
        """``evaluate`` for a ready :class:`Batch`, within ``call`` (its step and hooks; this reward's own
        deadline and settled rows); memoised when other rewards share this one's verdicts."""
        key, cached = self._recall(batch)
        if cached is not None:
            return cached
        start = time.perf_counter()
        call = self._own_call(call)
        with entered(call):
            scores = self._missing_column(batch)
            if scores is None and call.seconds is None:
                scores = self._run(batch, call)
            elif scores is None:
                scores = run_sync(call, len(batch), lambda: self._run(batch, call), self._overdue, self._to_score)
        return self._finish(batch, _abstain_where_no_text(batch, scores), time.perf_counter() - start, key)

    def settle(self, index: int, score: Any) -> None:
        """Row ``index``'s final score, known before ``score_batch`` returns: if the call's deadline passes
        first, the row keeps this score instead of timing out. Call it from inside ``score_batch``."""
        call = current_call()
        if call is not None:
            call.settle(index, score)

    def _missing_column(self, batch: Batch) -> list[Score] | None:
        """Every sample's failure when the batch lacks a column of ``required_columns``, else ``None``
        (a column is looked up as a row looks it up: dataset columns, live objects, batch-level values)."""
        columns = [c for c in self.required_columns() if c != "completion"]
        if not columns or not len(batch):
            return None
        row = batch.row(0)
        for column in columns:
            try:
                row[column]
            except MissingColumnError as exc:
                return [self._failure(exc)] * len(batch)
        return None

    def _per_sample(self) -> bool:
        """True when the reward scores sample by sample (a deadline can then keep the finished ones)."""
        return type(self).score_batch is Reward.score_batch

    def _run(self, batch: Batch, call: Call) -> list[Score]:
        if self._per_sample():
            return self._sample_by_sample(batch, call)
        try:
            return self._checked(batch, self.score_batch(batch))
        except PROPAGATED:
            raise
        except Exception as exc:
            if self.on_error == "raise" or len(batch) == 1:
                return [self._failure(exc)] * len(batch)
        # The batch scorer raised: score each row alone so that one bad row loses only itself.
        return [self._row_alone(row, lambda r: self._checked(r, self.score_batch(r))) for row in batch.singles()]

    def _sample_by_sample(self, batch: Batch, call: Call) -> list[Score]:
        """Each sample's score in turn; under a deadline each is settled as it comes, and the loop stops
        once the call is abandoned."""
        if call.seconds is None:
            return [self._sample_outcome(batch, i) for i in range(len(batch))]
        settled, stopped = call.settled, call.stop.is_set
        for i in range(len(batch)):
            if stopped():
                break
            settled[i] = self._sample_outcome(batch, i)
        return list(settled.values())  # in row order: row i was settled i-th (stopped early, the call keeps them)

    def _row_alone(self, row: Batch, score: Any) -> Score:
        """Score a one-row batch, containing its failure by the error policy."""
        try:
            return score(row)[0]
        except PROPAGATED:
            raise
        except Exception as exc:
            return self._failure(exc)

    def _sample_outcome(self, batch: Batch, index: int) -> Score:
        text = batch.texts[index]
        if text is None:
            return Score(None, batch.text_errors[index])
        try:
            raw = self.score_sample(text, batch.row(index))
        except Exception as exc:
            return self._failure(exc)
        return self._to_score(raw)

    def _failure(self, exc: Exception) -> Score:
        """Apply the error policy to an exception raised while scoring (outcome ``error``).

        The policy covers the reward's own failures; an infrastructure failure (a dead worker, a
        sandbox or endpoint down) or a missing column is never the completion's fault: it abstains.
        """
        if isinstance(exc, PROPAGATED):
            raise exc
        if isinstance(exc, InfrastructureError):
            return Score(None, _error_reason(exc), None, "error")
        if isinstance(exc, MissingColumnError):
            exc = exc.for_reward(self.__name__)
        if self.on_error == "raise":
            raise exc
        if isinstance(exc, MissingColumnError):
            self._watch.missing_column(self.__name__, exc)
            return Score(None, _error_reason(exc), None, "error")
        return Score(0.0 if self.on_error == "zero" else None, _error_reason(exc), None, "error")

    def _to_score(self, raw: Any) -> Score:
        """A scorer's return value as a Score; a value that is no score is this reward's error, named."""
        try:
            return to_score(raw)
        except (TypeError, ValueError) as exc:
            return self._failure(type(exc)(f"reward {self.__name__!r} returned no valid score: {exc}"))

    def _checked(self, batch: Batch, raw: Sequence[Any]) -> list[Score]:
        if raw is None or not hasattr(raw, "__len__") or len(raw) != len(batch):
            got = "None" if raw is None else (f"{len(raw)} values" if hasattr(raw, "__len__") else type(raw).__name__)
            raise RewardContractError(
                f"reward {self.__name__!r} returned {got} for a batch of {len(batch)} completions; "
                f"it must return exactly one value per completion"
            )
        return [self._to_score(item) for item in raw]

    def _finish(self, batch: Batch, scores: list[Score], seconds: float, key: tuple | None) -> BatchResult:
        """Count the batch in ``totals``; remember it when this reward's verdicts are shared."""
        errors = sum(1 for s in scores if s.outcome == "error")
        timeouts = sum(1 for s in scores if s.outcome == "timeout")
        abstained = sum(1 for s in scores if s.value is None)
        with _TOTALS_LOCK:
            self.totals["samples"] += len(scores)
            self.totals["errors"] += errors
            self.totals["timeouts"] += timeouts
            self.totals["abstained"] += abstained
            self.totals["seconds"] += seconds
        if self.watched:
            self._watch.batch_done(self.__name__, scores)
        result = BatchResult(scores, seconds, errors)
        if key is not None and self._memo is not None:
            self._memo.remember(key, result)
        return result

    # ----- shared verdicts ------------------------------------------------------------------------
    def share(self) -> Reward:
        """Remember the last few batches so other rewards reuse this reward's verdicts for free."""
        if self._memo is None:
            self._memo = VerdictMemo()
        return self

    def bind(self, role: str, reward: Reward) -> None:
        """Use ``reward``'s verdicts for ``role`` (done by ``RewardSet`` for names in ``dependencies()``)."""
        self._bound[role] = reward.share()

    def dependency(self, role: str) -> Reward:
        """The reward bound to ``role``, built from the registry with default params if none was bound."""
        if role not in self._bound:
            from ._registry import registry

            name = self.dependencies()[role]
            self._bound[role] = registry.create(name).share()
        return self._bound[role]

    def dependency_scores(self, role: str, batch: Batch) -> list[Score]:
        """The bound reward's scores for this batch (computed once, shared via its memo)."""
        reward = self.dependency(role)
        call = current_call()
        if getattr(reward, "is_async", False):
            return run_coroutine(reward.aevaluate_batch(batch, call)).scores
        return reward.evaluate_batch(batch, call).scores

    async def adependency_scores(self, role: str, batch: Batch) -> list[Score]:
        """``dependency_scores`` for async scorers: awaits an async dependency instead of blocking the loop."""
        return (await aevaluate_any(self.dependency(role), batch, current_call())).scores

    def _recall(self, batch: Batch) -> tuple[tuple | None, BatchResult | None]:
        """The batch's memo key (``None`` when not shared) and the remembered result, if any."""
        if self._memo is None:
            return None, None
        key = batch_key(batch)
        return key, self._memo.recall(key)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup failed: the usual cause is a subclass skipping Reward.__init__.
        if name in _SET_BY_INIT:
            raise AttributeError(
                f"{type(self).__name__} has no {name!r}: its __init__ must call super().__init__(on_error=on_error)"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__name__!r}>"


class AsyncReward(Reward):
    """Base for rewards that wait on I/O (judges, remote services): ``async def __call__``.

    Override ``score_sample_async`` (run concurrently) or ``score_batch_async``. Calling
    :meth:`evaluate` from synchronous code runs the coroutine on rewardhub's background loop.
    """

    async def score_sample_async(self, text: str, row: Row) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must override score_sample_async or score_batch_async")

    async def score_batch_async(self, batch: Batch) -> list[Any]:
        call = current_call()

        async def settled(i: int) -> Score:
            score = await self._sample_outcome_async(batch, i)
            if call is not None:
                call.settle(i, score)
            return score

        return list(await asyncio.gather(*(settled(i) for i in range(len(batch)))))

    async def _sample_outcome_async(self, batch: Batch, index: int) -> Score:
        text = batch.texts[index]
        if text is None:
            return Score(None, batch.text_errors[index])
        try:
            raw = await self.score_sample_async(text, batch.row(index))
        except Exception as exc:
            return self._failure(exc)
        return self._to_score(raw)

    is_async = True

    async def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        batch = Batch.from_call(prompts, completions, kwargs, self.__name__)
        call = self.new_call(batch, kwargs)
        result = await self.aevaluate_batch(batch, call)
        report(self.__name__, result, call)
        return result.values

    async def aevaluate(self, prompts: Any = None, completions: Any = None, **columns: Any) -> BatchResult:
        return await self.aevaluate_batch(Batch.from_call(prompts, completions, columns, self.__name__))

    async def aevaluate_batch(self, batch: Batch, call: Call | None = None) -> BatchResult:
        key, cached = self._recall(batch)
        if cached is not None:
            return cached
        start = time.perf_counter()
        call = self._own_call(call)
        with entered(call):
            scores = self._missing_column(batch)
            if scores is None and call.seconds is None:
                scores = await self._run_async(batch)
            elif scores is None:
                scores = await run_async(call, len(batch), lambda: self._run_async(batch), self._to_score)
        return self._finish(batch, _abstain_where_no_text(batch, scores), time.perf_counter() - start, key)

    def _per_sample(self) -> bool:
        return type(self).score_batch_async is AsyncReward.score_batch_async

    async def _run_async(self, batch: Batch) -> list[Score]:
        try:
            return self._checked(batch, await self.score_batch_async(batch))
        except PROPAGATED:
            raise
        except Exception as exc:
            if self.on_error == "raise" or len(batch) == 1:
                return [self._failure(exc)] * len(batch)
        rows = batch.singles()
        results = await asyncio.gather(*(self.score_batch_async(row) for row in rows), return_exceptions=True)
        return [self._row_alone(row, lambda r, res=res: self._checked(r, _unwrap(res))) for row, res in zip(rows, results, strict=True)]

    def evaluate_batch(self, batch: Batch, call: Call | None = None) -> BatchResult:
        return run_coroutine(self.aevaluate_batch(batch, call))


_SET_BY_INIT = ("on_error", "totals", "batch_timeout", "_overdue", "_memo", "_bound", "_watch", "__name__")


def _error_reason(exc: BaseException) -> str:
    message = str(exc).strip() or type(exc).__name__
    if len(message) > 300:
        message = message[:297] + "..."
    return f"error: {type(exc).__name__}: {message}"


def _overrides_a_scorer(cls: type) -> bool:
    if issubclass(cls, AsyncReward):
        return (cls.score_sample_async is not AsyncReward.score_sample_async
                or cls.score_batch_async is not AsyncReward.score_batch_async)
    return cls.score_sample is not Reward.score_sample or cls.score_batch is not Reward.score_batch


def report(name: str, result: BatchResult, call: Call) -> None:
    """Hand a call's reasons and outcomes to the trainer's ``log_extra`` and its counts to ``log_metric``
    (as ``<name>/reason``, ``<name>/outcome``, ``<name>/errors``, ``<name>/timeouts``, ``<name>/abstained``)."""
    log_extra, log_metric = call.log_extra, call.log_metric
    if log_extra is not None:
        log_extra(f"{name}/reason", result.reasons)
        log_extra(f"{name}/outcome", result.outcomes)
    if log_metric is not None:
        n = max(len(result.scores), 1)
        log_metric(f"{name}/errors", float(result.errors))
        log_metric(f"{name}/timeouts", float(result.outcomes.count("timeout")))
        log_metric(f"{name}/abstained", sum(1 for s in result.scores if s.value is None) / n)


async def aevaluate_any(reward: Any, batch: Batch, call: Call | None = None) -> BatchResult:
    """Await an async reward's (or scorer's) result; run a sync one in a thread so that the event loop stays free."""
    if getattr(reward, "is_async", False):
        return await reward.aevaluate_batch(batch, call)
    return await asyncio.to_thread(reward.evaluate_batch, batch, call)


def _unwrap(result: Any) -> Any:
    """A result of ``gather(..., return_exceptions=True)``: raise it if it is an exception."""
    if isinstance(result, BaseException):
        raise result
    return result


def _abstain_where_no_text(batch: Batch, scores: list[Score]) -> list[Score]:
    """Rows whose completion holds no text abstain with the reason, whatever a batch scorer said."""
    for i, text in enumerate(batch.texts):
        if text is None:
            scores[i] = Score(None, batch.text_errors[i])
    return scores


def is_async_reward(reward: Any) -> bool:
    """True when calling ``reward`` returns a coroutine (async functions and async callable objects)."""
    while isinstance(reward, functools.partial):
        reward = reward.func
    return inspect.iscoroutinefunction(reward) or inspect.iscoroutinefunction(type(reward).__call__)
