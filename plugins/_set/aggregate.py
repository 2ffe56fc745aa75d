"""Combine a set's component values into per-sample totals: ``sum`` or ``normalize_then_sum``.

``sum`` adds ``weight * value`` over the components that scored the sample (TRL's ``nansum``).
``normalize_then_sum`` first normalises each component within each prompt group, over the samples
it scored: ``(value - mean) / (std + EPS)`` with the sample standard deviation (Bessel-corrected,
as TRL's ``nanstd`` and ``torch.std`` in verl's GRPO), so a reward with a wide range cannot drown
the others (GDPO). An abstention is left out of its group's mean and std and adds nothing to its
sample's total; a group where a component has fewer than two values, or no spread, gives it 0.
A sample where every component abstained has no total (``None``) under both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

EPS = 1e-4  # TRL's epsilon in normalize_then_sum (verl's GDPO uses 1e-6; it only matters at near-zero spread)


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


def group_means(values: Sequence[float | None], groups: Sequence[Sequence[int]]) -> list[float | None]:
    """Each row's group mean of the present ``values`` (``None`` for a group where none is present)."""
    out: list[float | None] = [None] * len(values)
    for group in groups:
        present = [values[i] for i in group if values[i] is not None]
        mean = math.fsum(present) / len(present) if present else None
        for i in group:
            out[i] = mean
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
) -> list[float | None]:
    """Per-sample totals of ``components`` (alias -> values) with ``weights[i]`` (alias -> weight) for sample i.

    ``groups`` (lists of row indices) are needed by ``normalize_then_sum``; by default all rows form one group.
    """
    n = len(weights)
    if aggregate == "normalize_then_sum":
        groups = groups if groups is not None else [list(range(n))]
        components = {alias: normalized_in_groups(values, groups) for alias, values in components.items()}
    totals: list[float | None] = []
    for i in range(n):
        parts = [weights[i][alias] * values[i] for alias, values in components.items() if values[i] is not None]
        totals.append(math.fsum(parts) if parts else None)
    return totals
