"""Find and normalise the final answer in a completion: ``\\boxed{}``, ``#### 42``, ``<answer>``, "the answer is".

The one answer extractor of the project, shared by the answer-checking families (exact_match, math,
majority_vote); each family picks its order of extractors and its length limit. Every function here
runs in linear time on any input (no backtracking regex, brace matching by counting) and never
raises on text: pathological completions give ``None``. Answers longer than ``max_chars`` are
rejected, since a 10k-character "answer" is a hedge or garbage, not an answer; ``max_chars=None``
returns them whatever their length, for callers that report the length themselves.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation
from typing import NamedTuple

from rewardhub import ConfigError

MAX_ANSWER_CHARS = 1000

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_BRACE = re.compile(r"[{}]")
_TOKEN = re.compile(r"[^\s$}]*")
_OPEN_TAG, _CLOSE_TAG = "<answer>", "</answer>"
_ANSWER_IS = re.compile(r"answer\s{0,5}(?:is\b:?|:)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
_DOLLAR = re.compile(r"\\.|\$", re.DOTALL)  # an escaped character (``\$`` delimits nothing) or a dollar
_NUMBER_TOKEN = re.compile(r"[+-]?\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?")


class Extraction(NamedTuple):
    """An extracted answer and the extractor that found it (``"boxed"``, ``"gsm8k"``...)."""

    answer: str
    how: str


def last_boxed(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """Content of the last closed ``\\boxed{...}`` (or ``\\fbox{}``, ``\\boxed 5``), or None.

    Braces are matched by counting. When the last box is unclosed (a truncated completion), earlier
    boxes are tried; each stretch of text is scanned at most once, so the whole call is linear.
    Empty boxes are skipped; an over-long last box gives None (no fall back to an earlier one).
    """
    end = len(text)  # no box starting before `end` can close after it (see below)
    found = {command: text.rfind(command) for command in _BOX_COMMANDS}
    while True:
        command, start = max(found.items(), key=lambda item: item[1])
        if start < 0:
            return None
        found[command] = text.rfind(command, 0, start)  # the other command's position stays valid
        command_end = start + len(command)
        i = command_end
        while i < end and text[i] in " \t":
            i += 1
        if i < end and text[i] == "{":
            close = _matching_brace(text, i, end)
            if close is None:
                # This box never closes before `end`, so any earlier box either closes before it
                # starts or encloses it and cannot close either: later scans may stop here.
                end = start
                continue
            answer = text[i + 1 : close].strip()
        elif command_end < i < end:  # "\boxed 5": the token after the space
            answer = _TOKEN.match(text, i, end).group()
        else:
            continue
        if answer:
            return _bounded(answer, max_chars)  # an over-long last box is a hedge: no earlier one


def _matching_brace(text: str, open_index: int, end: int) -> int | None:
    """Index of the ``}`` closing the ``{`` at ``open_index``, searching before ``end``."""
    depth = 0
    for match in _BRACE.finditer(text, open_index, end):
        depth += 1 if match.group() == "{" else -1
        if depth == 0:
            return match.start()
    return None


def answer_tag(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """Content of the last closed ``<answer>...</answer>`` block (the last box in it, if any), or None."""
    return _tagged(text, max_chars, to_end=False)


def open_answer_tag(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """Like :func:`answer_tag`, but a last ``<answer>`` left open (a truncated completion) runs to the end."""
    return _tagged(text, max_chars, to_end=True)


def _tagged(text: str, max_chars: int | None, *, to_end: bool) -> str | None:
    start = text.rfind(_OPEN_TAG)
    if start < 0:
        return None
    close = text.find(_CLOSE_TAG, start)
    if close < 0 and to_end:
        close = len(text)
    elif close < 0:  # the last tag is unclosed: the last closed block before it
        close = text.rfind(_CLOSE_TAG, 0, start)
        start = text.rfind(_OPEN_TAG, 0, close) if close >= 0 else -1
        if start < 0:
            return None
    content = text[start + len(_OPEN_TAG) : close]
    boxed = last_boxed(content, max_chars)
    return boxed if boxed is not None else _bounded(content.strip(), max_chars)


def gsm8k(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The answer after the last ``####`` marker (GSM8K's format), up to the end of its line."""
    marker = text.rfind("####")
    if marker < 0:
        return None
    line_end = text.find("\n", marker)
    line = text[marker : line_end if line_end >= 0 else len(text)]
    return _bounded(line.lstrip("#").strip(), max_chars)


def answer_is(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """What follows the last "(final) answer is" / "answer:", up to the end of that sentence or line.

    When that stretch holds a math span (``$...$``, ``\\(...\\)``, ``\\[...\\]``), its content is the answer.
    """
    last = _last_match(_ANSWER_IS, text)
    if last is None:
        return None
    line_end = text.find("\n", last.end())
    rest = text[last.end() : line_end if line_end >= 0 else len(text)]
    sentence_end = _SENTENCE_END.search(rest)
    if sentence_end is not None:
        rest = rest[: sentence_end.start()]
    span = _math_span(rest)
    answer = span if span is not None else rest.strip(" \t:*").rstrip(".").strip(" \t*")
    return _bounded(answer, max_chars)


def _math_span(text: str) -> str | None:
    """Stripped content of the first non-empty ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]``, or None.

    One forward pass per kind of delimiter: no regex that retries from every opening.
    """
    spans: list[tuple[int, str]] = []
    dollars = (match.start() for match in _DOLLAR.finditer(text) if match.group() == "$")
    start, close = next(dollars, None), next(dollars, None)
    if start is not None and close == start + 1:  # "$$...$$"
        start, close = close, next(dollars, None)
    if start is not None and close is not None:
        spans.append((start, text[start + 1 : close]))
    for opening, closing in (("\\(", "\\)"), ("\\[", "\\]")):
        start = text.find(opening)
        close = text.find(closing, start + 2) if start >= 0 else -1
        if close >= 0:
            spans.append((start, text[start + 2 : close]))
    for _, content in sorted(spans):
        if content.strip():
            return content.strip()
    return None


def last_number(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The last number in the text (``1,234.5``, ``-3``, ``3/4``), or None; a fallback extractor."""
    last = _last_match(_NUMBER_TOKEN, text)
    return None if last is None else _bounded(last.group(), max_chars)


def whole(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The whole completion, stripped: for short-answer tasks with no answer markup."""
    return _bounded(text.strip(), max_chars)


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last non-overlapping match of ``pattern`` (one forward pass, constant memory)."""
    last = deque(pattern.finditer(text), maxlen=1)
    return last[0] if last else None


def _bounded(answer: str, max_chars: int | None) -> str | None:
    return answer if answer and (max_chars is None or len(answer) <= max_chars) else None


EXTRACTORS: dict[str, Callable[[str, int | None], str | None]] = {
    "boxed": last_boxed,
    "answer_tag": answer_tag,
    "open_answer_tag": open_answer_tag,
    "gsm8k": gsm8k,
    "answer_is": answer_is,
    "last_number": last_number,
    "whole": whole,
}
DEFAULT_EXTRACTORS: tuple[str, ...] = ("boxed", "answer_tag", "gsm8k", "answer_is")


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
) -> Extraction | None:
    """The first answer found by ``extractors`` (tried in order), with the extractor's name, or None.

    Families differ in policy only: exact_match's default order puts boxes first and rejects long
    answers here; math's (``mathematics.find_answer``) starts with the answer tag, ends with the last
    number and passes ``max_chars=None`` to report an over-long answer itself.
    """
    if not isinstance(text, str):
        return None
    for name in extractors:
        answer = EXTRACTORS[name](text, max_chars)
        if answer is not None:
            return Extraction(answer, name)
    return None


# ----- normalisation ---------------------------------------------------------------------------------

_LATEX_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_LATEX_NOISE = re.compile(r"\\left|\\right|\\[,;:! ]|\^\s*\{?\\circ\}?|\\displaystyle")
_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?")
_MAX_EXPONENT = 100
_EXACT = Context(prec=200)  # no rounding: canonical forms of distinct numbers must differ
_OPERATORS = frozenset("+-*/^=<>")  # kept by punctuation stripping: "-x" is not "x", "x-1" is not "x+1"
_PUNCTUATION = frozenset(string.punctuation) - _OPERATORS
# A hyphen inside a word ("well-known", "COVID-19") or between spaced words ("Paris - France"), not a minus sign.
_TEXT_DASH = re.compile(r"(?<=[^\W\d_])-(?=[^\W_])|(?<=[^\W_])-(?=[^\W\d_])|(?<=\s)-(?=\s)")
_OPERATOR_SPACING = re.compile(r"\s*([+\-*/^=<>])\s*")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Normalizer:
    """How answers are made comparable; every option on by default (see ``__call__``)."""

    case_sensitive: bool = False
    whitespace: bool = True
    punctuation: bool = True
    numbers: bool = True
    latex: bool = True

    def __call__(self, answer: str) -> str:
        """Strip LaTeX wrappers, canonicalise numbers (``1,000`` = ``1000.0`` = ``1e3`` -> ``1000``),
        else drop punctuation (not signs and operators), fold case and collapse whitespace."""
        text = unicodedata.normalize("NFKC", answer).replace("\u2212", "-").strip()  # U+2212 minus sign
        if self.latex:
            text = strip_latex(text)
        if self.numbers:
            number = canonical_number(text)
            if number is not None:
                return number
        if self.punctuation:
            text = _TEXT_DASH.sub(" ", text)
            text = "".join(
                " " if c in _PUNCTUATION or (c not in _OPERATORS and unicodedata.category(c).startswith("P")) else c
                for c in text
            )
            text = _OPERATOR_SPACING.sub(r"\1", text)
        if not self.case_sensitive:
            text = text.casefold()
        if self.whitespace:
            text = _WHITESPACE.sub(" ", text).strip()
        return text


def strip_latex(text: str) -> str:
    """Remove math delimiters (``$``, ``\\(``, ``\\[``), ``\\text{}``-style wrappers and spacing commands."""
    text = text.strip()
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if len(text) >= len(left) + len(right) and text.startswith(left) and text.endswith(right):
            text = text[len(left) : len(text) - len(right)].strip()
    text = _LATEX_WRAPPERS.sub(r"\1", text)
    text = _LATEX_NOISE.sub("", text)
    return text.replace("\\%", "%").replace("\\$", "$").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")


def canonical_number(text: str) -> str | None:
    """``text`` as a canonical decimal string when it is one number (currency ``$`` and ``%`` ignored).

    ``"1,000"``, ``"1000.0"``, ``"1e3"`` and ``"$1000"`` all give ``"1000"``; ``"0.50"`` gives ``"0.5"``.
    Texts over 120 characters and numbers with exponents beyond +-100 are left alone (None).
    """
    text = text.strip().removeprefix("$").removesuffix("%").strip()
    if not text or len(text) > 120 or _NUMBER.fullmatch(text) is None or not any(c.isdigit() for c in text):
        return None
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    if not value.is_finite() or abs(value.adjusted()) > _MAX_EXPONENT:
        return None
    value = value.normalize(_EXACT)
    if value == value.to_integral_value():
        return str(int(value))
    return format(value, "f")
