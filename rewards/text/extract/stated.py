"""Where each final statement of a completion stands: the last box, the last "the answer is" and the last closed
``<answer>`` tag, with what each states, so that a caller can tell two final answers that disagree.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

from .answers import MAX_ANSWER_CHARS, Unreadable
from .statements import final_places

__all__ = ["Place", "Stated", "final_statements", "statement_places"]


class Stated(NamedTuple):
    """One statement of an answer: where it starts and ends in the text, and the answer it states."""

    start: int
    end: int
    answer: str


class Place(NamedTuple):
    """Where one statement of an answer stands in the text, and the reading of what it states (read when asked)."""

    start: int
    end: int
    read: Callable[[], str | Unreadable | None]


def statement_places(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> list[Place]:
    """Where the last box, the last "the answer is" (to the end of its sentence, or a correction inside it) and
    the last closed answer tag of ``text`` stand, in text order (see :func:`final_places`). What each states is
    read only when asked: a caller looking for one statement reads no other."""
    return [Place(start, end, functools.partial(reader, text, max_chars)) for start, end, reader in final_places(text)]


def final_statements(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> list[Stated]:
    """The last box, the last "the answer is" and the last closed answer tag of ``text`` (see
    :func:`statement_places`) that state a readable answer, in text order (at most one of each kind)."""
    places = statement_places(text, max_chars)
    return [Stated(place.start, place.end, answer) for place in places if isinstance(answer := place.read(), str)]
