"""Find the final answer in a completion the way a careful reader does: a box, an answer tag, "the answer
is", ``####``, the last math span, a bare answer, and only then the last number that stands alone.

The one answer extractor of the project, shared by the answer-checking families (exact_match, math,
majority_vote); each family picks its order of extractors and its length limit. Every function here
runs in linear time on any input (no backtracking regex, brace matching by counting, each stretch of
text scanned a bounded number of times) and never raises on text: pathological completions give
``None``. Answers longer than ``max_chars`` are rejected, since a 10k-character "answer" is a hedge or
garbage, not an answer; ``max_chars=None`` returns them whatever their length, for callers that
report the length themselves.
"""

from __future__ import annotations

import bisect
import re
import string
import unicodedata
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation
from typing import NamedTuple

from rewardhub import ConfigError

MAX_ANSWER_CHARS = 1000
_MAX_BARE_CHARS = 200  # a whole text longer than this is not "a bare answer"

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_BRACE = re.compile(r"[{}]")
_TOKEN = re.compile(r"[^\s$}]*")
_OPEN_TAG, _CLOSE_TAG = "<answer>", "</answer>"
_ANSWER_IS = re.compile(r"answer\s{0,5}(?:is\b:?|:)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
_SENTENCE_BREAK = re.compile(r"[.!?](?:\s|$)|\n")
_HOPE = "i hope it is correct"  # the MATH few-shot sign-off, found case-insensitively
_QUOTES = re.compile(r'^(?:\\?["\u201c\u201d])+|(?:\\?["\u201c\u201d])+$')  # "12 and 13" quoted
_REMARK = re.compile(r"\s*(?<!\\)\([^()\\]*[A-Za-z]{3,}[^()\\]*\)$")  # "-\\frac{\\pi}{6} (without quotes)"
_COPULA = re.compile(r"\b(?:is|are|was|were|equals)\b")
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
_DANGLING = re.compile(r"(?:[-+*/=<>^_]|\\(?:times|cdot|div|pm|mp|leq?|geq?|neq|approx))\s*$")
# Between two boxes (or spans) that together form one answer: only separators and spacing.
_GAP_NOISE = re.compile(r"\\(?:quad|qquad|text\w*|mbox|mathrm)(?![A-Za-z])|\\[,;:! ()\[\]]|[\s$,;.&{}]")
_SEPARATORS = frozenset({"and", "or"})
_MAX_GAP = 80
_MAX_GAP_WORDS = 3
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z])|[^\W\d_A-Za-z]{2,}")  # ASCII words; runs of other letters
# A number as written in text: 1,250.5 / 12,\!000 / 8{,}000 / 2,74 (decimal comma) / 3/4 / .5
_NUMBER_TOKEN = re.compile(
    r"[-+−]?(?:(?:\d+(?:(?:,|\{,\}|,\\!)\d{3})+(?!\d)|(?<![\d,])\d+,\d{1,2}(?![\d,])|\d+)(?:\.\d+)?|\.\d+)(?:/\d+)?"
)
_UNIT_AFTER_NUMBER = re.compile(r"(?:cm|mm|km|kg|mg|ml|mph|min|m|g|s|h|l)(?![A-Za-z])")
_WORD_BEFORE = re.compile(r"([A-Za-z']+)\s{1,3}$")
# "10 minus 3", "more than 5", "5 or 6", "not 12": the number after these words is not the answer
_SCALING_BEFORE = frozenset({"or", "minus", "plus", "times", "than", "over", "not", "never", "isn't", "aren't", "wasn't"})
_ARITHMETIC = "+-*/×÷·−"
_NEXT_WORD = re.compile(r"\s{0,3}(?:\\text\{\s*)?([A-Za-z]+)")
_ALLOWED_AFTER = re.compile(r"\\(?:[%$,;!: )\]]|text|mbox|mathrm|quad|qquad)")


class Extraction(NamedTuple):
    """An extracted answer and the extractor that found it (``"boxed"``, ``"gsm8k"``...)."""

    answer: str
    how: str


