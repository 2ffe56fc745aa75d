"""What pairs and selections share: ranking scores, requirements such as ``format>=1``, counts of what was left out."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from .._set.config import TOTAL
from ..completions import is_conversational
from ..errors import RewardhubError

__all__ = [
    "Candidate",
    "MAX_PROBLEMS",
    "Options",
    "PAIR_DROPS",
    "PreferenceError",
    "Requirement",
    "SELECT_DROPS",
    "Stats",
    "as_messages",
    "at_least",
    "close",
    "finite_number",
    "has_score",
    "is_int",
    "is_number",
    "ranked_candidates",
    "score_of",
]

MAX_PROBLEMS = 5


PAIR_DROPS = {
    "invalid_row": "rows unreadable or without 'prompt'/'completion'",
    "no_score": "rows without a ranking score (the reward abstained)",
    "too_few": "prompts with fewer than two scored completions",
    "no_signal": "prompts whose completions all scored the same",
    "gate": "prompts where no completion that meets --require scores above another",
    "tie": "pairs of equal score (--mode all)",
    "below_margin": "pairs with a margin below --min-margin",
    "max_pairs": "pairs beyond --max-pairs for their prompt",
}


SELECT_DROPS = {
    "invalid_row": PAIR_DROPS["invalid_row"],
    "no_score": PAIR_DROPS["no_score"],
    "gate": "completions that fail --require",
    "below_threshold": "completions scoring below --min-score",
    "not_top_k": "completions outranked by --top-k better ones of their prompt",
}


# Scores that differ by less than this (relative, or absolute near zero) count as equal, so that
# 0.7 - 0.2 meets a margin of 0.5 and 0.1 + 0.2 ties with 0.3.
_REL_TOL, _ABS_TOL = 1e-9, 1e-12


class PreferenceError(RewardhubError, ValueError):
    """Options or rows that cannot make pairs or selections: a bad --require, a missing score."""


# Comparisons with the same tolerance as margins: ``acc>=0.3`` holds for 0.1 + 0.2.
_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": lambda value, bound: at_least(value, bound),
    ">": lambda value, bound: not at_least(bound, value),
    "<=": lambda value, bound: at_least(bound, value),
    "<": lambda value, bound: not at_least(value, bound),
    "==": lambda value, bound: close(value, bound),
    "!=": lambda value, bound: not close(value, bound),
}


_REQUIREMENT = re.compile(r"^\s*([^<>=!\s]+)\s*(>=|<=|==|!=|>|<)\s*([^\s]+)\s*$")


@dataclass(frozen=True)
class Requirement:
    """A completion qualifies only when one score compares to a threshold, e.g. ``format>=1``.

    ``score`` is a reward alias of the row's ``rewards``, or ``reward`` for the weighted total.
    A missing or abstaining (``None``) score never qualifies.
    """

    score: str
    op: str
    threshold: float

    @classmethod
    def parse(cls, text: str | Requirement) -> Requirement:
        """``ALIAS OP NUMBER`` with OP one of ``>= > <= < == !=`` (``format>=1``, ``math == 1``)."""
        if isinstance(text, Requirement):
            return text
        match = _REQUIREMENT.match(str(text))
        threshold = _float(match.group(3)) if match else None
        if match is None or threshold is None:
            raise PreferenceError(
                f"cannot read requirement {text!r}: write ALIAS OP NUMBER, e.g. 'format>=1' or 'math==1' "
                f"(OP is one of {' '.join(_OPERATORS)}; ALIAS is a reward alias or 'reward' for the total)"
            )
        return cls(match.group(1), match.group(2), threshold)

    def met_by(self, row: Mapping[str, Any]) -> bool:
        value = finite_number(score_of(row, self.score))
        return value is not None and _OPERATORS[self.op](value, self.threshold)


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Options:
    """What pairs and selections share: the ranking score, requirements and columns carried over."""

    kind: ClassVar[str]
    by: str = TOTAL
    require: tuple[Requirement, ...] = ()
    keep: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.by, str) or not self.by:
            raise PreferenceError("'by' must name a reward alias, or 'reward' for the weighted total")
        require = (self.require,) if isinstance(self.require, str | Requirement) else self.require
        object.__setattr__(self, "require", tuple(Requirement.parse(r) for r in require))
        keep = (self.keep,) if isinstance(self.keep, str) else tuple(self.keep)
        clash = [c for c in keep if c in self._own_columns()]
        if clash:
            raise PreferenceError(f"cannot keep column(s) {', '.join(map(repr, clash))}: the output already has them")
        object.__setattr__(self, "keep", keep)

    def _own_columns(self) -> tuple[str, ...]:
        return ()

    @property
    def score_names(self) -> set[str]:
        """Every score the options read: the ranking one and those of the requirements."""
        return {self.by, *(r.score for r in self.require)}

    def meets(self, row: Mapping[str, Any]) -> bool:
        return all(r.met_by(row) for r in self.require)

    def build(self, rows: list[Mapping[str, Any]], dropped: Counter) -> list[dict[str, Any]]:
        """The output rows for one prompt's completions, counting what is left out in ``dropped``."""
        raise NotImplementedError


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class Stats:
    """What a run did: rows read, prompts seen, rows written, and everything left out by reason."""

    kind: str = "pairs"
    rows: int = 0
    prompts: int = 0
    prompts_written: int = 0
    written: int = 0
    dropped: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def bad_row(self, where: str, problem: str) -> None:
        self.dropped["invalid_row"] += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{where}: {problem}")

    def summary(self) -> str:
        """Human-readable counts, one drop reason a line (what the CLI prints on stderr)."""
        noun = "pairs" if self.kind == "pairs" else "completions"
        lines = [f"read {self.rows} rows of {self.prompts} prompts; "
                 f"wrote {self.written} {noun} from {self.prompts_written} prompts"]
        reasons = PAIR_DROPS if self.kind == "pairs" else SELECT_DROPS
        for code in reasons:
            if self.dropped[code]:
                lines.append(f"  dropped {self.dropped[code]}: {reasons[code]} [{code}]")
        lines.extend(f"  {problem}" for problem in self.problems)
        hidden = self.dropped["invalid_row"] - len(self.problems)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more invalid rows")
        return "\n".join(lines)


