"""Numbers written in English words, read as numbers: "fifty-two" is 52, "seventy six" 76, "one hundred and
five" 105, "minus three" -3, "two thirds" 2/3.

A final answer in words has no digits, so a reader that looks only for digits falls back on an earlier
number (an intermediate total) and pays for it. Here a text is a number only when it is nothing but a
well-formed number in words (scales in decreasing order, no word repeated out of place): "one of them",
"two or three", "five hundred five hundred" are not numbers. Linear in the number of words.
"""

from __future__ import annotations

import re
from fractions import Fraction

_UNITS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    " seventeen eighteen nineteen".split())}  # fmt: skip
_TENS = {word: 10 * (i + 2) for i, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
# Denominators of "two thirds", "one half", "three quarters" (singular and plural).
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
                 "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8,
                 "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10}  # fmt: skip
_SIGNS = {"minus": -1, "negative": -1, "positive": 1, "plus": 1}
_SEPARATOR = re.compile(r"[\s\-\u2010-\u2015]+")  # spaces and hyphens ("fifty-two", "fifty two")
NUMBER_WORDS = frozenset(_UNITS) | frozenset(_TENS) | frozenset(_SCALES) | {"hundred"}
MAX_WORDS = 12  # "nine hundred ninety-nine thousand nine hundred ninety-nine" is 10


def words_to_number(text: str) -> int | Fraction | None:
    """The number ``text`` spells out in words, or None when it is anything else (case and hyphens aside).

    ``"fifty-two"`` -> 52, ``"One hundred and five"`` -> 105, ``"a thousand"`` -> 1000, ``"minus seven"`` -> -7,
    ``"two thirds"`` -> 2/3, ``"one half"`` -> 1/2; ``"one of them"``, ``"twenty twenty"``, ``"and"`` -> None.
    """
    words = [word for word in _SEPARATOR.split(text.strip().lower()) if word]
    if not words or len(words) > MAX_WORDS:
        return None
    sign = 1
    if words[0] in _SIGNS and len(words) > 1:
        sign = _SIGNS[words.pop(0)]
    if len(words) == 2 and words[1] in _DENOMINATORS:  # "two thirds", "one half"
        numerator = _integer(words[:1])
        if numerator is None or numerator == 0 or (numerator == 1) == words[1].endswith("s"):
            return None
        return sign * Fraction(numerator, _DENOMINATORS[words[1]])
    value = _integer(words)
    return None if value is None else sign * value


def _integer(words: list[str]) -> int | None:
    """An integer in words: groups of (hundreds, tens, units) each followed by a smaller scale than the last."""
    if words and words[0] == "a" and len(words) > 1 and words[1] in ("hundred", *_SCALES):
        words = ["one", *words[1:]]  # "a hundred", "a thousand"
    total, group, last_scale = 0, None, None
    i = 0
    while i < len(words):
        group_value, i = _group(words, i)
        if group_value is None:
            return None
        if i < len(words) and words[i] in _SCALES:
            scale = _SCALES[words[i]]
            if last_scale is not None and scale >= last_scale:
                return None
            total += group_value * scale
            last_scale = scale
            i += 1
            if i < len(words) and words[i] == "and":
                i += 1
            group = None
            continue
        if i != len(words):
            return None
        group = group_value
    if group is None and last_scale is None:
        return None
    return total + (group or 0)


def _group(words: list[str], i: int) -> tuple[int | None, int]:
    """A number below 1000 starting at ``words[i]`` ("nine hundred and ninety-nine"), and where it ends."""
    value = None
    if i < len(words) and words[i] in _UNITS and i + 1 < len(words) and words[i + 1] == "hundred":
        if words[i] == "zero":
            return None, i
        value = _UNITS[words[i]] * 100
        i += 2
        if i < len(words) and words[i] == "and":
            i += 1
            if i == len(words):
                return None, i  # "one hundred and"
    if i < len(words) and words[i] in _TENS:
        value = (value or 0) + _TENS[words[i]]
        i += 1
        if i < len(words) and words[i] in _UNITS and 0 < _UNITS[words[i]] < 10:
            value += _UNITS[words[i]]
            i += 1
    elif i < len(words) and words[i] in _UNITS:
        if value is not None and words[i] == "zero":
            return None, i
        value = (value or 0) + _UNITS[words[i]]
        i += 1
    return value, i