# ----- boxes ------------------------------------------------------------------------------------------


def last_boxed(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """Content of the last closed ``\\boxed{...}`` (or ``\\fbox{}``, ``\\boxed 5``), or None.

    Braces are matched by counting. When the last box is unclosed (a truncated completion), earlier
    boxes are tried; each stretch of text is scanned at most once, so the whole call is linear.
    Empty boxes are skipped; an over-long last box gives None (no fall back to an earlier one).
    """
    box = next(_boxes(text), None)
    return None if box is None else _bounded(box[2], max_chars)


def boxed(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The last box, with the boxes just before it when only separators stand between them.

    ``\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}`` is one answer, ``(2, 2), (6, 2)``;
    ``\\boxed{1} then \\boxed{2}`` is ``2`` (a word other than "and"/"or" separates them).
    """
    parts: list[str] = []
    previous_start = None
    for start, end, content in _boxes(text):
        if previous_start is not None and not _separator_gap(text[end:previous_start]):
            break
        if not parts or parts[-1] != content:
            parts.append(content)
        previous_start = start
    return _bounded(", ".join(reversed(parts)), max_chars) if parts else None


def _boxes(text: str) -> Iterator[tuple[int, int, str]]:
    """Non-empty closed boxes from the last to the first: (start, end after the box, stripped content)."""
    end = len(text)  # no box starting before `end` can close after it (see below)
    found = {command: text.rfind(command) for command in _BOX_COMMANDS}
    while True:
        command, start = max(found.items(), key=lambda item: item[1])
        if start < 0:
            return
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
            content, box_end = text[i + 1 : close].strip(), close + 1
        elif command_end < i < end:  # "\boxed 5": the token after the space
            token = _TOKEN.match(text, i, end)
            content, box_end = token.group(), token.end()
        else:
            continue
        if content:
            yield start, box_end, content
            end = start


def _matching_brace(text: str, open_index: int, end: int) -> int | None:
    """Index of the ``}`` closing the ``{`` at ``open_index``, searching before ``end``."""
    depth = 0
    for match in _BRACE.finditer(text, open_index, end):
        depth += 1 if match.group() == "{" else -1
        if depth == 0:
            return match.start()
    return None


def _separator_gap(gap: str, other_words: int = _MAX_GAP_WORDS) -> bool:
    """Whether the text between two boxes or spans joins them into one answer: nothing but spacing, or one
    or two separators (a comma, "and", "or") with at most ``other_words`` other words on the same line
    (``papers and``, ``for part (a) and`` between boxes). ``then``, ``was wrong, the answer is``,
    ``no no no``, ``and and or thus`` and a new sentence (``.\\nTherefore,``) do not join."""
    if len(gap) > _MAX_GAP:
        return False
    words = _GAP_NOISE.sub(" ", gap).split()
    separators = sum(word.lower() in _SEPARATORS for word in words) + gap.count(",") + gap.count(";")
    others = len(words) - sum(word.lower() in _SEPARATORS for word in words)
    if others and "\n" in gap:
        return False
    return not words or (0 < separators <= 2 and others <= other_words)


# ----- answer tags, GSM8K, "the answer is" -------------------------------------------------------------


def answer_tag(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The answer inside the last closed ``<answer>...</answer>`` block, or None.

    A box, "the answer is" or ``####`` in the tag is the answer (``<answer>The answer is 18.</answer>`` ->
    ``18``); otherwise the content as written (the math family reads prose there further).
    """
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
    for extractor in (boxed, answer_is, gsm8k):
        found = extractor(content, max_chars)
        if found is not None:
            return found
    return _bounded(content.strip(), max_chars)


def read_answer(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The answer in a short text known to hold one (an answer tag's content, a gold solution).

    A box, "the answer is", ``####``, the whole text when it is a bare answer, the last math span, the
    last number that stands alone; None when the text holds none of these.
    """
    for extractor in (boxed, answer_is, gsm8k, bare, last_math, last_number):
        found = extractor(text, max_chars)
        if found is not None:
            return found
    return None


def gsm8k(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The answer after the last ``####`` marker (GSM8K's format), up to the end of its line."""
    marker = text.rfind("####")
    if marker < 0:
        return None
    line_end = text.find("\n", marker)
    line = text[marker : line_end if line_end >= 0 else len(text)]
    return _bounded(line.lstrip("#").strip(), max_chars)


def answer_is(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The answer stated after the last "(final) answer is" / "answer:", read within that sentence.

    ``The final answer is $\\frac{3}{4}$. I hope it is correct.`` -> ``\\frac{3}{4}``; in ``Final Answer:
    The volume of $ABCD$ is 120.`` the answer is what follows the last "is" (``120``). A sentence with no
    math, number or short answer in it (``the answer is clear``) is no answer.
    """
    last = _last_match(_ANSWER_IS, text)
    if last is None:
        return None
    line_end = text.find("\n", last.end())
    rest = text[last.end() : line_end if line_end >= 0 else len(text)]
    hope = rest.lower().find(_HOPE)
    rest = rest[:hope] if hope >= 0 else rest
    inside = _SpanIndex(rest)
    sentence_end = next((m.start() for m in _SENTENCE_END.finditer(rest) if not inside(m.start())), len(rest))
    rest = rest[:sentence_end]
    copula = None
    for match in _COPULA.finditer(rest):
        if not inside(match.start()):
            copula = match
    if copula is not None and rest[copula.end() :].strip(" \t:*"):
        rest = rest[copula.end() :]
    rest = _REMARK.sub("", rest.lstrip(" \t:*}").rstrip(" \t*.").strip(" \t*"))
    rest = _QUOTES.sub("", rest)
    return _read_phrase(rest, max_chars)


class _SpanIndex:
    """Whether a position of a text falls inside one of its math spans (spans found once, looked up by bisection)."""

    def __init__(self, text: str):
        self.spans = math_spans(text)
        self.starts = [start for start, _, _ in self.spans]

    def __call__(self, index: int) -> bool:
        i = bisect.bisect_left(self.starts, index) - 1
        return i >= 0 and index < self.spans[i][1]


def _read_phrase(phrase: str, max_chars: int | None) -> str | None:
    """The answer in the words after "the answer is": one math span, a box, the spans, a bare answer, a number."""
    scanned = _scan_spans(phrase)
    if scanned.unclosed is not None and not phrase[scanned.unclosed[1] :].strip("$ "):
        phrase = phrase[: scanned.unclosed[1]].rstrip()  # "6-5i$$": the closing half of a span the line opened
    spans = scanned.spans
    if len(spans) == 1 and not phrase[: spans[0][0]].strip() and not phrase[spans[0][1] :].strip(" .,;"):
        return _bounded(_clean_span(spans[0][2]), max_chars)
    for extractor in (boxed, last_math, bare, last_number):
        found = extractor(phrase, max_chars)
        if found is not None:
            return found
    return None


def final_statement(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The later of the last box and the last "answer is" statement: a box mid-solution followed by
    ``Final Answer: The final answer is $10,455$`` gives ``10,455``; ``The answer is 5 ... \\boxed{6}`` gives 6."""
    last_box = next(_boxes(text), None)
    statement = _last_match(_ANSWER_IS, text)
    if last_box is not None and (statement is None or last_box[0] > statement.start()):
        return boxed(text, max_chars)
    return answer_is(text, max_chars) if statement is not None else None


# ----- math spans ----------------------------------------------------------------------------------------


class _Spans(NamedTuple):
    spans: list[tuple[int, int, str]]
    unclosed: tuple[str, int] | None  # the delimiter left open at the end of the text, and where


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """The math spans of ``text`` in order: (start, end, content) of ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``.

    Dollars pair up left to right, but a pair whose content reads as prose ("$5 and $"), ends on an
    operator ("$5 + $") or spans a paragraph break is two currency signs: the second dollar then opens
    the next pair. Each stretch between two delimiters is examined once: linear time.
    """
    return _scan_spans(text).spans


def _scan_spans(text: str) -> _Spans:
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
    return _Spans(spans, None if opened is None else opened[:2])


def _reads_as_math(content: str, *, inline: bool) -> bool:
    body = _clean_span(content)
    if not body or (inline and "\n\n" in content):
        return False
    if _DANGLING.search(body[-12:]):
        return False
    return not any(word.group().lower() not in _FUNCTION_WORDS for word in _PROSE_WORD.finditer(_TEXT_GROUP.sub(" ", body)))


def _clean_span(content: str) -> str:
    return content.strip().rstrip(".,;").strip()


def ends_inside_math(text: str) -> bool:
    """Whether the text stops inside an unclosed ``\\[``, ``\\(`` or ``$$`` (a truncated completion): its last
    span or number is then no answer (``... legs of 2 inches, so \\[ \\frac{1}{2} \\``)."""
    unclosed = _scan_spans(text).unclosed
    return unclosed is not None and unclosed[0] != "$"


def last_math(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """Content of the last math span, with the spans just before it when only separators stand between.

    ``the roots are $-2$ and $1$`` -> ``-2, 1``; ``Therefore $x = \\frac{3}{7}$.`` -> ``x = \\frac{3}{7}``
    (the checker reads the equation: the answer is 3/7, never the 7 of the denominator).
    """
    scanned = _scan_spans(text)
    spans = scanned.spans
    if not spans or (scanned.unclosed and scanned.unclosed[0] != "$"):
        return None  # no span, or a truncated completion
    if _later_sentence_number(text, spans[-1][1], spans[-1][2]):
        return None
    parts = [_clean_span(spans[-1][2])]
    for (_, end, content), (next_start, _, _) in zip(reversed(spans[:-1]), reversed(spans[1:]), strict=True):
        if not _separator_gap(text[end:next_start], other_words=0):
            break
        parts.append(_clean_span(content))
    return _bounded(", ".join(reversed(parts)), max_chars)


def _later_sentence_number(text: str, span_end: int, span_content: str) -> bool:
    """Whether a number that stands alone follows the span in a later sentence: then it is the answer
    (``... $d = \\frac{90}{n}$ ... Therefore, there are 12 sequences.``), not the math span before it."""
    if span_content.rstrip().endswith("."):  # "$$ ... = 2.$$ Therefore ... 100%."
        start = span_end
    else:
        boundary = _SENTENCE_BREAK.search(text, span_end)
        if boundary is None:
            return False
        start = boundary.end()
    return last_number(text[start:], None) is not None


# ----- bare answers and numbers -------------------------------------------------------------------------


def bare(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The whole text when it is a bare answer: one short line of math, one word, or a number and its unit.

    ``x^2 + 1``, ``$\\frac{1}{3}$``, ``odd``, ``15 miles``, ``19, 46, and 82`` are bare answers;
    ``D. it can't be A or B`` and ``Soucis : 2,74 $ a..`` are not (prose: the last number decides).
    """
    stripped = text.strip()
    if not stripped or "\n" in stripped or len(stripped) > _MAX_BARE_CHARS or len(math_spans(stripped)) > 1:
        return None  # (several math spans joined by words are read span by span)
    words = [word.lower() for word in _WORD.findall(_TEXT_GROUP.sub(" ", stripped))]
    content_words = [word for word in words if word not in _SEPARATORS and word not in _FUNCTION_WORDS]
    one_word = len(words) == 1 and stripped.strip("$.() ").lower() == words[0]
    if not content_words or one_word or number_before_unit(stripped) is not None:
        return _bounded(stripped, max_chars)
    return None


def number_before_unit(text: str) -> str | None:
    """The number of ``15 miles``, ``$125$ miles``, ``18\\text{ dollars}``, ``28 percent``: a number followed
    only by unit words (never by words that change its value: ``5 or more``, ``2 million``), else None."""
    start = text.lstrip("$ ")
    number = _NUMBER_TOKEN.match(start)
    if number is None:
        return None
    rest = _LATEX_WRAPPERS.sub(r" \1 ", start[number.end() :]).replace("$", " ").replace("\\%", " percent ")
    words = rest.replace("%", " percent ").replace(".", " ").split()
    if words and all(word.isalpha() and is_unit_word(word) for word in words):
        return number.group()
    return None


def is_unit_word(word: str) -> bool:
    """Whether a word after a number names its unit ("apples", "cm"), not math or a change of value."""
    word = word.rstrip(".").lower()
    return len(word) > 1 and word not in _MATH_WORDS and word not in _VALUE_WORDS


_MATH_WORDS = frozenset({"pi", "sqrt", "infty", "frac", "cdot", "times", "mod"})
# Words after a number that change its value or hedge it: "5 or more", "2 million", "1 half" are not units.
_VALUE_WORDS = frozenset({
    "or", "not", "more", "less", "fewer", "than", "plus", "minus", "over", "divided", "squared", "cubed",
    "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion", "billions", "trillion",
    "dozen", "dozens", "half", "halves", "third", "thirds", "quarter", "quarters", "exp",
    "least", "most", "under", "above", "below", "nearly", "almost", "approximately", "roughly", "about",
    "minimum", "maximum", "times",
})  # fmt: skip


def last_number(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The last number of the text when it stands alone as a token (``1,250.5``, ``-3``, ``3/4``, ``$18``,
    ``5%``), else None: never an earlier number instead.

    The last number is no answer when it is a digit inside a word (``AZYUK2A``, ``10th``), a piece of a
    LaTeX argument, exponent or product (the ``2`` of ``\\frac{1}{2}``, ``x^2``, ``5\\sqrt{2}``, ``2\\pi``), a
    hedged or scaled value (``5 or more``, ``2 million``, ``10 minus 3``) or an operand of arithmetic
    (``9 * 2``; a result after ``=`` is fine).
    """
    if ends_inside_math(text):
        return None
    last = _last_match(_NUMBER_TOKEN, text)
    if last is None:
        return None
    start = last.start()
    if text[start] in "-+−" and start > 0 and (text[start - 1].isalnum() or text[start - 1] in ")}]"):
        start += 1  # a binary minus or plus, not a sign
    if not _stands_alone(text, start, last.end()):
        return None
    return _bounded(text[start : last.end()], max_chars)


def _stands_alone(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    if _wordlike(before) or before in "\\{}^_.'/&":
        return False
    if before == "[" and start > 1 and text[start - 2].isalpha():  # \sqrt[3]{...}
        return False
    if _hedged(text, start, end):
        return False
    after = text[end] if end < len(text) else " "
    if after in "^_{}'/&" or after.isdigit():
        return False
    if after == "\\":
        return _ALLOWED_AFTER.match(text, end) is not None
    if _wordlike(after):
        return _UNIT_AFTER_NUMBER.match(text, end) is not None
    return True


def _hedged(text: str, start: int, end: int) -> bool:
    """``5 or more``, ``2 million``, ``3 times``, ``5 or 6``, ``10 minus 3``: the number is hedged or scaled
    (it is not the answer), or an operand of arithmetic (``16 - 3``, ``9 * 2``: only a result after ``=`` is)."""
    before = _WORD_BEFORE.search(text, max(0, start - 14), start)
    if before is not None and before.group(1).lower() in _SCALING_BEFORE:
        return True
    word = _NEXT_WORD.match(text, end)
    if word is not None and word.group(1).lower() in _VALUE_WORDS:
        return True
    return _operand_before(text, start) or _operand_after(text, end)


def _operand_before(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] == " ":
        i -= 1
    if i < 0 or text[i] not in _ARITHMETIC:
        return False
    i -= 1
    while i >= 0 and text[i] == " ":
        i -= 1
    return i >= 0 and (text[i].isalnum() or text[i] in ")]}")


def _operand_after(text: str, end: int) -> bool:
    i = end
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text) or text[i] not in _ARITHMETIC + "^":
        return False
    i += 1
    while i < len(text) and text[i] == " ":
        i += 1
    return i < len(text) and (text[i].isalnum() or text[i] in "($\\")


def _wordlike(char: str) -> bool:
    """Letters of scripts written with spaces (Latin, Greek, Cyrillic: they have case) and digits."""
    return char.isdigit() or (char.isalpha() and char.lower() != char.upper())


def whole(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The whole completion, stripped: for short-answer tasks with no answer markup."""
    return _bounded(text.strip(), max_chars)


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last non-overlapping match of ``pattern`` (one forward pass, constant memory)."""
    last = deque(pattern.finditer(text), maxlen=1)
    return last[0] if last else None


def _bounded(answer: str, max_chars: int | None) -> str | None:
    return answer if answer and (max_chars is None or len(answer) <= max_chars) else None


# ----- extractors by name and the ladder --------------------------------------------------------------

EXTRACTORS: dict[str, Callable[[str, int | None], str | None]] = {
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
    answers here; math's (``math.find_answer``) starts with the answer tag, ends with the last math
    span, a bare answer and the last number, and passes ``max_chars=None`` to report an over-long
    answer itself.
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
_THOUSANDS_MARK = re.compile(r"\{\s*,\s*\}|,\s*\\!\s*")  # 8{,}000 and 12,\!000 are 8,000 and 12,000
_NUMBER_LITERAL = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?")
_MAX_EXPONENT = 100
_EXACT = Context(prec=200)  # no rounding: canonical forms of distinct numbers must differ
# Kept by punctuation stripping: "-x" is not "x", "x-1" is not "x+1", "[0, 1)" is not "(0, 1)".
_OPERATORS = frozenset("+-*/^=<>()[]")
_PUNCTUATION = frozenset(string.punctuation) - _OPERATORS
_LONE_BRACKETED = re.compile(r"[(\[]\s*([^()\[\],\s]+)\s*[)\]]")  # "(B)" is the option B
_PRIME = re.compile(r"(?<=[\w)])'+(?![A-Za-z])")  # E' and f'(x), not the apostrophe of "don't"
# A hyphen inside a word ("well-known", "COVID-19") or between spaced words ("Paris - France"), not a minus sign.
_TEXT_DASH = re.compile(r"(?<=[^\W\d_])-(?=[^\W_])|(?<=[^\W_])-(?=[^\W\d_])|(?<=\s)-(?=\s)")
_OPERATOR_SPACING = re.compile(r"\s*([+\-*/^=<>()\[\]])\s*")
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
        """Strip LaTeX wrappers, canonicalise numbers (``1,000`` = ``8{,}000``-style = ``1000.0`` = ``1e3``),
        else drop punctuation (not signs, operators, brackets or primes: ``E'`` is not ``E``), fold case
        and collapse whitespace."""
        text = unicodedata.normalize("NFKC", answer).replace("\u2212", "-").strip()  # U+2212 minus sign
        if self.latex:
            text = strip_latex(text)
        if self.numbers:
            number = canonical_number(text)
            if number is not None:
                return number
        if self.punctuation:
            lone = _LONE_BRACKETED.fullmatch(text.rstrip(". "))
            text = lone.group(1) if lone else text
            text = _PRIME.sub(lambda primes: " prime" * len(primes.group()) + " ", text)
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
    text = _THOUSANDS_MARK.sub(",", text)
    text = _LATEX_NOISE.sub("", text)
    return text.replace("\\%", "%").replace("\\$", "$").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")


def canonical_number(text: str) -> str | None:
    """``text`` as a canonical decimal string when it is one number (currency ``$`` and ``%`` ignored).

    ``"1,000"``, ``"1000.0"``, ``"1e3"`` and ``"$1000"`` all give ``"1000"``; ``"0.50"`` gives ``"0.5"``.
    Texts over 120 characters and numbers with exponents beyond +-100 are left alone (None).
    """
    text = text.strip().removeprefix("$").removesuffix("%").strip()
    if not text or len(text) > 120 or _NUMBER_LITERAL.fullmatch(text) is None or not any(c.isdigit() for c in text):
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
