"""Per-reward means over training steps, read from the ``log_history`` of a TRL ``trainer_state.json``."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .stats import ReportError

__all__ = ["Series", "TrainingCurves", "load_trainer_state"]

Series = list[tuple[float, float]]


@dataclass
class TrainingCurves:
    """Training-time series: each reward's mean, the total reward, TRL's fraction of flat groups, and the
    share of each batch a rescued entry's model verifier turned from 0 into 1 (``<alias>/rescued_share``)."""

    rewards: dict[str, Series] = field(default_factory=dict)
    rescued: dict[str, Series] = field(default_factory=dict)
    total: Series = field(default_factory=list)
    flat_groups: Series = field(default_factory=list)
    source: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.rewards or self.total or self.flat_groups or self.rescued)


def load_trainer_state(state: str | Path | Mapping[str, Any]) -> TrainingCurves:
    """Curves from a ``trainer_state.json`` path (or its parsed content).

    TRL logs ``rewards/<name>/mean``, ``reward`` and ``frac_reward_zero_std`` per logging step; a
    rewardhub composite reward logs each component as ``<alias>/mean`` next to ``<alias>/abstained``
    (that pair tells it from TRL's own metrics). Evaluation entries (``eval_`` keys) and non-finite
    values are left out.
    """
    source = None
    if not isinstance(state, Mapping):
        source = str(state)
        try:
            state = json.loads(Path(state).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ReportError(f"trainer state not found: {source}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ReportError(f"cannot read trainer state {source}: {exc}") from None
    history = state.get("log_history") if isinstance(state, Mapping) else None
    if not isinstance(history, list):
        where = source or "the trainer state"
        raise ReportError(f"{where} has no `log_history` list: pass the trainer_state.json of a TRL run")
    curves = TrainingCurves(source=source)
    for index, entry in enumerate(history):
        if not isinstance(entry, Mapping):
            continue
        step = entry.get("step", index)
        step = float(step) if isinstance(step, int | float) else float(index)
        for key, value in entry.items():
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                continue
            if key.startswith("rewards/") and key.endswith("/mean"):
                curves.rewards.setdefault(key[len("rewards/") : -len("/mean")], []).append((step, float(value)))
            elif key.endswith("/mean") and f"{key[: -len('/mean')]}/abstained" in entry:
                curves.rewards.setdefault(key[: -len("/mean")], []).append((step, float(value)))
            elif key.endswith("/rescued_share"):
                curves.rescued.setdefault(key[: -len("/rescued_share")], []).append((step, float(value)))
            elif key == "reward":
                curves.total.append((step, float(value)))
            elif key == "frac_reward_zero_std":
                curves.flat_groups.append((step, float(value)))
    return curves
