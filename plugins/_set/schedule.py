"""Weight schedules: a config entry's weight as a function of the trainer's step.

    weight: {schedule: cosine, start: 1.0, end: 0.0, steps: 1000, warmup: 50}

During ``warmup`` steps the weight rises linearly from 0 to ``start`` (the warmup of transformers'
learning-rate schedules); over the next ``steps`` steps it moves from ``start`` to ``end`` along
the schedule's shape (``linear``, ``cosine``, or ``step``: ``start`` until the end of those steps,
then ``end``); afterwards it stays at ``end``. ``constant`` holds ``start`` after the warmup.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ConfigError, key_hint, key_names, number_text_hint, shown, unknown_keys_message

__all__ = ["SCHEDULES", "SCHEDULE_KEYS", "Schedule", "parse_schedule"]

SCHEDULES = ("linear", "cosine", "step", "constant")
SCHEDULE_KEYS = ("schedule", "start", "end", "steps", "warmup")


@dataclass(frozen=True)
class Schedule:
    """A weight that follows the trainer's step (see the module docstring for the shapes)."""

    kind: str
    start: float
    end: float
    steps: int = 0
    warmup: int = 0

    def at(self, step: float) -> float:
        """The weight at ``step`` (a step before 0 counts as 0)."""
        step = max(float(step), 0.0)
        if step < self.warmup:
            return self.start * step / self.warmup
        if self.kind == "constant":
            return self.start
        done = step - self.warmup
        if self.kind == "step":
            return self.start if done < self.steps else self.end
        progress = min(done / self.steps, 1.0)
        if self.kind == "linear":
            return self.start + (self.end - self.start) * progress
        return self.end + (self.start - self.end) * (1.0 + math.cos(math.pi * progress)) / 2.0

    def describe(self) -> str:
        """One line for messages and docs: ``cosine 1 -> 0 over 1000 steps after 50 warmup``."""
        warmup = f" after {self.warmup} warmup steps" if self.warmup else ""
        if self.kind == "constant":
            return f"constant {self.start:g}{warmup}"
        return f"{self.kind} {self.start:g} -> {self.end:g} over {self.steps} steps{warmup}"


def parse_schedule(where: str, raw: dict) -> Schedule:
    """A :class:`Schedule` from an entry's ``weight`` mapping; a ``ConfigError`` naming ``where`` and the key."""
    unknown = [k for k in raw if k not in SCHEDULE_KEYS]
    if unknown:
        raise ConfigError(unknown_keys_message(f"{where}: weight", unknown, SCHEDULE_KEYS))
    kind = raw.get("schedule")
    if kind not in SCHEDULES:
        hint = key_hint(kind, SCHEDULES) if kind is not None else ""
        what = "is missing" if kind is None else f"is {shown(kind)}"
        raise ConfigError(f"{where}: weight 'schedule' {what}{hint}; a scheduled weight names one of "
                          f"{', '.join(SCHEDULES)}, e.g. {{schedule: linear, start: 1.0, end: 0.0, steps: 1000}}")
    start = _number(where, raw, "start")
    if kind == "constant":
        if "end" in raw or "steps" in raw:
            extra = [k for k in ("end", "steps") if k in raw]
            raise ConfigError(f"{where}: weight schedule 'constant' holds 'start' and takes no {key_names(extra)}; "
                              f"use 'linear', 'cosine' or 'step' for a weight that changes")
        return Schedule(kind, start, start, 0, _count(where, raw, "warmup", minimum=0, default=0))
    end = _number(where, raw, "end")
    steps = _count(where, raw, "steps", minimum=1)
    return Schedule(kind, start, end, steps, _count(where, raw, "warmup", minimum=0, default=0))


def _number(where: str, raw: dict, key: str) -> float:
    if key not in raw:
        raise ConfigError(f"{where}: weight schedule {raw.get('schedule')!r} needs {key!r} (a number)")
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: weight {key!r} must be a finite number, got {shown(value)}{number_text_hint(value)}")
    return float(value)


def _count(where: str, raw: dict, key: str, *, minimum: int, default: int | None = None) -> int:
    if key not in raw:
        if default is None:
            raise ConfigError(f"{where}: weight schedule {raw.get('schedule')!r} needs {key!r} "
                              f"(the number of trainer steps it takes)")
        return default
    value = raw[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        bound = "a positive" if minimum > 0 else "a non-negative"
        raise ConfigError(f"{where}: weight {key!r} must be {bound} whole number of steps, "
                          f"got {shown(value)}{number_text_hint(value)}")
    return value

