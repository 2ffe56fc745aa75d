"""Change detection on one monitored series against the run's own baseline: a two-sided CUSUM.

A :class:`Change` tracker takes a step mean and its standard error at each step. Its baseline is the first
stretch of ``baseline`` steps over which the series holds still (no significant trend): early training moves
a reward while it is learned (a format picked up in the first steps), and a level taken mid-move would be no
baseline: the stretch must show no trend and its two halves must agree within their sampling error, and a
change that reaches half the threshold within ``baseline`` steps of it sends the tracker back to settling. Once settled, each step's deviation from the baseline is read in units of the baseline's noise (the
step-to-step scatter, never less than the step means' sampling error) and accumulated (Page's CUSUM with
allowance ``ALLOWANCE``): a small shift that persists adds up, so a hack ramping in over hundreds of steps is
found about as soon as its cumulated effect stands out, and one that jumps is found at once. The state is
plain numbers (:meth:`Change.state` / :meth:`Change.restore`) so it survives a restart.
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
    """Two-sided CUSUM of a series against its settled baseline (``level``, ``noise``)."""

    baseline: int  # steps the baseline is taken over
    threshold: float  # the sum (in noise units) at which the series has changed (``monitor: {threshold: ...}``)
    floor: float = 0.0  # the least noise the baseline may have (a rate at 0 has no scatter to measure)
    recent: list[tuple[float, float, float]] = field(default_factory=list)  # (step, mean, error) until settled
    level: float | None = None
    noise: float = 0.0
    since: float | None = None  # the step the baseline ends at
    up: float = 0.0
    down: float = 0.0
    up_from: float | None = None  # the step the current upward run began
    down_from: float | None = None
    last: float | None = None

    def add(self, step: float, mean: float, error: float) -> None:
        self.last = mean
        if self.level is None:
            self._settle(step, mean, error)
            return
        z = (mean - self.level) / self.noise
        self.up, self.up_from = _run(self.up, z - ALLOWANCE, self.up_from, step)
        self.down, self.down_from = _run(self.down, -z - ALLOWANCE, self.down_from, step)
        if len(self.recent) < self.baseline:  # on probation: a move that goes on right after the baseline
            self.recent.append((step, mean, error))  # is the one it was taken in (a reward still being learned)
            if max(self.up, self.down) >= self.threshold / 2:
                self.level, self.up, self.down, self.up_from, self.down_from = None, 0.0, 0.0, None, None

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
        return {k: getattr(self, k) for k in ("baseline", "threshold", "floor", "recent", "level", "noise", "since", "up",
                                               "down", "up_from", "down_from", "last")}

    @classmethod
    def restore(cls, state: dict) -> Change:
        change = cls(**state)
        change.recent = [tuple(r) for r in change.recent]  # type: ignore[misc]
        return change

    def _settle(self, step: float, mean: float, error: float) -> None:
        self.recent = [*self.recent[-(self.baseline - 1):], (step, mean, error)]
        if len(self.recent) < self.baseline:
            return
        means = [m for _, m, _ in self.recent]
        errors = [e for _, _, e in self.recent]
        level = math.fsum(means) / len(means)
        scatter = math.sqrt(math.fsum((m - level) ** 2 for m in means) / (len(means) - 1))
        sampling = math.sqrt(math.fsum(e * e for e in errors) / len(errors))
        half = len(means) // 2
        halves = abs(math.fsum(means[:half]) / half - math.fsum(means[half:]) / (len(means) - half))
        if abs(trend(means, errors).t) >= SETTLED_T or halves > SETTLED_T * max(sampling, self.floor) / math.sqrt(half):
            return  # still moving (a reward being learned): no baseline yet
        self.level, self.noise, self.since = level, max(scatter, sampling, self.floor, 1e-9), step
        self.recent = []  # refilled over the probation that follows


def _run(total: float, increment: float, began: float | None, step: float) -> tuple[float, float | None]:
    """One CUSUM side: the new sum and the step its current run began (None when it is back at 0)."""
    total = max(0.0, total + increment)
    if total == 0.0:
        return 0.0, None
    return total, began if began is not None else step
