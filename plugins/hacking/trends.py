"""The statistics the signals are read from: a series' trend over a window of steps, within-group
rank correlation, and a rate's standard error with prompt groups as the unit.

Pure Python (the core needs no numpy). Every test is scale-free: a trend is judged against the
series' own step-to-step noise (never less than the sampling error of its step means), a
correlation on ranks within prompt groups (GRPO's advantages compare completions of one prompt).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Trend", "grouped_rate", "ranks", "trend", "within_group_moments", "within_group_rank_correlation"]


@dataclass(frozen=True)
class Trend:
    """A least-squares line through a window of step means.

    ``first``/``last``: the line's values at the window's ends; ``change = last - first``; ``t``: the
    slope over its standard error (residual scatter, floored at the step means' own standard error);
    ``before``/``now``: the observed mean of the window's first two steps and the last step's value
    (what messages quote).
    """

    first: float
    last: float
    t: float
    steps: int
    before: float = 0.0
    now: float = 0.0

    @property
    def change(self) -> float:
        return self.last - self.first

    @property
    def relative(self) -> float:
        """``change`` as a fraction of ``first`` (inf when the series starts at 0 and grows)."""
        if self.first == 0:
            return math.inf if self.change > 0 else 0.0
        return self.change / abs(self.first)


def trend(means: Sequence[float], errors: Sequence[float] | None = None) -> Trend:
    """The :class:`Trend` of ``means`` (one per step, in order); ``errors``: each mean's standard error."""
    n = len(means)
    if n < 3:
        return Trend(means[0] if means else 0.0, means[-1] if means else 0.0, 0.0, n,
                     means[0] if means else 0.0, means[-1] if means else 0.0)
    xs = range(n)
    x_mean = (n - 1) / 2
    y_mean = math.fsum(means) / n
    sxx = math.fsum((x - x_mean) ** 2 for x in xs)
    slope = math.fsum((x - x_mean) * (y - y_mean) for x, y in zip(xs, means, strict=True)) / sxx
    intercept = y_mean - slope * x_mean
    residual = math.fsum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, means, strict=True)) / (n - 2)
    floor = math.fsum(e * e for e in errors) / n if errors else 0.0
    scatter = max(residual, floor)
    if scatter <= 0.0:
        t = 0.0 if slope == 0 else math.copysign(math.inf, slope)
    else:
        t = slope / math.sqrt(scatter / sxx)
    return Trend(intercept, intercept + slope * (n - 1), t, n, (means[0] + means[1]) / 2, means[-1])


def ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (ties share the mean of their positions), 0-based."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2
        i = j + 1
    return out


def within_group_rank_correlation(xs: Sequence[float | None], ys: Sequence[float | None],
                                  groups: Sequence[Sequence[int]]) -> float | None:
    """Pearson correlation of ranks taken within each group and centred there, pooled over groups.

    Only rows where both values are present count; a group adds nothing unless both vary in it.
    ``None`` when no group has two such rows.
    """
    sxy = sxx = syy = 0.0
    for group in groups:
        rows = [i for i in group if xs[i] is not None and ys[i] is not None]
        if len(rows) < 2:
            continue
        rx, ry = ranks([xs[i] for i in rows]), ranks([ys[i] for i in rows])
        cx, cy = math.fsum(rx) / len(rx), math.fsum(ry) / len(ry)
        for a, b in zip(rx, ry, strict=True):
            sxy += (a - cx) * (b - cy)
            sxx += (a - cx) ** 2
            syy += (b - cy) ** 2
    if sxx == 0.0 or syy == 0.0:
        return None
    return sxy / math.sqrt(sxx * syy)


def within_group_moments(xs: Sequence[float | None], ys: Sequence[float | None],
                         groups: Sequence[Sequence[int]]) -> tuple[float, float]:
    """Within-group co-moment and x's moment, pooled over groups: ``sum (x - x_g)(y - y_g)`` and ``sum (x - x_g)^2``
    over rows where both are present (their ratio is the within-prompt slope of y on x)."""
    sxy = sxx = 0.0
    for group in groups:
        rows = [i for i in group if xs[i] is not None and ys[i] is not None]
        if len(rows) < 2:
            continue
        cx = math.fsum(xs[i] for i in rows) / len(rows)  # type: ignore[misc]
        cy = math.fsum(ys[i] for i in rows) / len(rows)  # type: ignore[misc]
        sxy += math.fsum((xs[i] - cx) * (ys[i] - cy) for i in rows)  # type: ignore[operator]
        sxx += math.fsum((xs[i] - cx) ** 2 for i in rows)  # type: ignore[operator]
    return sxy, sxx


def grouped_rate(hits: Sequence[int], totals: Sequence[int]) -> tuple[float, float]:
    """A rate over several groups (``hits[g]`` of ``totals[g]``) and its standard error with groups as the
    unit, so that rows of one prompt, which fail or abstain together, are not counted as independent."""
    used = [(h, t) for h, t in zip(hits, totals, strict=True) if t > 0]
    total = sum(t for _, t in used)
    if not total:
        return 0.0, 0.0
    rate = sum(h for h, _ in used) / total
    k = len(used)
    if k < 2:
        return rate, math.sqrt(rate * (1 - rate) / total)
    mean_size = total / k
    spread = math.fsum((h - rate * t) ** 2 for h, t in used) / (k - 1)
    clustered = math.sqrt(spread / k) / mean_size
    return rate, max(clustered, math.sqrt(rate * (1 - rate) / total))
