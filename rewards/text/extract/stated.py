"""Where each final statement of a completion stands: the last box, the last "the answer is" and the last closed
``<answer>`` tag, with what each states, so that a caller can tell two final answers that disagree.
"""

from __future__ import annotations

from typing import NamedTuple

from .answers import MAX_ANSWER_CHARS
from .boxes import _boxes, boxed
from .statements import _CLOSE_TAG, _OPEN_TAG, _last_statement, answer_is, answer_tag, statement_end

__all__ = ["Stated", "final_statements"]


class Stated(NamedTuple):
    """One statement of an answer: where it starts and ends in the text, and the answer it states."""

    start: int
    end: int
    answer: str


def final_statements(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> list[Stated]:
    """The last box, the last "the answer is" (to the end of its sentence, or a correction inside it) and the last closed answer tag of
    ``text`` that state a readable answer, in text order (at most one of each kind)."""
    found = []
    box = next(_boxes(text), None)
    if box is not None:
        found.append((box[0], box[1], boxed(text, max_chars)))
    statement = _last_statement(text)
    if statement is not None:
        found.append((statement.start(), statement_end(text, statement.end()), answer_is(text, max_chars)))
    tag = text.rfind(_OPEN_TAG)
    close = text.find(_CLOSE_TAG, tag) if tag >= 0 else -1
    if tag >= 0 and close >= 0:
        found.append((tag, close + len(_CLOSE_TAG), answer_tag(text, max_chars)))
    return sorted(Stated(start, end, answer) for start, end, answer in found if isinstance(answer, str))
