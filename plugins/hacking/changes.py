"""Change detection on one monitored series against the run's own baseline: a two-sided CUSUM.

A :class:`Change` tracker takes a step mean and its standard error at each step. Its baseline is the first
stretch of ``baseline`` steps over which the series holds still (no significant trend): early training moves
a reward while it is learned (a format picked up in the first steps), and a level taken mid-move would be no
baseline: the stretch must show no trend and its two halves must agree within their sampling error, and a
change that reaches half the threshold within ``baseline`` steps of it sends the tracker back to settling. Once
settled, each step's deviation from the baseline is read in units of the baseline's noise (the step-to-step
scatter, never less than the step means' sampling error) and accumulated (Page's CUSUM with allowance
``ALLOWANCE``): a small shift that persists adds up, so a hack ramping in over hundreds of steps is found about as
soon as its cumulated effect stands out, and one that jumps is found at once.

The baseline keeps growing, late: each settled step joins it once ``baseline`` further steps have passed (its level
and noise are those of all the steps that joined), unless a side has crossed the threshold by then (a change found
is not absorbed into the level it is measured against). A level taken over the first ten steps is off by a third
of the noise on average, and a CUSUM fed a level that is off adds up the offset step after step: an honest series
would cross the threshold in a few hundred steps. Grown over the run, the level is off by little; and since a step
joins only ``baseline`` steps late, a change is measured against the level from before it for that long, and after
that only its first steps, diluted among all the baseline's, move the level: an early hack is not absorbed while it
happens, and a slow one barely. The state is plain numbers (:meth:`Change.state` /
:meth:`Change.restore`) so it survives a restart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .trends import trend

__all__ = ["ALLOWANCE", "Change", "SETTLED_T"]

ALLOWANCE = 0.5  # deviation (in noise units) a step may have without adding to the sum
SETTLED_T = 2.5  # a window holds still when its trend's |t| stays below this


@dataclass
class Change:
    """Two-sided CUSUM of a series against its settled, growing baseline (``level``, ``noise``)."""

    baseline: int  # steps the baseline is first taken over
    threshold: float  # the sum (in noise units) at which the series has changed (``monitor: {threshold: ...}``)
    floor: float = 0.0  # the least noise the baseline may have (a rate at 0 has no scatter to measure), for values
    # ranging over 1 (it scales with the range the series' values span over the baseline: ``scale``)
    scale: float = 0.0  # the widest range of a step's values while settling (0: none told, or none spanned)
    recent: list[tuple[float, float, float]] = field(default_factory=list)  # (step, mean, error) until settled
    level: float | None = None
    noise: float = 0.0
    since: float | None = None  # the step the baseline was first taken to
    up: float = 0.0
    down: float = 0.0
    up_from: float | None = None  # the step the current upward run began
    down_from: float | None = None
    last: float | None = None
    sums: list[float] = field(default_factory=list)  # the baseline's steps: count, mean, sum of squared deviations
    # (Welford's), sum of squared errors
    waiting: list[tuple[float, float, float]] = field(default_factory=list)  # (step, mean, error) of the last
    # ``baseline`` settled steps, not yet in the baseline

    def add(self, step: float, mean: float, error: float, spanned: float | None = None) -> None:
        """Take a step's mean, its standard error and (when known) the range its values spanned."""
        self.last = mean
        if self.level is None:
            if spanned is not None:
                self.scale = max(self.scale, spanned)
            self._settle(step, mean, error)
            return
        if spanned and not self.scale:  # values that spanned nothing while settling (a bonus nobody earned) now span
            self.scale = spanned  # a range: one completion's worth of a change is measured in it from now on
            self.noise = self._noise(*self._baseline()[1:])
        z = (mean - self.level) / self.noise
        self.up, self.up_from = _run(self.up, z - ALLOWANCE, self.up_from, step)
        self.down, self.down_from = _run(self.down, -z - ALLOWANCE, self.down_from, step)
        if len(self.recent) < self.baseline:  # on probation: a move that goes on right after the baseline
            self.recent.append((step, mean, error))  # is the one it was taken in (a reward still being learned)
            if max(self.up, self.down) >= self.threshold / 2:
                self._unsettle()
                return
        self.waiting.append((step, mean, error))
        if len(self.waiting) > self.baseline:
            _, joining, its_error = self.waiting.pop(0)
            if not (self.rose or self.fell):  # a change found is not absorbed into the level it is measured against
                self._grow(joining, its_error)

    @property
    def settled(self) -> bool:
        return self.level is not None

    @property
    def rose(self) -> bool:
        return self.up >= self.threshold

    @property
    def fell(self) -> bool:
        return self.down >= self.threshold

    def shift(self) -> float:
        """The latest value's distance from the baseline, in noise units (0 before it settles)."""
        if self.level is None or self.last is None:
            return 0.0
        return (self.last - self.level) / self.noise

    def state(self) -> dict:
        return {k: getattr(self, k) for k in ("baseline", "threshold", "floor", "scale", "recent", "level", "noise", "since",
                                               "up", "down", "up_from", "down_from", "last", "sums", "waiting")}

    @classmethod
    def restore(cls, state: dict) -> Change:
        change = cls(**state)
        change.recent = [tuple(r) for r in change.recent]  # type: ignore[misc]
        change.waiting = [tuple(w) for w in change.waiting]  # type: ignore[misc]
        return change

    def _settle(self, step: float, mean: float, error: float) -> None:
        self.recent = [*self.recent[-(self.baseline - 1):], (step, mean, error)]
        if len(self.recent) < self.baseline:
            return
        means = [m for _, m, _ in self.recent]
        errors = [e for _, _, e in self.recent]
        self.sums = [0.0, 0.0, 0.0, 0.0]
        for m, e in zip(means, errors, strict=True):
            self._add_to_sums(m, e)
        level, scatter, sampling = self._baseline()
        half = len(means) // 2
        halves = abs(math.fsum(means[:half]) / half - math.fsum(means[half:]) / (len(means) - half))
        if abs(trend(means, errors).t) >= SETTLED_T or halves > SETTLED_T * max(sampling, self._floor) / math.sqrt(half):
            self.sums = []
            return  # still moving (a reward being learned): no baseline yet
        self.level, self.noise, self.since = level, self._noise(scatter, sampling), step
        self.recent = []  # refilled over the probation that follows

    def _unsettle(self) -> None:
        self.level, self.up, self.down, self.up_from, self.down_from, self.sums = None, 0.0, 0.0, None, None, []
        self.waiting = []

    def _grow(self, mean: float, error: float) -> None:
        """Add a settled step, ``baseline`` steps old, to the baseline."""
        self._add_to_sums(mean, error)
        level, scatter, sampling = self._baseline()
        self.level, self.noise = level, self._noise(scatter, sampling)

    def _noise(self, scatter: float, sampling: float) -> float:
        """The baseline's noise: its step-to-step scatter, never less than its sampling error or the floor."""
        return max(scatter, sampling, self._floor, 1e-9)

    @property
    def _floor(self) -> float:
        """The least noise, in the range the series' values span (a series that spanned nothing yet: over 1)."""
        return self.floor * (self.scale or 1.0)

    def _add_to_sums(self, mean: float, error: float) -> None:
        n, level, squares, errors = self.sums
        n += 1
        moved = mean - level
        level += moved / n
        self.sums = [n, level, squares + moved * (mean - level), errors + error * error]

    def _baseline(self) -> tuple[float, float, float]:
        """The baseline's level, its step-to-step scatter and its steps' mean sampling error."""
        n, level, squares, errors = self.sums
        return level, math.sqrt(squares / (n - 1)) if n > 1 else 0.0, math.sqrt(errors / n)


def _run(total: float, increment: float, began: float | None, step: float) -> tuple[float, float | None]:
    """One CUSUM side: the new sum and the step its current run began (None when it is back at 0)."""
    total = max(0.0, total + increment)
    if total == 0.0:
        return 0.0, None
    return total, began if began is not None else step
