"""Answer statements: the ``<answer>`` tag, GSM8K's ``####``, "the answer is ..." in any language of the
lexicon, the last statement of a completion, and a stated answer taken back after it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from .. import lexicon
from ..number_words import without_measure_word
from .answers import (
    _EITHER,
    HEDGE,
    MAX_ANSWER_CHARS,
    OR,
    Unreadable,
    _bounded,
    _last_match,
    _squeeze,
    bracket_depths,
    has_digit,
)
from .boxes import _BOX_COMMANDS, _boxes, _open_box, _separator_gap, boxed
from .following import CONCESSION, following
from .normalize import canonical_number
from .numbers import (
    _NUMBER_TOKEN,
    _SENTENCE_BREAK,
    _WORD,
    _modified,
    bare,
    last_math,
    last_number,
    number_in_words,
)
from .spans import _clean_span, _scan_spans, _SpanIndex, math_spans

__all__ = ["after_statement", "answer_is", "answer_tag", "final_places", "final_statement", "gsm8k", "has_phrase",
           "last_phrase", "open_answer_tag", "read_answer", "unless_hedged", "unless_revised", "without_denied_value"]

_OPEN_TAG, _CLOSE_TAG = "<answer>", "</answer>"
# "the answer is", "Answer:", "the answer (arabic numerals) is": a short remark may stand between; also "**Answer**:
# 12", "the answer would be 12", and "The answers are 4 and 5.". Two patterns that never overlap, each read on its
# own: an alternation would try both at every character, and a lookbehind opening a pattern at every character too
# (``t(?<![A-Za-z]t)he`` is ``(?<![A-Za-z])the``, tried only where a ``t`` stands).
_ANSWER_IS = (
    re.compile(r"answer\**\s{0,5}(?:\([^()\n]{1,40}\)\s{0,5})?(?:(?:is|(?:would|should|will|must|could|might|may) be)\b:?|:)",
               re.IGNORECASE),
    re.compile(r"t(?<![A-Za-z]t)he\s+answers\s+are\b:?", re.IGNORECASE),
)
# In the other languages of the lexicon ("答案是", "Die Antwort ist", "Ответ:", "答えは", "정답은"), found by string
# search (a regex alternation of every phrase would cost a pass per phrase at every position).
_OTHER_LANGUAGES = tuple(language for language in lexicon.LANGUAGES if language != "en")


class _Statement(NamedTuple):
    """Where the last answer phrase is (the shape of a match: ``start()``, ``end()``)."""

    begin: int
    finish: int

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish


@functools.lru_cache(maxsize=256)
def _last_statement(text: str) -> _Statement | None:
    """The last "the answer is" of ``text`` in any language of the lexicon (the later one where both are).
    Remembered for the last texts read: one completion's reading asks for it several times."""
    found = [(match.start(), match.end()) for match in _english_statements(text) if match is not None]
    other = lexicon.find_last(text, "answer_phrases", max(found)[0] if found else 0, _OTHER_LANGUAGES)  # the later one
    found += [(other[0], other[1])] if other is not None else []
    return _Statement(*max(found)) if found else None


def has_phrase(text: str) -> bool:
    """Whether ``text`` holds an answer phrase ("the answer is" in any language of the lexicon)."""
    return _last_statement(text) is not None


def last_phrase(text: str) -> tuple[int, int] | None:
    """Where the last answer phrase of ``text`` starts and ends (the words "the answer is", not what they state)."""
    found = _last_statement(text)
    return None if found is None else (found.begin, found.finish)


def _english_statements(text: str) -> list[re.Match[str] | None]:
    """The last match of each of ``_ANSWER_IS``. In ASCII text each is looked for only from the first "answer"
    (every match holds one; the second pattern "answers"), so a text without one costs a string search."""
    if not text.isascii():
        return [_last_match(pattern, text) for pattern in _ANSWER_IS]
    lower = text.lower()
    first = lower.find("answer")
    if first < 0:
        return []
    return [_last_match(_ANSWER_IS[0], text, first), _last_match(_ANSWER_IS[1], text) if "answers" in lower else None]


# "another valid answer is", "an alternative answer would be", "the other possible answer is": a second answer.
_ANOTHER_ANSWER = re.compile(r"(?<![A-Za-z])(?:another|alternative|alternate|other|second|also)(?:\s+[A-Za-z]+)?\s+$",
                             re.IGNORECASE)  # fmt: skip
