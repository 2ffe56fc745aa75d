"""A final statement that denies the answer read from it: ``It cannot be $12$.``, ``x is not 12``, ``答案不是12``.

The last sentence of a completion that only denies a value states no answer, whatever a reader picked from the
text (the value itself, or the same value earlier in the work): such an answer is never the one stated. The
negation words are the lexicon's (``rewardhub.rewards.text.lexicon.NEGATIONS``), in each of its languages.
"""

from __future__ import annotations

import functools
import re

from ..text import lexicon
from ..text.sentences import last_sentence

__all__ = ["negated_statement"]

_TAIL = 2000  # the last sentence is read in the text's last characters only
_VALUE = re.compile(r"\$[^$]{1,200}\$|\\\(.{1,200}?\\\)|[-−]?\d+(?:[.,]\d+)*(?:/\d+)?")
# Words between a negation and its value: "cannot be exactly $x = 12$", "is not equal to 12".
_FILLER = re.compile(r"(?:\s|\b(?:be|equal\s+to|equals?|exactly|simply|just|sein|ser|être|essere|равно|равен)\b|[:=])*$",
                     re.IGNORECASE)  # fmt: skip
_NAMED = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?\s*=\s*")  # "x = 12" names 12
_RELATION = re.compile(r"\\(?:neq?|not)(?![A-Za-z])|≠|!=")  # "$x \\neq 12$" denies its own value
_AFTER_PARTICLE = re.compile(r"\s*[가이은는]?\s*")  # Korean: 12가 아니다


@functools.cache
def _anywhere() -> re.Pattern[str]:
    """Any negation word or sign, wherever it stands (no word boundaries), in lowercased text: a sentence without
    one denies nothing. Literals searched as written (an ``IGNORECASE`` alternation costs several times more)."""
    words = (re.escape(word).replace("\\ ", "\\s+") for word in lexicon.entries("negations"))
    return re.compile("|".join((*words, _RELATION.pattern)))


@functools.cache
def _before() -> re.Pattern[str]:
    languages = tuple(language for language in lexicon.LANGUAGES if language not in ("ja", "ko"))
    return re.compile(lexicon.pattern("negations", languages) + "$", re.IGNORECASE)


@functools.cache
def _after() -> re.Pattern[str]:
    return re.compile(lexicon.pattern("negations", ("ja", "ko")), re.IGNORECASE)


def negated_statement(text: str, answer: str) -> str | None:
    """The last sentence of ``text`` when it denies ``answer`` (the answer read from ``text``) and states it
    nowhere without a negation, else None (also for an answer that is itself a negation, ``x \\neq 3``)."""
    if _RELATION.search(answer):
        return None  # "x \\neq 3" is read as the negation it is (the checker compares it with the gold)
    sentence = last_sentence(text, _TAIL)
    if not _anywhere().search(sentence.lower()):
        return None
    wanted = _plain(answer)
    denied = stated = False
    previous = 0
    for value in _VALUE.finditer(sentence):
        if _plain(value.group()) == wanted:
            if _denies(sentence, previous, value):
                denied = True
            else:
                stated = True
        previous = value.end()
    return sentence if denied and not stated else None


def _denies(sentence: str, previous: int, value: re.Match[str]) -> bool:
    gap = sentence[max(previous, value.start() - 80) : value.start()]
    gap = gap[: _FILLER.search(gap).start()]
    if _before().search(gap) or _RELATION.search(value.group()):
        return True
    rest = sentence[value.end() : value.end() + 24]
    return _after().match(rest, _AFTER_PARTICLE.match(rest).end()) is not None


def _plain(value: str) -> str:
    """A value as compared here: no dollars, delimiters, spaces or final stop, and the value of ``x = ...``."""
    value = (
        "".join(value.replace("\\(", "").replace("\\)", "").replace("$", "").split())
        .rstrip(".")
        .replace("−", "-")
    )
    part = _RELATION.split(value)[-1]  # "x \\neq 12" names 12
    return _NAMED.sub("", part.rsplit("=", 1)[-1])
