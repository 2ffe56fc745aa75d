"""Routing by task: an entry's ``when`` says which rows it applies to; the others abstain unscored.

    - name: math
      when: {column: data_source, in: [gsm8k, math]}

Rows outside the route get ``None`` with the reason (TRL then leaves that reward out for the row)
and are never handed to the reward, so a code sandbox does not run on chat rows. A route whose
column is not in the batch is a config error naming the entry: silently abstaining everywhere would
make the reward vanish from training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._batch import Batch
from ..errors import ConfigError, unknown_keys_message

__all__ = ["ROUTE_KEYS", "Route", "RoutingError", "parse_route"]

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
        """Which rows of ``batch`` the route lets through; :class:`RoutingError` if the column is missing.
        A part of an episode's trajectory view (``num_turns``, ``finish_reason``, ...) is a column here too."""
        values = batch.lookup(self.column)
        if values is None:
            have = ", ".join(sorted(batch.columns)) or "(none)"
            raise RoutingError(
                f"{where}: when.column {self.column!r} is not a column of the batch (it has: {have}) nor a "
                f"part of the trajectory view; route on a column the dataset has, or add {self.column!r} to every row"
            )
        return [self._matches(value) != self.negate for value in values]

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