class Candidate(NamedTuple):
    """A scored completion of one prompt: its position in the group, row and ranking score."""

    index: int
    row: Mapping[str, Any]
    score: float


def ranked_candidates(rows: list[Mapping[str, Any]], by: str, dropped: Counter) -> list[Candidate]:
    candidates = []
    for index, row in enumerate(rows):
        score = finite_number(score_of(row, by))
        if score is None:
            dropped["no_score"] += 1
        else:
            candidates.append(Candidate(index, row, score))
    return candidates


def as_messages(value: Any, role: str) -> list[dict[str, Any]]:
    """Chat messages as they are; a plain string as one message of ``role``."""
    return list(value) if is_conversational(value) else [{"role": role, "content": value}]


def score_of(row: Mapping[str, Any], name: str) -> Any:
    """The row's score called ``name``: a reward alias in ``rewards``, or ``reward`` for the total."""
    if name == TOTAL:
        return row.get(TOTAL)
    rewards = row.get("rewards")
    return rewards.get(name) if isinstance(rewards, Mapping) else None


def has_score(row: Mapping[str, Any], name: str) -> bool:
    rewards = row.get("rewards")
    return TOTAL in row if name == TOTAL else isinstance(rewards, Mapping) and name in rewards


def finite_number(value: Any) -> float | None:
    """A finite float, or None for missing, abstained (None) and NaN scores."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)


def at_least(value: float, bound: float) -> bool:
    return value > bound or close(value, bound)
