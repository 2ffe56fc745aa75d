"""The set's own wrappers around a reward: a gate and a route. They are not rewards.

:class:`~rewardhub.Reward` is what plugin authors subclass. A set scores each entry with a *scorer*:
the entry's reward, or a wrapper around it. Every scorer has the same small interface, which a
``Reward`` already has: ``__name__``, ``is_async``, ``needs_groups``, ``group_size``, ``role``,
``evaluate_batch(batch, call=None)``, ``aevaluate_batch(batch, call=None)`` and ``share()`` (remember
the last batches, so rewards reusing its verdicts get the very verdicts the set paid). A wrapper keeps
the reward it wraps as ``inner``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from .._aio import run_coroutine
from .._batch import Batch, Score
from .._call import Call, trainer_call
from .._reward import BatchResult, aevaluate_any, report
from .routing import Route
from .sharing import VerdictMemo, batch_key

__all__ = ["Gated", "Routed", "Scorer", "gated", "innermost", "routed"]

_GATE_SAYS = {"abstain": "abstained", "error": "failed", "timeout": "timed out"}


def innermost(scorer: Any) -> Any:
    """The plugin's reward inside the set's wrappers."""
    while isinstance(scorer, Scorer):
        scorer = scorer.inner
    return scorer


class Scorer:
    """Base of the set's wrappers: what they share (naming, group needs, memo), not what they score."""

    watched = False  # the wrapped rewards say for themselves when they are not scoring

    def __init__(self, inner: Any):
        self.inner = inner
        self.__name__ = inner.__name__
        self._memo: VerdictMemo | None = None

    @property
    def is_async(self) -> bool:
        return bool(getattr(self.inner, "is_async", False))

    @property
    def needs_groups(self) -> bool:
        return bool(self.inner.needs_groups)

    @property
    def group_size(self) -> int | None:
        return self.inner.group_size

    @property
    def role(self) -> str | None:
        return self.inner.role

    def required_columns(self) -> tuple[str, ...]:
        """The columns the wrapped reward reads on every row."""
        return self.inner.required_columns()

    @property
    def batch_timeout(self) -> float | None:
        return getattr(self.inner, "batch_timeout", None)

    @property
    def totals(self) -> dict[str, float]:
        return self.inner.totals

    def share(self) -> Scorer:
        """Remember the last few batches so that rewards reusing these verdicts do not score them again."""
        if self._memo is None:
            self._memo = VerdictMemo()
        return self

    @property
    def shared(self) -> bool:
        return self._memo is not None

    def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        """Score as TRL calls a reward: ``rewards[alias](prompts, completions, **columns)``."""
        batch, call = self._trainer_call(prompts, completions, kwargs)
        result = self.evaluate_batch(batch, call)
        report(self.__name__, result, call)
        return result.values

    def _trainer_call(self, prompts: Any, completions: Any, kwargs: dict[str, Any]) -> tuple[Batch, Call]:
        batch = Batch.from_call(prompts, completions, kwargs, self.__name__)
        return batch, trainer_call(self, batch, kwargs)

    def evaluate(self, prompts: Any = None, completions: Any = None, **columns: Any) -> BatchResult:
        """Score TRL-style arguments (as :meth:`Reward.evaluate` takes them)."""
        return self.evaluate_batch(Batch.from_call(prompts, completions, columns, self.__name__))

    def evaluate_batch(self, batch: Batch, call: Call | None = None) -> BatchResult:
        if self.is_async:
            return run_coroutine(self.aevaluate_batch(batch, call))
        key, cached = self._recall(batch)
        if cached is not None:
            return cached
        return self._remember(key, self._evaluate(batch, call))

    async def aevaluate_batch(self, batch: Batch, call: Call | None = None) -> BatchResult:
        key, cached = self._recall(batch)
        if cached is not None:
            return cached
        return self._remember(key, await self._aevaluate(batch, call))

    def _evaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        raise NotImplementedError

    async def _aevaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        raise NotImplementedError

    def _recall(self, batch: Batch) -> tuple[tuple | None, BatchResult | None]:
        if self._memo is None:
            return None, None
        key = batch_key(batch)
        return key, self._memo.recall(key)

    def _remember(self, key: tuple | None, result: BatchResult) -> BatchResult:
        if key is not None and self._memo is not None:
            self._memo.remember(key, result)
        return result

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__name__!r}: {self.inner!r}>"


