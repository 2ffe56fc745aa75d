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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation
from typing import NamedTuple

from rewardhub import ConfigError

from .number_words import MAX_WORDS, NUMBER_WORDS, words_to_number

MAX_ANSWER_CHARS = 1000
_MAX_BARE_CHARS = 200  # a whole text longer than this is not "a bare answer"

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_BRACE = re.compile(r"[{}]")
_TOKEN = re.compile(r"[^\s$}]*")
_OPEN_TAG, _CLOSE_TAG = "<answer>", "</answer>"
# "the answer is", "Answer:", "the answer (arabic numerals) is": a short remark may stand between.
_ANSWER_IS = re.compile(
    r"answer\**\s{0,5}(?:\([^()\n]{1,40}\)\s{0,5})?(?:(?:is|(?:would|should|will|must|could|might|may) be)\b:?|:)",
    re.IGNORECASE,
)  # also "**Answer**: 12", "the answer would be 12"
# "another valid answer is", "an alternative answer would be", "the other possible answer is": a second answer.
_ANOTHER_ANSWER = re.compile(r"(?<![A-Za-z])(?:another|alternative|alternate|other|second|also)(?:\s+[A-Za-z]+)?\s+$",
                             re.IGNORECASE)  # fmt: skip
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
_SENTENCE_BREAK = re.compile(r"[.!?](?:\s|$)|\n")
_HOPE = "i hope it is correct"  # the MATH few-shot sign-off, found case-insensitively
_QUOTES = re.compile(r'^(?:\\?["\u201c\u201d])+|(?:\\?["\u201c\u201d])+$')  # "12 and 13" quoted
_REMARK = re.compile(r"\s*(?<!\\)\([^()\\]*[A-Za-z]{3,}[^()\\]*\)$")  # "-\\frac{\\pi}{6} (without quotes)"
_COPULA = re.compile(r"\b(?:is|are|was|were|equals)\b")
# What follows the answer in its sentence to justify it is no answer: "12 because there are 3 boxes".
_REASON = re.compile(r"(?:,\s*|\s*\(\s*|\s+)(?:since|because|as|which|where|given|when|while|i\.e\.|e\.g\.|hence|thus"
                     r"|so that)\b", re.IGNORECASE)  # fmt: skip
_OR_REMARK = re.compile(r"\s*\(\s*((?:and/)?or\b[^()]*)\)")  # "12 (or possibly 13)" offers 13 too
# Between the values a phrase offers: "or" (and "and/or"), and "but" (a correction offers a second value).
_PHRASE_SEPARATOR = re.compile(r"\s*,?\s*(?<![A-Za-z\\])(?:(?:and/)?or|but)(?![A-Za-z])\s*", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
# After a stated answer, words that take it back: "Wait, I made an error", "Actually", "it should be".
_RETRACTIONS = ("wait", "actually", "oops", "mistake", "error", "wrong", "incorrect", "correction", "should be", "instead",
                "second thought", "hold on", "hmm", "scratch that", "no,", "nope", "let me", "redo", "recount", "recheck",
                "recompute", "recalculate", "recalculating", "reconsider", "reconsidering", "rethink", "revise", "revised",
                "miscalculated", "miscalculation", "miscounted", "misread", "slipped", "typo", "not right", "not correct",
                "re-examine", "rechecking", "recomputing", "recounting", "redoing", "update", "updated")  # fmt: skip
# Characters that show nothing (zero-width spaces and joiners, soft hyphens, direction marks): a reader sees the text
# without them, so "o\u200br" is "or" and "W\u200bait" is "Wait".
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")
_CHAIN = frozenset("0123456789 .,+-*/×÷=^()·")  # the arithmetic that ends on a result: "16 - 3 - 4 = 9"
# Words and signs before a value that make it a bound or an estimate: "at least 5", "about 5", "x \ge 3".
_BOUND = re.compile(r"(?<![A-Za-z])(?:at least|at most|more than|less than|fewer than|greater than|no more than|up to)"
                    r"(?![A-Za-z])", re.IGNORECASE)  # fmt: skip (an estimate, "approximately 3.14", is a rounded answer)
# Right before a number: a relation that makes it a bound ("n \ge 3", "x < 5", "\approx 2.7"), not the value.
_BOUND_BEFORE = re.compile(r"(?:\\(?:geq?|leq?|gt|lt|neq?)(?![A-Za-z])|[<>≥≤≠])\s*\$?\s*$")
_HEDGE_WORDS = frozenset({"more", "less", "fewer", "greater", "smaller", "higher", "lower", "above", "below", "so",
                          "something", "anything", "other", "else", "not", "none", "nothing"})  # fmt: skip
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
_ONE_TOKEN = re.compile(r"[A-Za-z0-9_']+")
_WORD_START = re.compile(r"\s*[A-Za-z\\({\[]")  # "$not odd$" is math: currency signs come before amounts
_DANGLING = re.compile(r"(?:[-+*/=<>^_]|\\(?:times|cdot|div|pm|mp|leq?|geq?|neq|approx))\s*$")
# Between two boxes (or spans) that together form one answer: only separators and spacing.
_GAP_NOISE = re.compile(r"\\(?:quad|qquad|text\w*|mbox|mathrm)(?![A-Za-z])|\\[,;:! ()\[\]]|[\s$,;.&{}()]")
_SEPARATORS = frozenset({"and", "or"})
_HEDGE_JOINERS = frozenset({"alternatively", "possibly", "perhaps", "maybe"})  # between boxes, they offer an "or"
_UNFINISHED = frozenset(",:;=+-/\\({[&^_|<\u2013\u2014")  # a text ending on these was cut off mid-sentence
_SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_]+\|>")  # chat template tokens: <|im_start|>, <|endoftext|>
_MAX_GAP = 80
_MAX_GAP_WORDS = 3
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z])|[^\W\d_A-Za-z]{2,}")  # ASCII words; runs of other letters
_SHORT_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2}(?![A-Za-z])")
_SHORT_PROSE = frozenset("so is of to in on at it be as by an we if no do my".split())  # two-letter English words
# A number as written in text: 1,250.5 / 12,\!000 / 8{,}000 / 2,74 (decimal comma) / 3/4 / .5 / 2 1/2
_NUMBER_TOKEN = re.compile(
    r"[-+−]?(?:(?<!\d)\d{1,9} \d{1,9}/\d+(?![\d/])|(?:(?:\d+(?:(?:,|\{,\}|,\\!)\d{3})+(?!\d)|(?<![\d,])\d+,\d{1,2}(?![\d,])|\d+)(?:\.\d+)?|\.\d+)(?:/\d+)?)"
)  # "2 1/2" is one number (two and a half)
_UNIT_AFTER_NUMBER = re.compile(r"(?:cm|mm|km|kg|mg|ml|mph|min|m|g|s|h|l)(?![A-Za-z])")
_WORD_BEFORE = re.compile(r"([A-Za-z']+)\s{1,3}$")
# "10 minus 3", "more than 5", "5 or 6", "not 12": the number after these words is not the answer
_SCALING_BEFORE = frozenset({"or", "minus", "plus", "times", "than", "over", "not", "never", "isn't", "aren't", "wasn't",
                             "least", "most"})  # fmt: skip
