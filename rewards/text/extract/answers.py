"""What an extractor hands back (an :class:`Extraction`, an :class:`Unreadable` statement, values joined by
``OR``) and the small helpers every extractor shares (bracket depths, bounded answers, the last match).
"""

from __future__ import annotations

import re
from collections import deque
from typing import NamedTuple

from .. import lexicon

__all__ = ["HEDGE", "Extraction", "MAX_ANSWER_CHARS", "OR", "Unreadable", "alternatives", "bracket_depths"]

MAX_ANSWER_CHARS = 1000


class Extraction(NamedTuple):
    """An extracted answer and the extractor that found it (``"boxed"``, ``"gsm8k"``...).

    Several values offered as one answer (``5 or 6``, ``\\boxed{1} or \\boxed{2}``) come joined by ``OR``;
    :func:`alternatives` splits them again, and a verifier pays only when every one of them is right.
    """

    answer: str
    how: str


class Unreadable(NamedTuple):
    """A stated answer that cannot be read faithfully (a hedge such as ``5 or more``): no answer, and the
    reader must not fall back on an earlier one. ``reason`` says why, for the score's reason."""

    reason: str
    how: str = ""


OR = " \\text{ or } "  # how alternatives are joined in an extracted answer
# "or" in any language of the lexicon ("or", "oder", "или", "或", "か"); a one-letter "or" (Spanish and Italian "o",
# Spanish "u") only between two values set apart by spaces: "u = 5" names a variable.
HEDGE = "(?:(?<![\\\\])" + lexicon.pattern("hedges", single_letters=False) + "|(?<=[\\d)\\]}$]\\s)(?:" + "|".join(
    lexicon.single_letters("hedges")) + ")(?=\\s+[-+\\d$\\\\(\\[{]))"
_OR_WORD = re.compile(f"{HEDGE}|{lexicon.pattern('hedge_adverbs')}", re.IGNORECASE)
_OR_SEPARATOR = re.compile(
    rf"\s*(?:\\(?:text\w*|mbox|mathrm)\s*\{{\s*(?:and/)?or\s*\}}|{HEDGE}|\\(?:lor|vee)(?![A-Za-z]))\s*", re.IGNORECASE
)
_EITHER = re.compile(r"^\s*(?:\\(?:text\w*|mbox|mathrm)\s*\{\s*either\s*\}|either(?![A-Za-z]))\s*", re.IGNORECASE)


def alternatives(answer: str) -> list[str]:
    """The values an answer offers, split at each "or" outside brackets: ``5 \\text{ or } 6`` -> ``["5", "6"]``,
    ``either x = 1 or x = 2`` -> ``["x = 1", "x = 2"]``, ``\\{1 \\text{ or } 2\\}`` and ``7`` -> one value each.
    An alternative may be empty (``5 or``): the caller reads that as no value."""
    matches = list(_OR_SEPARATOR.finditer(answer))
    if not matches:
        return [answer]
    depths = bracket_depths(answer)
    pieces, start = [], 0
    for match in matches:
        if depths[match.start()] == 0 and depths[match.end() - 1] == 0:
            pieces.append(answer[start : match.start()])
            start = match.end()
    if not pieces:
        return [answer]
    pieces.append(answer[start:])
    pieces[0] = _EITHER.sub("", pieces[0])
    return [piece.strip() for piece in pieces]


def bracket_depths(text: str) -> list[int]:
    """The bracket depth (``{[(`` minus ``}])``) before each character of ``text``."""
    depth, depths = 0, []
    for char in text:
        depths.append(depth)
        depth += 1 if char in "{[(" else -1 if char in "}])" else 0
    return depths


def _squeeze(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _last_match(pattern: re.Pattern[str], text: str, start: int = 0) -> re.Match[str] | None:
    """The last non-overlapping match of ``pattern`` in ``text[start:]`` (one forward pass, constant memory)."""
    last = deque(pattern.finditer(text, start), maxlen=1)
    return last[0] if last else None


_ASCII_DIGIT = re.compile("[0-9]")


def has_digit(text: str) -> bool:
    """Whether a character of ``text`` is a digit (``str.isdigit``: superscripts count), told in C for ASCII text."""
    if text.isascii():
        return _ASCII_DIGIT.search(text) is not None
    return any(char.isdigit() for char in text)


def _bounded(answer: str, max_chars: int | None) -> str | None:
    return answer if answer and (max_chars is None or len(answer) <= max_chars) else None