class Gated(Scorer):
    """``inner`` counts only where ``gate_scorer`` passes (value >= threshold); elsewhere ``otherwise``.

    The gate is scored first and ``inner`` only on the rows that pass it (a gated judge sends no
    request for the others), except when ``inner`` needs whole groups or shares its verdicts with
    other rewards: then it scores every row, as those need.
    """

    def __init__(self, inner: Any, gate_scorer: Any, gate: Any):
        super().__init__(inner)
        self.gate_scorer = gate_scorer.share()
        self.gate = gate

    @property
    def is_async(self) -> bool:
        return bool(getattr(self.inner, "is_async", False) or getattr(self.gate_scorer, "is_async", False))

    def _evaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        start = time.perf_counter()
        missing = self._missing(batch)
        if missing is not None:
            return missing
        gate = self.gate_scorer.evaluate_batch(batch, call)
        rows = self._rows_to_score(gate)
        inner = self.inner.evaluate_batch(self._subset(batch, rows), call) if rows else None
        return self._apply_gate(gate, rows, inner, time.perf_counter() - start)

    async def _aevaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        start = time.perf_counter()
        missing = self._missing(batch)
        if missing is not None:
            return missing
        gate = await aevaluate_any(self.gate_scorer, batch, call)
        rows = self._rows_to_score(gate)
        inner = await aevaluate_any(self.inner, self._subset(batch, rows), call) if rows else None
        return self._apply_gate(gate, rows, inner, time.perf_counter() - start)

    def _missing(self, batch: Batch) -> BatchResult | None:
        """When the batch lacks a column ``inner`` needs no row can be scored, gated out or not: an error."""
        check = getattr(self.inner, "_missing_column", None)
        scores = check(batch) if check is not None else None
        return None if scores is None else BatchResult(scores, 0.0, len(scores))

    @staticmethod
    def _subset(batch: Batch, rows: list[int]) -> Batch:
        return batch if len(rows) == len(batch) else batch.subset(rows)

    def _rows_to_score(self, gate: BatchResult) -> list[int]:
        """Rows ``inner`` must score: those passing the gate, or all when it needs whole groups or shares verdicts."""
        if self.needs_groups or getattr(self.inner, "_memo", None) is not None:
            return list(range(len(gate.scores)))
        return [i for i, s in enumerate(gate.scores) if s.value is not None and s.value >= self.gate.threshold]

    def _apply_gate(self, gate: BatchResult, rows: list[int], inner: BatchResult | None, seconds: float) -> BatchResult:
        scored = dict(zip(rows, inner.scores, strict=True)) if inner is not None else {}
        scores = []
        for i, gate_score in enumerate(gate.scores):
            if gate_score.value is None:  # the gate's own failure stays a failure; its abstention an abstention
                outcome = gate_score.outcome if gate_score.outcome in ("error", "timeout") else "abstain"
                reason = f"gate {self.gate.reward!r} {_GATE_SAYS[outcome]}"
                scores.append(Score(None, f"{reason}: {gate_score.reason}".rstrip(": "), None, outcome))
            elif gate_score.value >= self.gate.threshold:
                scores.append(scored[i])
            else:
                reason = f"gated: {self.gate.reward} scored {gate_score.value:g} < {self.gate.threshold:g}"
                scores.append(Score(self.gate.otherwise, reason, False))
        return BatchResult(scores, seconds, sum(1 for s in scores if s.outcome == "error"))


class Routed(Scorer):
    """``inner`` scored on the rows its route lets through; the other rows abstain without being scored."""

    def __init__(self, inner: Any, route: Route, where: str):
        super().__init__(inner)
        self.route = route
        self.where = where

    def _evaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        chosen = self._chosen(batch)
        if len(chosen) == len(batch):
            return self.inner.evaluate_batch(batch, call)
        inner = self.inner.evaluate_batch(batch.subset(chosen), call) if chosen else None
        return self._merge(batch, chosen, inner)

    async def _aevaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        chosen = self._chosen(batch)
        if len(chosen) == len(batch):
            return await aevaluate_any(self.inner, batch, call)
        inner = await aevaluate_any(self.inner, batch.subset(chosen), call) if chosen else None
        return self._merge(batch, chosen, inner)

    def _chosen(self, batch: Batch) -> list[int]:
        return [i for i, ok in enumerate(self.route.applies(batch, self.where)) if ok]

    def _merge(self, batch: Batch, chosen: Sequence[int], inner: BatchResult | None) -> BatchResult:
        values = batch.lookup(self.route.column) or [None] * len(batch)
        scores = [Score(None, self.route.reason(values[i]), outcome="abstain") for i in range(len(batch))]
        if inner is None:
            return BatchResult(scores, 0.0, 0)
        for i, score in zip(chosen, inner.scores, strict=True):
            scores[i] = score
        return BatchResult(scores, inner.seconds, inner.errors)


class _Awaited:
    """An async scorer as TRL calls it: ``__call__`` is a coroutine function, awaited with TRL's others."""

    async def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        batch, call = self._trainer_call(prompts, completions, kwargs)  # type: ignore[attr-defined]
        result = await self.aevaluate_batch(batch, call)  # type: ignore[attr-defined]
        report(self.__name__, result, call)  # type: ignore[attr-defined]
        return result.values


class AsyncGated(_Awaited, Gated):
    """A gate over an async reward or an async gate."""


class AsyncRouted(_Awaited, Routed):
    """A route over an async reward."""


def gated(inner: Any, gate_scorer: Any, gate: Any) -> Gated:
    """``inner`` behind ``gate`` (an awaitable scorer when either side is async)."""
    is_async = getattr(inner, "is_async", False) or getattr(gate_scorer, "is_async", False)
    return (AsyncGated if is_async else Gated)(inner, gate_scorer, gate)


def routed(inner: Any, route: Route, where: str) -> Routed:
    """``inner`` behind ``route`` (an awaitable scorer when ``inner`` is async)."""
    return (AsyncRouted if getattr(inner, "is_async", False) else Routed)(inner, route, where)