_SENTENCE_END = re.compile(r"\.(?:\s|$)|[。！？]")
_HOPE = "i hope it is correct"  # the MATH few-shot sign-off, found case-insensitively
_QUOTES = re.compile(r'^(?:\\?["\u201c\u201d])+|(?:\\?["\u201c\u201d])+$')  # "12 and 13" quoted
_REMARK = re.compile(r"(?<!\s)\s*(?<!\\)\(([^()\\]*)\)$")  # "-\\frac{\\pi}{6} (without quotes)": when it holds a word
_REMARK_WORD = re.compile(r"[A-Za-z]{3}")
_COPULA = re.compile(r"\b(?:is|are|was|were|equals)\b")
# What follows the answer in its sentence to justify it is no answer: "12 because there are 3 boxes".
_REASON = re.compile(r"(?:,\s*|(?<!\s)\s*\(\s*|(?<!\s)\s+)(?:since|because|as|which|where|given|when|while|i\.e\.|e\.g\.|hence|thus"
                     r"|so that)\b", re.IGNORECASE)  # fmt: skip
# "12 (or possibly 13)", "12 (oder vielleicht 13)", "12 (maybe 13)" offer 13 too
_OR_REMARK = re.compile(rf"(?<!\s)\s*\(\s*((?:and/)?(?:{HEDGE}|{lexicon.pattern('hedge_adverbs')})[^()]*)\)", re.IGNORECASE)
# Between the values a phrase offers: "or" in any language (and "and/or"), and "but" or "although" (a correction or
# a concession offers a second value: "$7$, although 49 is also possible"; with no value after it, a remark).
# Opens only where a run of spaces opens, and no two quantifiers share a character: linear on any run of spaces.
_PHRASE_SEPARATOR = re.compile(
    rf"(?<!\s)\s*(?:,\s*)?(?:{HEDGE}|(?<![A-Za-z\\])(?P<but>but|{CONCESSION})(?![A-Za-z]))\s*", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_HEDGED_TAIL = re.compile(f"{HEDGE}|{lexicon.pattern('hedge_adverbs')}", re.IGNORECASE)
_CHAIN = frozenset("0123456789 .,+-*/×÷=^()·")  # the arithmetic that ends on a result: "16 - 3 - 4 = 9"
# Words and signs before a value that make it a bound or an estimate: "at least 5", "about 5", "x \ge 3".
_BOUND = re.compile(r"(?<![A-Za-z])(?:at least|at most|more than|less than|fewer than|greater than|no more than|up to)"
                    r"(?![A-Za-z])", re.IGNORECASE)  # fmt: skip (an estimate, "approximately 3.14", is a rounded answer)
# A value the statement denies after its answer, ending it: "71, not 47", "71, nicht 47", "71，不是47" (a contrast that
# names the wrong value, not a second answer). Languages that deny a value after it (ja, ko) write it before.
_WRITTEN_VALUE = r"\$[^$]{1,200}\$|\\\([^()]{1,200}\\\)|[-−]?\d[\d.,/]*"  # a math span or a number
_DENIED_VALUE = re.compile(  # one class per run of separators: no two quantifiers share a character
    r"[\s,;，；、]*(?:(?:and|but|und|aber|et|mais|и|а)\s+)?"
    + lexicon.pattern("negations", tuple(language for language in lexicon.LANGUAGES if language not in ("ja", "ko")))
    + rf"\s*(?P<value>{_WRITTEN_VALUE})[\s.!。！]*$",
    re.IGNORECASE,
)
_DENIAL_REACH = 320  # the last characters of a phrase where a denial that ends it is looked for
_LAST_VALUE = re.compile(rf"(?:{_WRITTEN_VALUE})$")
_VALUE_REACH = 210  # the characters a written value may take (a span of 200 and its delimiters)
_HEDGE_WORDS = frozenset({"more", "less", "fewer", "greater", "smaller", "higher", "lower", "above", "below", "so",
                          "something", "anything", "other", "else", "not", "none", "nothing"})  # fmt: skip


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
    end = close + len(_CLOSE_TAG) if text.startswith(_CLOSE_TAG, close) else close
    return unless_revised(text, end, _bounded(content.strip(), max_chars) if found is None else found, max_chars)


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
    words = _stated_words(text)
    if not isinstance(words, str):
        return words
    unbounded = _unbounded_phrase(words)
    if max_chars is None or (isinstance(unbounded, str) and len(unbounded) <= max_chars):
        return unbounded  # each reading joined in it is shorter, so the bound changed none of them: the same reading
    return _read_phrase(words, max_chars)  # a bound may have turned a reader to the next one: read again under it


@functools.lru_cache(maxsize=256)
def _unbounded_phrase(words: str) -> str | Unreadable | None:
    """:func:`_read_phrase` of ``words`` at no length bound, remembered: the checks of a final answer read its
    statement again, under the bound of the reward."""
    return _read_phrase(words, None)


@functools.lru_cache(maxsize=256)
def _stated_words(text: str) -> str | Unreadable | None:
    """The words :func:`answer_is` reads its answer from (a str), else its verdict without them (None,
    :class:`Unreadable`): what holds at any length bound, remembered for the last texts read (a completion's
    final statements are read again, under another bound, by the readers that check them)."""
    last = _last_statement(text)
    if last is None:
        return None
    if _ANOTHER_ANSWER.search(text, max(0, last.start() - 40), last.start()):
        return Unreadable(f"another answer offered beside a first one: {_squeeze(text[max(0, last.start() - 40) : last.end() + 40])!r}")
    line_end = text.find("\n", last.end())
    rest = text[last.end() : line_end if line_end >= 0 else len(text)]
    if rest.count("$") <= 1 and not rest.strip(" \t*$"):
        return None  # only spaces, bold marks and one "$" follow the phrase on its line (a text cut before the box
        # it opens): the steps below would leave "" or "$" of it, and neither reads as a value (told at once)
    hope = rest.lower().find(_HOPE)
    rest = rest[:hope] if hope >= 0 else rest
    inside = _SpanIndex(rest)
    sentence_end = next((m.start() for m in _SENTENCE_END.finditer(rest) if not inside(m.start())), len(rest))
    rest = rest[:sentence_end]
    rest = rest[: _correction_at(rest, 0, len(rest))]  # "Antwort: 196 Moment, das ist falsch": the words before it
    reason = next((m for m in _REASON.finditer(rest) if not inside(m.start()) and _holds_value(rest[: m.start()])), None)
    condition = next(lexicon.find(rest, "conditions"), None) if _WORD.search(rest) else None
    if condition is not None and _holds_value(rest[: condition[0]]) and (_offers_value(rest[condition[1] :]) or (
            reason is not None and reason.start() < condition[0] and _offers_value(rest[reason.end() : condition[0]]))):
        return Unreadable(f"a conditional answer: {_squeeze(rest)!r}")  # "12 unless it is 7", "250, in which case it is 248, depending on"
    rest = rest if reason is None else rest[: reason.start()]
    copula = None
    for match in _COPULA.finditer(rest):
        if not inside(match.start()):
            copula = match
    if copula is not None and rest[copula.end() :].strip(" \t:*") and not _DIGIT.search(rest[: copula.start()]):
        rest = rest[copula.end() :]  # "The volume of $ABCD$ is 120": what the subject is
    rest = _OR_REMARK.sub(r" \1", rest.lstrip(" \t:*}").rstrip(" \t*.,;").strip(" \t*"))
    remark = _REMARK.search(rest)
    rest = rest[: remark.start()] if remark is not None and _REMARK_WORD.search(remark.group(1)) else rest
    rest = without_denied_value(_QUOTES.sub("", rest))
    outside = "".join(rest[i] for i in range(len(rest)) if not inside(i)) if "?" in rest or _BOUND.search(rest) else ""
    if "?" in outside:
        return Unreadable(f"the answer is asked, not stated: {_squeeze(rest)!r}")
    if _BOUND.search(outside):
        return Unreadable(f"a bound or an estimate, not a value: {_squeeze(rest)!r}")
    return rest


def without_denied_value(phrase: str) -> str:
    """``phrase`` without the value it denies at its end after its own value (``71, not 47`` -> ``71``,
    ``$x = 4$, not 2.`` -> ``$x = 4$``); as written when it ends otherwise, holds no value before the denial, or
    denies the very value it states (``71, not 71``: a contradiction, no answer)."""
    start = max(0, len(phrase) - _DENIAL_REACH)
    denied = _DENIED_VALUE.search(phrase, start)
    if denied is None or not _holds_value(kept := phrase[: denied.start()]):
        return phrase
    stated = _LAST_VALUE.search(kept.rstrip(" ,;，；、")[-_VALUE_REACH:])
    same = stated is not None and "".join(stated.group().split()) == "".join(denied.group("value").split())
    return phrase if same else kept


_CORRECTION_REACH = 160  # a correction that ends a statement follows its value closely
_VALUE_MARK = re.compile(r"[\d$\\]")  # where a value may start: a digit, math


def _correction_at(text: str, start: int, end: int) -> int:
    """Where a correction opens a new clause inside ``text[start:end]`` (the words of one answer statement) after a
    value (``196 Moment, das ist falsch``, ``595 Attends, ...``, ``595 いや、...``: capitalised, or in a script with no
    case), else ``end``: the statement states what comes before it, and the correction takes it back."""
    words = text[start : min(end, start + _CORRECTION_REACH)]
    value = _VALUE_MARK.search(words)
    if value is None or not _capital_or_caseless(words[value.end() :]):
        return end  # "$12$.", "12 instead of 13": no clause opens after the value
    for at, _, _ in lexicon.find(words, "corrections", value.end()):
        if not words[at].islower() and _holds_value(words[:at]):
            return start + at
    return end


def _capital_or_caseless(text: str) -> bool:
    """Whether a letter of ``text`` is no lowercase one: a capital, or a letter of a script without case (in ASCII
    text, one that lowercasing changes: told in C)."""
    if text.isascii():
        return text != text.lower()
    return any(char.isalpha() and not char.islower() for char in text)


def statement_end(text: str, start: int) -> int:
    """Where the answer stated by an answer phrase ending at ``start`` ends: its sentence's end, or the correction
    that opens a clause inside that sentence."""
    sentence = _SENTENCE_BREAK.search(text, start)
    return _correction_at(text, start, sentence.end() if sentence else len(text))


def _holds_value(text: str) -> bool:
    return has_digit(text) or "$" in text or "\\" in text or bool(_WORD.search(text))


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


def _split_outside_spans(phrase: str, spans: Sequence[tuple[int, int, str]]) -> list[tuple[str, str]]:
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
            start, separator = match.end(), "but" if match.group("but") else "or"
    pieces.append((separator, phrase[start:]))
    pieces[0] = ("", _EITHER.sub("", pieces[0][1]))
    return pieces


def _read_value(
    phrase: str, max_chars: int | None, spans: Sequence[tuple[int, int, str]] | None = None
) -> str | Unreadable | None:
    """One value in a phrase (``spans``: its math spans, when known): one math span, a number in words, a box,
    the spans, a bare answer, a number; :class:`Unreadable` when the phrase holds other values besides."""
    lead = len(phrase) - len(phrase.lstrip(" \t,;"))
    phrase = phrase.strip(" \t,;")
    phrase = without_measure_word(phrase)  # "(12,-11) 입니다", "(-15,-2)です": the copula after the value goes
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


def final_statement(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | Unreadable | None:
    """The last statement of the answer: the latest of the last box, the last "answer is" and the last closed
    ``<answer>`` tag. A box mid-solution followed by ``Final Answer: The final answer is $10,455$`` gives
    ``10,455``; ``The answer is 5 ... \\boxed{6}`` gives 6; ``\\boxed{18} Wait, ... the correct answer is 20.``
    gives 20, and ``\\boxed{18} Wait, I made an error. It should be 20.`` is :class:`Unreadable`."""
    places = final_places(text)
    start, end, extractor = places[-1] if places else (-1, 0, None)  # the latest (they come in text order)
    if _open_box(text) > start:
        return Unreadable("the last box is left open: the text stops inside its answer (cut off?)")
    if extractor is None:
        return None
    found = extractor(text, max_chars)
    return found if extractor is answer_tag else unless_revised(text, end, found, max_chars)  # the tag reads its own


def final_places(text: str, phrases: bool = True) -> tuple[tuple[int, int, Callable[..., str | Unreadable | None]], ...]:
    """Where the last box, the last answer phrase (to the end of its sentence, or a correction inside it) and the
    last closed ``<answer>`` tag of ``text`` stand, in text order (no two start together: a box opens with ``\\``,
    a tag with ``<``, a phrase with a letter), each with its reader: (start, end, reader). ``phrases=False``: the
    caller knows the text holds no answer phrase (none is looked for). Remembered for the last texts read: the
    checks of a final answer look for the same statements again."""
    return _final_places(text, phrases)  # one memo key however a caller passes ``phrases``


@functools.lru_cache(maxsize=256)
def _final_places(text: str, phrases: bool) -> tuple[tuple[int, int, Callable[..., str | Unreadable | None]], ...]:
    found = []
    last_box = next(_boxes(text), None)
    if last_box is not None:
        found.append((last_box[0], last_box[1], boxed))
    statement = _last_statement(text) if phrases else None
    if statement is not None:
        found.append((statement.start(), statement_end(text, statement.end()), answer_is))
    tag = text.rfind(_OPEN_TAG)
    close = text.find(_CLOSE_TAG, tag) if tag >= 0 else -1
    if tag >= 0 and close >= 0:
        found.append((tag, close + len(_CLOSE_TAG), answer_tag))
    return tuple(sorted(found, key=lambda place: place[0]))


def unless_revised(
    text: str, end: int, found: str | Unreadable | None, max_chars: int | None = MAX_ANSWER_CHARS
) -> str | Unreadable | None:
    """``found`` (stated in ``text`` up to ``end``), unless the text after it takes it back (a correction of the
    lexicon, in any of its languages) and gives another value: then the corrected value when the correction
    ends the text on one value that stands alone (``\\boxed{18} Wait, I made an error. It should be 20.`` is 20),
    else no final answer (:class:`Unreadable`). An answer that stands is read with the values offered right
    after it (:func:`unless_hedged`)."""
    if not isinstance(found, str):
        return found
    retraction = next(lexicon.find(text, "corrections", end), None)
    tail = text[retraction[1] :] if retraction is not None else ""
    spans = math_spans(tail)
    later = _later_value(tail, spans) if retraction is not None else None
    if later is None:
        return unless_hedged(text, end, found, max_chars)
    if _same_value(found, later):
        return unless_hedged(text, end, found, max_chars)  # "Wait, let me check: yes, 18."
    corrected = _corrected_value(tail, spans)
    if corrected is not None:
        return corrected  # "Scratch that, I miscounted: it's 432.", "不对，重新算一下，应该是 13。"
    return Unreadable(f"the stated answer {_squeeze(found)!r} is taken back after it ({text[retraction[0] : retraction[1]]!r} ...)")


def unless_hedged(text: str, end: int, found: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | Unreadable:
    """``found`` (stated in ``text`` up to ``end``) with the values the words right after it offer beside it
    (:func:`following`): ``\\boxed{12}. Or 13.``, ``12 (or possibly 13)``, ``Antwort: 12. Oder vielleicht 13.`` offer
    ``12 or 13`` (each value must be right); a condition with a value (``\\boxed{12}, unless it is 7``) or a hedge
    whose other side is no value (``12. Or more.``) states no single value (:class:`Unreadable`)."""
    offer = following(text, end)
    if offer is None:
        return found
    words = text[offer.start : offer.end]
    if not _offers_value(words):
        first = words.split()[0].lower().strip(".,;") if words.split() else ""
        if offer.kind == "hedge" and first in _HEDGE_WORDS and len(words.split()) == 1:  # not "Or so I think."
            return Unreadable(f"a hedge after the answer: {_squeeze(offer.opening + words)!r} offers no single value")
        return found  # "12, unless I made an error": no other value offered
    if offer.kind == "condition":
        return Unreadable(f"a conditional answer: {_squeeze(found)!r} only {offer.opening!r} {_squeeze(words)!r}")
    other = _read_phrase(words, max_chars)
    if not isinstance(other, str):
        why = other.reason if isinstance(other, Unreadable) else f"{_squeeze(words)!r} is no value"
        return Unreadable(f"a hedge after the answer {_squeeze(found)!r} ({offer.opening!r}): {why}")
    return _bounded(found + OR + other, max_chars) or Unreadable(f"a hedge after the answer {_squeeze(found)!r}: too long")


def _offers_value(words: str) -> bool:
    """Whether words offer a value: a digit, math, or a number in words."""
    return bool(_DIGIT.search(words)) or "$" in words or "\\" in words or number_in_words(words) is not None


def _corrected_value(tail: str, spans: list[tuple[int, int, str]]) -> str | None:
    """The one value a correction gives: the only math span or number of ``tail``, standing alone and ending the
    text (at most a few words after it, such as a unit); None when the tail holds several values or goes on."""
    if len(spans) > 1:
        return None
    inside = _SpanIndex.of(spans)
    outside = []
    for number in _NUMBER_TOKEN.finditer(tail):
        if not inside(number.start()):
            outside.append(number)
            if len(spans) + len(outside) > 1:
                return None
    if len(spans) + len(outside) != 1:
        return None
    if spans:
        start, end, content = spans[0]
        value = _clean_span(content) if not _modified(tail, start, end) else None
    else:
        start, end = outside[0].span()
        value = last_number(tail, None)
    if value is None or len(tail[end:].split()) > 3 or _HEDGED_TAIL.search(tail):
        return None
    return value


def _later_value(text: str, spans: list[tuple[int, int, str]]) -> str | None:
    """The last value written in ``text`` (``spans``: its math spans): its last math span or its last number,
    whichever ends later."""
    number = _last_match(_NUMBER_TOKEN, text)
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


def after_statement(text: str) -> str:
    """The text after the last "the answer is" (all of it when there is none): when that statement holds
    no value (``the answer is:`` then a display on the next line), the answer can only come after it."""
    statement = _last_statement(text)
    return text if statement is None else text[statement.end() :]
