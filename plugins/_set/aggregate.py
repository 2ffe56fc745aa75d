"""Combine a set's component values into per-sample totals: ``sum`` or ``normalize_then_sum``.

An abstention never pays more than a failure. In every aggregation a row where a component abstained
counts that component at its group's *floor*: the lowest value the component scored in the row's prompt
group (the group's worst scored row), and never more than 0.0, what a reward pays a failure (so where
every other row of the group was right, abstaining still does not pay as much as being right). So a
completion that makes a reward abstain (a runaway expression, output that makes an endpoint refuse)
ranks with the group's worst row for that reward, never above an honest wrong answer. A component that abstained on a whole group stays out of that group's totals, and
rows a route's ``when`` leaves out are not the component's rows: they stay out too.

``sum`` adds ``weight * value`` over the components (TRL's ``nansum``, abstentions filled first).
``normalize_then_sum`` first normalises each component within each prompt group:
``(value - mean) / (std + EPS)`` with the sample standard deviation (Bessel-corrected, as TRL's ``nanstd``
and ``torch.std`` in verl's GRPO) over the group's values, a filled abstention counted at the floor as
TRL and verl's GDPO count the filled values they are handed, so a reward with a wide range cannot drown
the others (GDPO); a group where a component has fewer than two values, or no spread, gives it 0.
A sample whose every component abstained on its whole group has no total (``None``) under both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["EPS", "FAILURE", "combine", "group_floors", "group_ranges", "mean_std", "normalized_in_groups", "with_floors"]

FAILURE = 0.0  # what a reward pays a failed row: an abstention's floor is never above it
EPS = 1e-4  # TRL's epsilon in normalize_then_sum (verl's GDPO uses 1e-6; it only matters at near-zero spread)


def group_floors(values: Sequence[float | None], groups: Sequence[Sequence[int]]) -> list[float | None]:
    """Each row's group floor: the lowest present value of its group, at most ``FAILURE`` (``None`` where the
    group has no value)."""
    out: list[float | None] = [None] * len(values)
    for group in groups:
        present = [values[i] for i in group if values[i] is not None]
        floor = min(FAILURE, *present) if present else None
        for i in group:
            out[i] = floor
    return out


def with_floors(values: Sequence[float | None], groups: Sequence[Sequence[int]],
                applies: Sequence[bool] | None = None) -> list[float | None]:
    """``values`` with each abstention (``None``) counted at its group's floor (``None`` stays where the
    whole group abstained): what an abstaining row is worth in every aggregation. Rows where ``applies``
    is false (a route's ``when`` left them out: the reward is not theirs) stay ``None``."""
    if all(v is not None for v in values):
        return list(values)
    floors = group_floors(values, groups)
    return [floor if value is None and (applies is None or applies[i]) else value
            for i, (value, floor) in enumerate(zip(values, floors, strict=True))]


def normalized_in_groups(values: Sequence[float | None], groups: Sequence[Sequence[int]]) -> list[float | None]:
    """``values`` normalised within each group of row indices; ``None`` stays ``None``."""
    out: list[float | None] = list(values)
    for group in groups:
        present = [values[i] for i in group if values[i] is not None]
        mean, std = mean_std(present)
        for i in group:
            value = values[i]
            if value is not None:
                out[i] = 0.0 if len(present) < 2 or std == 0.0 else (value - mean) / (std + EPS)
    return out


def group_ranges(values: Sequence[float | None], groups: Sequence[Sequence[int]]) -> list[tuple[float, float] | None]:
    """Each row's group range of the present ``values``, (lowest, highest) (``None`` for a group where none is present)."""
    out: list[tuple[float, float] | None] = [None] * len(values)
    for group in groups:
        present = [values[i] for i in group if values[i] is not None]
        span = (min(present), max(present)) if present else None
        for i in group:
            out[i] = span
    return out


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0.0 for fewer than two values)."""
    if not values:
        return 0.0, 0.0
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def combine(
    components: Mapping[str, Sequence[float | None]],
    weights: Sequence[Mapping[str, float]],
    aggregate: str = "sum",
    groups: Sequence[Sequence[int]] | None = None,
    applies: Mapping[str, Sequence[bool]] | None = None,
) -> list[float | None]:
    """Per-sample totals of ``components`` (alias -> values) with ``weights[i]`` (alias -> weight) for sample i.

    ``groups`` (lists of row indices) are where abstentions find their floor and what ``normalize_then_sum``
    normalises within; by default every row is a group of its own under ``sum`` and all rows form one
    group under ``normalize_then_sum``. ``applies`` (alias -> per-row bool): the rows a routed component
    applies to (see :func:`with_floors`); every row by default.
    """
    n = len(weights)
    if groups is None:
        groups = [list(range(n))] if aggregate == "normalize_then_sum" else [[i] for i in range(n)]
    applies = applies or {}
    components = {alias: with_floors(values, groups, applies.get(alias)) for alias, values in components.items()}
    if aggregate == "normalize_then_sum":
        components = {alias: normalized_in_groups(values, groups) for alias, values in components.items()}
    totals: list[float | None] = []
    for i in range(n):
        parts = [weights[i][alias] * values[i] for alias, values in components.items() if values[i] is not None]
        totals.append(math.fsum(parts) if parts else None)
    return totals
