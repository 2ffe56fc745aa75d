"""Math spans: ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``, told apart from currency signs, in one pass.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["ends_inside_math", "math_spans"]

# Delimiters of math spans; a double backslash (a line break) and an escaped dollar delimit nothing.
_MATH_DELIMITER = re.compile(r"\\\\|\\[()\[\]$]|\$\$|\$")
_CLOSING = {"\\)": "\\(", "\\]": "\\["}
# Inside a span: wrapped text is not prose; a lowercase word of 3+ letters (or a capitalised one of 4+)
# that is not a command or a function name is prose, so the span was a pair of currency signs.
_TEXT_GROUP = re.compile(r"\\(?:text\w*|mbox|mathrm|operatorname|begin|end)\s*\{[^{}]*\}")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])(?:[a-z]{3,}|[A-Z][a-z]{3,})(?![A-Za-z])")
_FUNCTION_WORDS = frozenset(
    "sin cos tan cot sec csc sinh cosh tanh arcsin arccos arctan log exp lim max min mod gcd lcm det deg arg sqrt abs"
    " rational".split()
)
_LOWER_RUN = re.compile("[a-z]{3}")  # in every prose word
_ONE_TOKEN = re.compile(r"[A-Za-z0-9_']+")
_WORD_START = re.compile(r"\s*[A-Za-z\\({\[]")  # "$not odd$" is math: currency signs come before amounts
_DANGLING = re.compile(r"(?:[-+*/=<>^_]|\\(?:times|cdot|div|pm|mp|leq?|geq?|neq|approx))\s*$")


class _SpanIndex:
    """Whether a position of a text falls inside one of its math spans (spans found once, looked up by bisection)."""

    def __init__(self, text: str):
        self.spans = math_spans(text)
        self.starts = [start for start, _, _ in self.spans]

    @classmethod
    def of(cls, spans: Sequence[tuple[int, int, str]]) -> _SpanIndex:
        index = cls("")
        index.spans, index.starts = spans, [start for start, _, _ in spans]
        return index

    def __call__(self, index: int) -> bool:
        i = bisect.bisect_left(self.starts, index) - 1
        return i >= 0 and index < self.spans[i][1]


class _Spans(NamedTuple):
    spans: tuple[tuple[int, int, str], ...]
    unclosed: tuple[str, int] | None  # the delimiter left open at the end of the text, and where


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """The math spans of ``text`` in order: (start, end, content) of ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``.

    Dollars pair up left to right, but a pair whose content reads as prose ("$5 and $"), ends on an
    operator ("$5 + $") or spans a paragraph break is two currency signs: the second dollar then opens
    the next pair. Each stretch between two delimiters is examined once: linear time.
    """
    return list(_scan_spans(text).spans)


@functools.lru_cache(maxsize=16)
def _scan_spans(text: str) -> _Spans:
    """The spans of ``text`` and the delimiter it leaves open, remembered for the last few texts: the
    extractors of one completion (its last math span, whether it stops inside math) scan the same text."""
    spans: list[tuple[int, int, str]] = []
    opened: tuple[str, int, int] | None = None  # (delimiter, start, end)
    for match in _MATH_DELIMITER.finditer(text):
        token = match.group()
        if token in ("\\\\", "\\$"):
            continue
        if token in ("\\(", "\\["):
            opened = (token, match.start(), match.end())
        elif token in _CLOSING:
            if opened is not None and opened[0] == _CLOSING[token]:
                content = text[opened[2] : match.start()]
                if _reads_as_math(content, inline=False):
                    spans.append((opened[1], match.end(), content))
                opened = None
        elif opened is not None and opened[0] == token:
            content = text[opened[2] : match.start()]
            if _reads_as_math(content, inline=token == "$"):
                spans.append((opened[1], match.end(), content))
                opened = None
            else:  # currency: this dollar opens the next pair
                opened = (token, match.start(), match.end())
        elif opened is None or opened[0] in ("$", "$$"):
            opened = (token, match.start(), match.end())
    return _Spans(tuple(spans), None if opened is None else opened[:2])


def _reads_as_math(content: str, *, inline: bool) -> bool:
    body = _clean_span(content)
    if not body or (inline and "\n\n" in content):
        return False
    if _DANGLING.search(body[-12:]):
        return False
    if _ONE_TOKEN.fullmatch(body) or (inline and _WORD_START.match(content)):
        return True  # "$odd$", "$0xff$", "$not odd$": a currency sign comes before an amount, never before a word
    if _LOWER_RUN.search(body) is None:
        return True  # no word of three letters: no prose (removing text groups joins no letters)
    return not any(word.group().lower() not in _FUNCTION_WORDS for word in _PROSE_WORD.finditer(_TEXT_GROUP.sub(" ", body)))


def _clean_span(content: str) -> str:
    return content.strip().rstrip(".,;").strip()


def ends_inside_math(text: str) -> bool:
    """Whether the text stops inside an unclosed ``\\[``, ``\\(`` or ``$$`` (a truncated completion): its last
    span or number is then no answer (``... legs of 2 inches, so \\[ \\frac{1}{2} \\``)."""
    unclosed = _scan_spans(text).unclosed
    return unclosed is not None and unclosed[0] != "$"
