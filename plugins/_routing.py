"""Routing by task: an entry's ``when`` says which rows it applies to; the others abstain unscored.

    - name: math
      when: {column: data_source, in: [gsm8k, math]}

Rows outside the route get ``None`` with the reason (TRL then leaves that reward out for the row)
and are never handed to the reward, so a code sandbox does not run on chat rows. A route whose
column is not in the batch is a config error naming the entry: silently abstaining everywhere would
make the reward vanish from training.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._batch import Batch, Score
from ._reward import AsyncReward, BatchResult, Reward
from .errors import ConfigError, unknown_keys_message

ROUTE_KEYS = ("column", "in", "not_in")


class RoutingError(ConfigError):
    """A route cannot be applied to a batch (its column is not there): names the entry and the key."""


@dataclass(frozen=True)
class Route:
    """Rows whose ``column`` value is in ``values`` (or, with ``negate``, is not)."""

    column: str
    values: tuple[Any, ...]
    negate: bool = False

    def applies(self, batch: Batch, where: str = "reward entry") -> list[bool]:
        """Which rows of ``batch`` the route lets through; :class:`RoutingError` if the column is missing."""
        if self.column not in batch.columns:
            have = ", ".join(sorted(batch.columns)) or "(none)"
            raise RoutingError(
                f"{where}: when.column {self.column!r} is not a column of the batch (it has: {have}); "
                f"route on a column the dataset has, or add {self.column!r} to every row"
            )
        return [self._matches(value) != self.negate for value in batch.columns[self.column]]

    def _matches(self, value: Any) -> bool:
        return any(value == v for v in self.values)

    def describe(self) -> str:
        return f"{self.column} {'not in' if self.negate else 'in'} [{', '.join(map(str, self.values))}]"

    def reason(self, value: Any) -> str:
        return f"not routed here: {self.column}={value!r} is {'' if self.negate else 'not '}in the entry's 'when'"


def parse_route(where: str, raw: Any) -> Route | None:
    """A :class:`Route` from an entry's ``when`` mapping (``None`` when absent)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: 'when' must be a mapping like {{column: data_source, in: [gsm8k, math]}}, "
                          f"got {type(raw).__name__}")
    unknown = [k for k in raw if k not in ROUTE_KEYS]
    if unknown:
        raise ConfigError(unknown_keys_message(f"{where}: when", unknown, ROUTE_KEYS))
    column = raw.get("column")
    if not isinstance(column, str) or not column:
        raise ConfigError(f"{where}: when needs 'column': the name of the row column to route on")
    given = [k for k in ("in", "not_in") if k in raw]
    if len(given) != 1:
        raise ConfigError(f"{where}: when needs exactly one of 'in' or 'not_in' (the values of {column!r} "
                          f"the entry applies to, or does not); got {' and '.join(given) or 'neither'}")
    values = raw[given[0]]
    if isinstance(values, str | int | float | bool) or values is None:
        values = [values]
    if not isinstance(values, list | tuple) or not values:
        raise ConfigError(f"{where}: when.{given[0]} must be a non-empty list of {column!r} values")
    return Route(column, tuple(values), negate=given[0] == "not_in")


def innermost(reward: Any) -> Any:
    """The reward inside gates and routes (where ``needs_groups`` / ``group_size`` are declared)."""
    while True:
        inner = getattr(reward, "inner", None)
        if inner is None:
            return reward
        reward = inner


class RoutedReward(Reward):
    """``inner`` scored on the rows its route lets through; the other rows abstain without being scored."""

    def __init__(self, inner: Reward, route: Route, where: str):
        super().__init__(on_error="raise")  # the inner reward contains its own errors; a routing error must surface
        self.inner = inner
        self.route = route
        self.where = where
        self.__name__ = inner.__name__

    def score_batch(self, batch: Batch) -> list[Score]:
        """The scores alone (``evaluate_batch``, which keeps the inner reward's timing, is what callers use)."""
        return self.evaluate_batch(batch).scores

    def evaluate_batch(self, batch: Batch) -> BatchResult:
        chosen = self._chosen(batch)
        if len(chosen) == len(batch):
            return self.inner.evaluate_batch(batch)
        inner = self.inner.evaluate_batch(batch.subset(chosen)) if chosen else None
        return self._merge(batch, chosen, inner)

    def _chosen(self, batch: Batch) -> list[int]:
        return [i for i, ok in enumerate(self.route.applies(batch, self.where)) if ok]

    def _merge(self, batch: Batch, chosen: Sequence[int], inner: BatchResult | None) -> BatchResult:
        values = batch.columns[self.route.column]
        scores = [Score(None, self.route.reason(values[i]), outcome="abstain") for i in range(len(batch))]
        if inner is None:
            return BatchResult(scores, 0.0, 0)
        for i, score in zip(chosen, inner.scores, strict=True):
            scores[i] = score
        return BatchResult(scores, inner.seconds, inner.errors)


class AsyncRoutedReward(AsyncReward, RoutedReward):
    """A route over an async reward: the chosen rows are awaited on the caller's loop."""

    async def score_batch_async(self, batch: Batch) -> list[Score]:
        return (await self.aevaluate_batch(batch)).scores

    async def aevaluate_batch(self, batch: Batch) -> BatchResult:
        chosen = self._chosen(batch)
        if len(chosen) == len(batch):
            return await self.inner.aevaluate_batch(batch)
        inner = await self.inner.aevaluate_batch(batch.subset(chosen)) if chosen else None
        return self._merge(batch, chosen, inner)

    def evaluate_batch(self, batch: Batch) -> BatchResult:
        return AsyncReward.evaluate_batch(self, batch)


def routed(reward: Reward, route: Route | None, where: str) -> Reward:
    """``reward`` behind ``route`` (itself when there is no route)."""
    if route is None:
        return reward
    kind = AsyncRoutedReward if isinstance(reward, AsyncReward) else RoutedReward
    return kind(reward, route, where)