_ARITHMETIC = "+-*/×÷·−"
_NEXT_WORD = re.compile(r"\s{0,3}(?:\\text\{\s*)?([A-Za-z]+)")
_ALLOWED_AFTER = re.compile(r"\\(?:[%$,;!: )\]]|text|mbox|mathrm|quad|qquad)")
_LABEL_WORDS = frozenset(
    "step steps case cases part parts problem question example method option stage phase figure fig equation eq"
    " lemma theorem claim condition item section chapter page line rule hint solution approach attempt subcase"
    " scenario".split()
)
_NUMBER_WORD = "(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + ")"
# A number in words: "fifty-two", "one hundred and five", "Four" (read by rewards/number_words.py).
_NUMBER_PHRASE = re.compile(rf"(?<![A-Za-z])(?:a\s+|(?:minus|negative)\s+)?{_NUMBER_WORD}(?:(?:\s+and\s+|[\s-]+){_NUMBER_WORD})*(?![A-Za-z])",
                            re.IGNORECASE)  # fmt: skip
_DETERMINERS = frozenset(
    "each every the this that these those any no which another only first last a such some all both our their"
    " its his her my your".split()
)
_PRONOUN_AFTER = frozenset({"of", "another", "by", "more", "at"})
# Words right before a value that deny it or make another value of it: "not 25", "it cannot be $x$", "anything
# except 25", "twice 25", "the square root of $25$" (only filler words may stand between them and the value).
_NOT_THE_VALUE = re.compile(
    r"(?<![A-Za-z'])(?:not|never|cannot|can't|isn't|aren't|wasn't|weren't|won't|neither|nor|except|excluding|besides"
    r"|without|other\s+than|rather\s+than|instead\s+of|anything\s+but|twice|thrice|double|triple|quadruple"
    r"|(?:half|third|quarter|root|reciprocal|square|cube|inverse|negative|opposite|multiple|factor|divisor|fraction"
    r"|power|logarithm|log|complement|percent|%)\s+of)"
    r"(?:\s+(?:be|equal|equals|to|exactly|just|simply|possibly|necessarily|the|a|an|value|number))*[\s$(\\{]*$",
    re.IGNORECASE,
)
_MODIFIER_WINDOW = 48


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
_OR_WORD = re.compile(r"(?<![A-Za-z\\])(?:or|alternatively|possibly|perhaps|maybe)(?![A-Za-z])", re.IGNORECASE)
_OR_SEPARATOR = re.compile(
    r"\s*(?:\\(?:text\w*|mbox|mathrm)\s*\{\s*(?:and/)?or\s*\}|(?<![A-Za-z\\])(?:and/)?or(?![A-Za-z])|\\(?:lor|vee)(?![A-Za-z]))\s*",
    re.IGNORECASE,
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


# ----- boxes ------------------------------------------------------------------------------------------


def bracket_depths(text: str) -> list[int]:
    """The bracket depth (``{[(`` minus ``}])``) before each character of ``text``."""
    depth, depths = 0, []
    for char in text:
        depths.append(depth)
        depth += 1 if char in "{[(" else -1 if char in "}])" else 0
    return depths


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
    parts: list[str] = []  # from the last box back
    gaps: list[str] = []
    previous_start = None
    for start, end, content in _boxes(text):
        if previous_start is not None:
            if not _separator_gap(text[end:previous_start]):
                break
            gaps.append(text[end:previous_start])
        parts.append(content)
        previous_start = start
    return _bounded(_joined(parts, gaps), max_chars) if parts else None


def _joined(parts: list[str], gaps: list[str]) -> str:
    """Parts found from the last back, with the gaps between them, as one answer in reading order: joined by
    ``, `` (``\\boxed{-2} and \\boxed{1}``) or by ``OR`` where the gap offers an alternative (``$1$ or $2$``);
    a part repeated right after itself (``\\boxed{3} and \\boxed{3}``) counts once."""
    out = [parts[-1]]
    for part, gap in zip(reversed(parts[:-1]), reversed(gaps), strict=True):
        if part != out[-1]:
            out += [OR if _OR_WORD.search(gap) else ", ", part]
    return "".join(out)


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
    hedges = sum(word.lower() in _HEDGE_JOINERS for word in words)  # "(alternatively", ", or perhaps"
    others = len(words) - sum(word.lower() in _SEPARATORS for word in words) - hedges
    if others and "\n" in gap:
        return False
    return not words or ((0 < separators <= 2 or (hedges and not separators)) and others <= other_words)


# ----- answer tags, GSM8K, "the answer is" -------------------------------------------------------------


def answer_tag(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | Unreadable | None:
    """The answer inside the last closed ``<answer>...</answer>`` block, or None.

    A box, "the answer is" or ``####`` in the tag is the answer (``<answer>The answer is 18.</answer>`` ->
    ``18``); otherwise the content as written (the math family reads prose there further).
    """
    return _tagged(text, max_chars, to_end=False)


def open_answer_tag(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | Unreadable | None:
    """Like :func:`answer_tag`, but a last ``<answer>`` left open (a truncated completion) runs to the end."""
    return _tagged(text, max_chars, to_end=True)


def _tagged(text: str, max_chars: int | None, *, to_end: bool) -> str | Unreadable | None:
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
    found = next((found for extractor in (boxed, answer_is, gsm8k) if (found := extractor(content, max_chars)) is not None),
                 None)  # fmt: skip
    return unless_revised(text, close, _bounded(content.strip(), max_chars) if found is None else found)


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


def answer_is(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | Unreadable | None:
    """The answer stated after the last "(final) answer is" / "answer:", read within that sentence.

    ``The final answer is $\\frac{3}{4}$. I hope it is correct.`` -> ``\\frac{3}{4}``; in ``Final Answer:
    The volume of $ABCD$ is 120.`` the answer is what follows the last "is" (``120``); ``the answer is
    fifty-two`` is ``52``; ``12 because there are 3 boxes`` is ``12`` (a reason that follows is no answer).
    Values offered as alternatives (``$\\frac{1}{12}$ or 1``) come joined by ``OR``; a hedge whose other
    side is no value (``5 or more``) is :class:`Unreadable`. A sentence with no math, number or short answer
    in it (``the answer is clear``) gives None.
    """
    last = _last_match(_ANSWER_IS, text)
    if last is None:
        return None
    if _ANOTHER_ANSWER.search(text, max(0, last.start() - 40), last.start()):
        return Unreadable(f"another answer offered beside a first one: {_squeeze(text[max(0, last.start() - 40) : last.end() + 40])!r}")
    line_end = text.find("\n", last.end())
    rest = text[last.end() : line_end if line_end >= 0 else len(text)]
    hope = rest.lower().find(_HOPE)
    rest = rest[:hope] if hope >= 0 else rest
    inside = _SpanIndex(rest)
    sentence_end = next((m.start() for m in _SENTENCE_END.finditer(rest) if not inside(m.start())), len(rest))
    rest = rest[:sentence_end]
    reason = next((m for m in _REASON.finditer(rest) if not inside(m.start()) and _holds_value(rest[: m.start()])), None)
    rest = rest if reason is None else rest[: reason.start()]
    copula = None
    for match in _COPULA.finditer(rest):
        if not inside(match.start()):
            copula = match
    if copula is not None and rest[copula.end() :].strip(" \t:*") and not _DIGIT.search(rest[: copula.start()]):
        rest = rest[copula.end() :]  # "The volume of $ABCD$ is 120": what the subject is
    rest = _OR_REMARK.sub(r" \1", rest.lstrip(" \t:*}").rstrip(" \t*.,;").strip(" \t*"))
    rest = _REMARK.sub("", rest)
    rest = _QUOTES.sub("", rest)
    outside = "".join(rest[i] for i in range(len(rest)) if not inside(i)) if "?" in rest or _BOUND.search(rest) else ""
    if "?" in outside:
        return Unreadable(f"the answer is asked, not stated: {_squeeze(rest)!r}")
    if _BOUND.search(outside):
        return Unreadable(f"a bound or an estimate, not a value: {_squeeze(rest)!r}")
    return _read_phrase(rest, max_chars)


def _holds_value(text: str) -> bool:
    return any(char.isdigit() for char in text) or "$" in text or "\\" in text or bool(_WORD.search(text))


def _read_phrase(phrase: str, max_chars: int | None) -> str | Unreadable | None:
    """The answer in the words after "the answer is": each alternative it offers read on its own."""
    scanned = _scan_spans(phrase)
    if scanned.unclosed is not None and not phrase[scanned.unclosed[1] :].strip("$ "):
        phrase = phrase[: scanned.unclosed[1]].rstrip()  # "6-5i$$": the closing half of a span the line opened
        scanned = _scan_spans(phrase)
    pieces = _split_outside_spans(phrase, scanned.spans)
    readings = []
    for i, (separator, piece) in enumerate(pieces):
        reading = _read_value(piece, max_chars, scanned.spans if len(pieces) == 1 else None) if piece.strip(" ,;") else None
        first_word = piece.split()[0].lower() if piece.split() else ""
        if separator == "but" and reading is None:
            break  # "12, but let me check": a remark, no second value
        if i and first_word in _HEDGE_WORDS:
            return Unreadable(f"a hedge: {_squeeze(phrase)!r} offers no single value")
        if isinstance(reading, Unreadable):
            return reading
        if reading is None and len(pieces) > 1:
            return Unreadable(f"several answers offered ({_squeeze(phrase)!r}), and {_squeeze(piece)!r} is no value")
        if reading is None:
            return None
        readings.append(reading)
    return _bounded(OR.join(readings), max_chars)


def _split_outside_spans(phrase: str, spans: list[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """``phrase`` split at each "or" and "but" (a correction offers a second value) outside math spans and
    brackets: (the separator before the piece, "" for the first; the piece)."""
    matches = list(_PHRASE_SEPARATOR.finditer(phrase))
    if not matches:
        return [("", _EITHER.sub("", phrase))]
    index, depths = _SpanIndex.of(spans), bracket_depths(phrase)
    pieces, start, separator = [], 0, ""
    for match in matches:
        if depths[match.start()] == 0 and not index(match.start()):
            pieces.append((separator, phrase[start : match.start()]))
            start, separator = match.end(), "but" if "but" in match.group().lower() else "or"
    pieces.append((separator, phrase[start:]))
    pieces[0] = ("", _EITHER.sub("", pieces[0][1]))
    return pieces


def _read_value(
    phrase: str, max_chars: int | None, spans: list[tuple[int, int, str]] | None = None
) -> str | Unreadable | None:
    """One value in a phrase (``spans``: its math spans, when known): one math span, a number in words, a box,
    the spans, a bare answer, a number; :class:`Unreadable` when the phrase holds other values besides."""
    lead = len(phrase) - len(phrase.lstrip(" \t,;"))
    phrase = phrase.strip(" \t,;")
    if spans is None:
        spans = math_spans(phrase)
    else:  # the same spans, shifted by what was stripped (no span starts or ends in spaces and commas)
        spans = [(start - lead, end - lead, content) for start, end, content in spans if end - lead <= len(phrase)]
    if len(spans) == 1 and not phrase[: spans[0][0]].strip() and not phrase[spans[0][1] :].strip(" .,;"):
        return _bounded(_clean_span(spans[0][2]), max_chars)
    if len(spans) == 1 and _modified(phrase, spans[0][0], spans[0][1]):
        return Unreadable(f"the value is denied or changed by the words around it: {_squeeze(phrase)!r}")
    worded = number_in_words(phrase)
    if worded is not None:
        return worded
    for extractor in (boxed, last_math, bare, last_number):
        found = extractor(phrase, max_chars)
        if found is not None:
            before = phrase[: _reading_start(phrase, extractor, spans)]
            if _DIGIT.search(before) or math_spans(before) or any(command in before for command in _BOX_COMMANDS):
                return Unreadable(f"several values in the answer statement: {_squeeze(phrase)!r}")
            return found
    return None


def _reading_start(phrase: str, extractor: Callable, spans: list[tuple[int, int, str]]) -> int:
    """Where the reading of ``extractor`` starts in ``phrase``: the first box or span of the joined group, the
    start of the arithmetic that ends on the last number (``2 * 3 = 6``), 0 for a bare answer."""
    if extractor is boxed or extractor is last_math:
        starts = [box[0] for box in _boxes(phrase)] if extractor is boxed else [span[0] for span in reversed(spans)]
        ends = [box[1] for box in _boxes(phrase)] if extractor is boxed else [span[1] for span in reversed(spans)]
        first = 0
        while first + 1 < len(starts) and _separator_gap(phrase[ends[first + 1] : starts[first]], 0 if spans else 3):
            first += 1
        return starts[first] if starts else 0
    if extractor is last_number:
        number = _last_match(_NUMBER_TOKEN, phrase)
        start = number.start() if number is not None else 0
        while start > 0 and phrase[start - 1] in _CHAIN:
            start -= 1
        return start
    return 0


def _squeeze(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _SpanIndex:
    """Whether a position of a text falls inside one of its math spans (spans found once, looked up by bisection)."""

    def __init__(self, text: str):
        self.spans = math_spans(text)
        self.starts = [start for start, _, _ in self.spans]

    @classmethod
    def of(cls, spans: list[tuple[int, int, str]]) -> _SpanIndex:
        index = cls("")
        index.spans, index.starts = spans, [start for start, _, _ in spans]
        return index

    def __call__(self, index: int) -> bool:
        i = bisect.bisect_left(self.starts, index) - 1
        return i >= 0 and index < self.spans[i][1]


def final_statement(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | Unreadable | None:
    """The last statement of the answer: the latest of the last box, the last "answer is" and the last closed
    ``<answer>`` tag. A box mid-solution followed by ``Final Answer: The final answer is $10,455$`` gives
    ``10,455``; ``The answer is 5 ... \\boxed{6}`` gives 6; ``\\boxed{18} Wait, ... the correct answer is 20.``
    gives 20, and ``\\boxed{18} Wait, I made an error. It should be 20.`` is :class:`Unreadable`."""
    last_box = next(_boxes(text), None)
    statement = _last_match(_ANSWER_IS, text)
    tag = text.rfind(_OPEN_TAG)
    close = text.find(_CLOSE_TAG, tag) if tag >= 0 else -1
    candidates = [(-1, 0, None)]  # (start, end, extractor)
    if last_box is not None:
        candidates.append((last_box[0], last_box[1], boxed))
    if statement is not None:
        sentence = _SENTENCE_BREAK.search(text, statement.end())
        candidates.append((statement.start(), sentence.end() if sentence else len(text), answer_is))
    if tag >= 0 and close >= 0:
        candidates.append((tag, close + len(_CLOSE_TAG), answer_tag))
    start, end, extractor = max(candidates, key=lambda candidate: candidate[0])
    if _open_box(text) > start:
        return Unreadable("the last box is left open: the text stops inside its answer (cut off?)")
    return None if extractor is None else unless_revised(text, end, extractor(text, max_chars))


def _open_box(text: str) -> int:
    """Start of the last box command when its brace never closes (a completion cut off inside it), else -1."""
    command, start = max(((command, text.rfind(command)) for command in _BOX_COMMANDS), key=lambda found: found[1])
    if start < 0:
        return -1
    i = start + len(command)
    while i < len(text) and text[i] in " \t":
        i += 1
    return start if i < len(text) and text[i] == "{" and _matching_brace(text, i, len(text)) is None else -1


def unless_revised(text: str, end: int, found: str | Unreadable | None) -> str | Unreadable | None:
    """``found`` (stated in ``text`` up to ``end``), unless the text after it takes it back and gives another
    number (``\\boxed{18} Wait, I made an error. It should be 20.``): then it is no final answer."""
    if not isinstance(found, str):
        return found
    retraction = next(_words_in(text, _RETRACTIONS, end), None)
    later = _later_value(text[retraction[1] :]) if retraction is not None else None
    if later is None:
        return found
    if _same_value(found, later):
        return found  # "Wait, let me check: yes, 18."
    return Unreadable(f"the stated answer {_squeeze(found)!r} is taken back after it ({text[retraction[0] : retraction[1]]!r} ...)")


def _later_value(text: str) -> str | None:
    """The last value written in ``text``: its last math span or its last number, whichever ends later."""
    number = _last_match(_NUMBER_TOKEN, text)
    spans = math_spans(text)
    if spans and (number is None or spans[-1][1] >= number.end()):
        return _clean_span(spans[-1][2])
    return None if number is None else number.group()


def _same_value(stated: str, later: str) -> bool:
    """Whether a value written after a stated answer restates it: the same spelling, the same number, or
    arithmetic that ends on it (``$2 + 3 = 5$`` after ``5`` or ``x = 5``; ``$2x = 5$`` is another claim)."""
    if "".join(stated.split()) == "".join(later.split()):
        return True
    left, _, result = later.rpartition("=")
    if left and any(char.isalpha() for char in left):
        return False
    value = stated.rsplit("=", 1)[-1]  # "x = 18": its value
    number = canonical_number(value)
    return (number is not None and canonical_number(result.replace("−", "-")) == number) or "".join(
        result.split()
    ) == "".join(value.split())


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
    if _ONE_TOKEN.fullmatch(body) or (inline and _WORD_START.match(content)):
        return True  # "$odd$", "$0xff$", "$not odd$": a currency sign comes before an amount, never before a word
    return not any(word.group().lower() not in _FUNCTION_WORDS for word in _PROSE_WORD.finditer(_TEXT_GROUP.sub(" ", body)))


def _clean_span(content: str) -> str:
    return content.strip().rstrip(".,;").strip()


def ends_inside_math(text: str) -> bool:
    """Whether the text stops inside an unclosed ``\\[``, ``\\(`` or ``$$`` (a truncated completion): its last
    span or number is then no answer (``... legs of 2 inches, so \\[ \\frac{1}{2} \\``)."""
    unclosed = _scan_spans(text).unclosed
    return unclosed is not None and unclosed[0] != "$"


def looks_truncated(text: str) -> bool:
    """Whether the text stops mid-sentence, as a completion cut at the length limit does (``... (2) Now, for
    the next part, we need to``, ``so \\[ \\frac{1}{2} \\``): its unfinished tail is no final answer. A text
    ending on punctuation, a closing bracket or dollar, a number, or a number and a few unit words
    (``so she has 12 apples left``) is finished."""
    if ends_inside_math(text):
        return True
    stripped = _SPECIAL_TOKEN.split(text, maxsplit=1)[0].rstrip()  # "... 2/3. <|im_start|>user": the turn ended
    if not stripped or not stripped[-1].isalpha():
        return bool(stripped) and stripped[-1] in _UNFINISHED  # "so x =", "we get:", "which gives \\"
    breaks = deque(_SENTENCE_BREAK.finditer(stripped), maxlen=1)
    sentence = stripped[breaks[0].end() :] if breaks else stripped
    number = _last_match(_NUMBER_TOKEN, sentence)
    if number is None:
        return True
    after = sentence[number.end() :]
    words = after.split()
    return len(words) > 3 or "," in after or any(word.lower() in _NOT_UNITS or word.lower() in _SHORT_PROSE for word in words)


def after_statement(text: str) -> str:
    """The text after the last "the answer is" (all of it when there is none): when that statement holds
    no value (``the answer is:`` then a display on the next line), the answer can only come after it."""
    statement = _last_match(_ANSWER_IS, text)
    return text if statement is None else text[statement.end() :]


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
    parts, gaps, first = [_clean_span(spans[-1][2])], [], spans[-1][0]
    for (start, end, content), (next_start, _, _) in zip(reversed(spans[:-1]), reversed(spans[1:]), strict=True):
        if not _separator_gap(text[end:next_start], other_words=0):
            break
        parts.append(_clean_span(content))
        gaps.append(text[end:next_start])
        first = start
    if _modified(text, first, spans[-1][1]):
        return None  # "It cannot be $15\\%$.", "twice $x$": the value is not the answer, and no other is
    return _bounded(_joined(parts, gaps), max_chars)


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
    worded = number_in_words(stripped)
    if worded is not None:
        return worded
    without_text = _TEXT_GROUP.sub(" ", stripped)
    words = [word.lower() for word in _WORD.findall(without_text)]
    content_words = [word for word in words if word not in _SEPARATORS and word not in _FUNCTION_WORDS]
    content_words += [word for word in _SHORT_WORD.findall(without_text) if word.lower() in _SHORT_PROSE]  # "So x = 5"
    one_word = len(words) == 1 and stripped.strip("$.() ").lower() == words[0]
    if not content_words or one_word or number_before_unit(stripped) is not None:
        return _bounded(stripped, max_chars)
    return None


def number_in_words(text: str) -> str | None:
    """The number a text spells out in words, followed by at most a few unit words, as digits (else None):
    ``fifty-two`` -> ``52``, ``**Twelve** apples`` -> ``12``, ``two thirds`` -> ``2/3``, ``\\text{seventy six}``
    -> ``76``; ``one of the following``, ``two or three``, ``5 apples`` (digits) -> None."""
    if len(text) > _MAX_WORDED_CHARS:
        return None
    cleaned = _LATEX_WRAPPERS.sub(r" \1 ", text).replace("*", " ").replace("$", " ").strip(" \t.!,;:\"'")
    if not cleaned or not _WORDS_ONLY.fullmatch(cleaned):
        return None
    words = cleaned.split()
    for k in range(min(len(words), MAX_WORDS), 0, -1):
        rest = [word.lower() for word in words[k:]]
        if len(rest) > 3 or any(w in NUMBER_WORDS or w in _NOT_UNITS or not is_unit_word(w) for w in rest):
            continue
        value = words_to_number(" ".join(words[:k]))
        if value is not None:
            return str(value)
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
_MAX_WORDED_CHARS = 200  # "nine hundred ninety-nine thousand ..." and a few unit words fit
_WORDS_ONLY = re.compile(r"[A-Za-z][A-Za-z\-\s]*")
# Words after a number in words that make it no answer: "one of the following", "two to the power".
_NOT_UNITS = frozenset("of the a an to in on at by for from with is are was were be that which who and it its each".split())
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
    offset = last.end() if last is not None else 0
    for start, end in _words_in(text, NUMBER_WORDS, offset, reverse=True):  # the last one used as a number
        phrase = next(p for p in _NUMBER_PHRASE.finditer(text, max(offset, start - 120), end + 120) if p.end() >= end)
        if _counts_as_number(text, phrase.start(), phrase.end()):  # "so she has fifty-two", "Four containers were"
            return _worded_number(text, phrase, max_chars)
    if last is None:
        return None
    start = last.start()
    if text[start] in "-+−" and start > 0 and (text[start - 1].isalnum() or text[start - 1] in ")}]"):
        start += 1  # a binary minus or plus, not a sign
    if not _stands_alone(text, start, last.end()) or _label(text, start, last.end()):
        return None
    return _bounded(text[start : last.end()], max_chars)


def _words_in(text: str, words: Iterable[str], start: int = 0, *, reverse: bool = False) -> Iterator[tuple[int, int]]:
    """(start, end) of each occurrence of ``words`` (case aside, as whole words) from ``start``, in text order
    (or from the end). String search, not a regex alternation: linear with a small constant on megabytes of
    text, and lazy: the first occurrences cost only their own search."""
    lower = text.lower()
    step = (lambda word, i: lower.rfind(word, start, i)) if reverse else (lambda word, i: lower.find(word, i))
    cursor = {word: step(word, len(lower) if reverse else start) for word in words}
    while True:
        live = [(i, word) for word, i in cursor.items() if i >= 0]
        if not live:
            return
        i, word = max(live) if reverse else min(live)
        j = i + len(word)
        cursor[word] = step(word, i + len(word) - 1) if reverse else step(word, j)
        if not (i and lower[i - 1].isalpha()) and not (j < len(lower) and lower[j].isalpha()):
            yield i, j


def _worded_number(text: str, phrase: re.Match[str], max_chars: int | None) -> str | None:
    """The last number of a text when it is written in words (``Ten men can``): its digits, unless it is
    hedged (``twenty or more``) or no well-formed number: never an earlier number instead."""
    value = words_to_number(phrase.group())
    if value is None or _hedged(text, phrase.start(), phrase.end()):
        return None
    return _bounded(str(value), max_chars)

def _label(text: str, start: int, end: int) -> bool:
    """``(2) Now, for the next part``, ``2. Next, we``, ``Step 2:``, ``Case 2``: the number labels what follows."""
    before = _WORD_BEFORE.search(text, max(0, start - 14), start)
    if before is not None and before.group(1).lower() in _LABEL_WORDS:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    opening = text[line_start:start].strip()
    after = text[end : end + 5].replace("*", "")[:3]  # "**2.** Then"
    if opening in ("", "(", "**", "**(") and after[:1] in ".)" and after[1:2] in (" ", "\t") and after[2:3].strip():
        return True  # "2. Next" or "2) Next" or "(2) Next" at the start of a line
    return text[start - 1 : start] == "(" and after[:1] == ")" and after[1:2] == " " and after[2:3].isupper()


def _counts_as_number(text: str, start: int, end: int) -> bool:
    """Whether the number words at ``text[start:end]`` are used as a number: not after a determiner (``the
    three given conditions``, ``each one``), not before "of" (``one of them``), and ``one`` not as a pronoun
    (``one another``, ``one by one``)."""
    before = _WORD_BEFORE.search(text, max(0, start - 14), start)
    if before is not None and before.group(1).lower() in _DETERMINERS:
        return False
    after = _NEXT_WORD.match(text, end)
    following = after.group(1).lower() if after is not None else ""
    return following != "of" and (text[start:end].lower() != "one" or following not in _PRONOUN_AFTER)


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


def _modified(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]`` is denied or made into another value by the words around it
    (``cannot be 25``, ``twice $x$``, ``the square root of $25$``, ``$5$ million``, ``$\\frac{9}{16}$ times ten``)."""
    if _NOT_THE_VALUE.search(text, max(0, start - _MODIFIER_WINDOW), start):
        return True
    word = _NEXT_WORD.match(text, end)
    return word is not None and word.group(1).lower() in _VALUE_WORDS


def _hedged(text: str, start: int, end: int) -> bool:
    """``5 or more``, ``2 million``, ``3 times``, ``5 or 6``, ``10 minus 3``, ``at least 5``, ``n \\ge 3``: the
    number is hedged, scaled or a bound (it is not the answer), or an operand of arithmetic (``16 - 3``,
    ``9 * 2``: only a result after ``=`` is)."""
    before = _WORD_BEFORE.search(text, max(0, start - 14), start)
    if before is not None and before.group(1).lower() in _SCALING_BEFORE:
        return True
    if _BOUND_BEFORE.search(text, max(0, start - 12), start) or _modified(text, start, end):
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
    text = visible(text)
    for name in extractors:
        answer = EXTRACTORS[name](text, max_chars)
        if isinstance(answer, Unreadable):
            return Unreadable(answer.reason, name)  # a stated answer the reader refuses: no falling back
        if answer is not None:
            return Extraction(answer, name)
    return None


def visible(text: str) -> str:
    """``text`` as a reader sees it: without the characters that show nothing (zero-width spaces, soft hyphens,
    direction marks), which would otherwise hide an "or" or a "wait" from the reader."""
    return text if text.isascii() else _INVISIBLE.sub("", text)


# ----- normalisation ---------------------------------------------------------------------------------

_ROOTS = {"√": "\\sqrt", "∛": "\\sqrt[3]", "∜": "\\sqrt[4]"}
_ROOT = re.compile(r"([√∛∜])\s*(\{[^{}]*\}|\([^()]*\)|\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z])")
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+")
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_UNICODE_SYMBOLS = str.maketrans({
    "∞": "\\infty ", "π": "\\pi ", "×": "\\times ", "·": "\\cdot ", "⋅": "\\cdot ", "÷": "\\div ", "≤": "\\le ",
    "≥": "\\ge ", "≠": "\\ne ", "±": "\\pm ", "∓": "\\mp ", "−": "-", "∪": "\\cup ", "∩": "\\cap ", "∈": "\\in ",
    "√": "\\sqrt ", "½": "\\frac{1}{2}", "⅓": "\\frac{1}{3}", "⅔": "\\frac{2}{3}", "¼": "\\frac{1}{4}",
    "¾": "\\frac{3}{4}", "θ": "\\theta ", "α": "\\alpha ", "β": "\\beta ",
})  # fmt: skip
_LATEX_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_LATEX_NOISE = re.compile(r"\\left|\\right|\\[,;:! ]|\^\s*\{?\\circ\}?|\\displaystyle")
_THOUSANDS_MARK = re.compile(r"\{\s*,\s*\}|,\s*\\!\s*")  # 8{,}000 and 12,\!000 are 8,000 and 12,000
_NUMBER_LITERAL = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?")
_MAX_EXPONENT = 100
_EXACT = Context(prec=200)  # no rounding: canonical forms of distinct numbers must differ
# Kept by punctuation stripping: "-x" is not "x", "x-1" is not "x+1", "[0, 1)" is not "(0, 1)".
_OPERATORS = frozenset("+-*/^=<>()[]&|")  # | too: |-267| is not -267
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
        """Strip LaTeX wrappers (unicode math read as LaTeX), canonicalise numbers (``1,000`` =
        ``8{,}000``-style = ``1000.0`` = ``1e3`` = ``one thousand``), else drop punctuation (not signs,
        operators, brackets, primes or the ``&`` and ``\\\\`` of a matrix: ``E'`` is not ``E``, a row is
        not a column), fold case and collapse whitespace."""
        text = unicode_to_latex(answer) if self.latex else answer
        text = unicodedata.normalize("NFKC", text).replace("\u2212", "-").strip()  # U+2212 minus sign
        text = text.replace("\\\\", " \u21b5 ")  # a matrix row break survives as a symbol of its own (not "\\ ")
        if self.latex:
            text = strip_latex(text)
        if self.numbers:
            number = canonical_number(text) or canonical_number(number_in_words(text) or "")
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


def unicode_to_latex(text: str) -> str:
    """Unicode math as LaTeX: ``2√3`` -> ``2\\sqrt{3}``, ``√(x+1)`` -> ``\\sqrt{x+1}``, ``(−∞, 3)`` ->
    ``(-\\infty, 3)``, ``3π`` -> ``3\\pi``, ``x²`` -> ``x^{2}``, ``½`` -> ``\\frac{1}{2}``, ``≤`` -> ``\\le``."""
    if text.isascii():
        return text
    text = _ROOT.sub(lambda root: _ROOTS[root.group(1)] + "{" + root.group(2).strip("{}()") + "}", text)
    text = _SUPERSCRIPTS.sub(lambda digits: "^{" + digits.group().translate(_SUPERSCRIPT_DIGITS) + "}", text)
    return text.translate(_UNICODE_SYMBOLS)


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
