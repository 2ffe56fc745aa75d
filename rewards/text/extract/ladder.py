"""The extractors by name and the ladder that tries them in order (each family picks its order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rewardhub import ConfigError

from ..canonical import canonical
from .answers import MAX_ANSWER_CHARS, Extraction, Unreadable
from .boxes import boxed
from .numbers import bare, last_math, last_number, whole
from .statements import answer_is, answer_tag, final_statement, gsm8k, open_answer_tag

__all__ = ["DEFAULT_EXTRACTORS", "EXTRACTORS", "check_extractors", "extract_answer"]

EXTRACTORS: dict[str, Callable[[str, int | None], str | Unreadable | None]] = {
    "boxed": boxed,
    "final_statement": final_statement,
    "answer_tag": answer_tag,
    "open_answer_tag": open_answer_tag,
    "gsm8k": gsm8k,
    "answer_is": answer_is,
    "last_math": last_math,
    "bare": bare,
    "last_number": last_number,
    "whole": whole,
}
DEFAULT_EXTRACTORS: tuple[str, ...] = ("final_statement", "gsm8k")


def check_extractors(names: Sequence[str] | None) -> tuple[str, ...]:
    """Validate a list of extractor names (``None`` -> the default order); ConfigError names the bad one."""
    if names is None:
        return DEFAULT_EXTRACTORS
    if isinstance(names, str) or not isinstance(names, Sequence) or not names:
        raise ConfigError(f"extractors must be a non-empty list of names from {', '.join(EXTRACTORS)}; got {names!r}")
    for name in names:
        if name not in EXTRACTORS:
            raise ConfigError(f"unknown extractor {name!r}; known extractors: {', '.join(EXTRACTORS)}")
    return tuple(names)


def extract_answer(
    text: str, extractors: Sequence[str] = DEFAULT_EXTRACTORS, max_chars: int | None = MAX_ANSWER_CHARS
) -> Extraction | Unreadable | None:
    """The first answer found by ``extractors`` (tried in order), with the extractor's name, or None;
    :class:`Unreadable` when the first extractor that finds a stated answer cannot read it faithfully.

    Families differ in policy only: exact_match's default takes the last statement (the latest of the last
    box, the last "answer is" and the last answer tag), then ``####``, and rejects long answers here;
    math's (``math.find_answer``) starts with the answer tag even left open, ends with the last math span,
    a bare answer and the last number, and passes ``max_chars=None`` to report an over-long answer itself.
    """
    if not isinstance(text, str):
        return None
    text = canonical(text)
    for name in extractors:
        answer = EXTRACTORS[name](text, max_chars)
        if isinstance(answer, Unreadable):
            return Unreadable(answer.reason, name)  # a stated answer the reader refuses: no falling back
        if answer is not None:
            return Extraction(answer, name)
    return None
