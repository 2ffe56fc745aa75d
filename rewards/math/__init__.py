"""The ``math`` family: normalise and read plain literals (``literals``), decide equality (``checker``),
score completions against a gold answer (``reward``)."""

from .checker import Check, MathChecker
from .literals import literal_verdict, normalize, parse_literal
from .reward import MATH_EXTRACTORS, MathReward, find_answer, gold_answer

__all__ = [
    "MATH_EXTRACTORS",
    "Check",
    "MathChecker",
    "MathReward",
    "find_answer",
    "gold_answer",
    "literal_verdict",
    "normalize",
    "parse_literal",
]
