"""Unmarked answers: a bare answer (a short line of math, a word, a number and its unit), the last number
that stands alone (in digits or in words), the last math span, and whether the text was cut off.

A number is no answer when it is hedged, scaled, bounded, denied or an operand of arithmetic; every
function here is linear in the text.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections import deque
from collections.abc import Iterator

from .. import lexicon
from ..number_words import MAX_WORDS, NUMBER_WORDS, SCALE_CHAR, cjk_number, words_to_number
from .answers import HEDGE, MAX_ANSWER_CHARS, _bounded, _last_match, has_digit
from .boxes import _SEPARATORS, _joined, _separator_gap
from .spans import _FUNCTION_WORDS, _TEXT_GROUP, _clean_span, _scan_spans, ends_inside_math, math_spans

__all__ = ["bare", "is_unit_word", "last_math", "last_number", "looks_truncated", "number_before_unit", "number_in_words", "whole"]

_MAX_BARE_CHARS = 200  # a whole text longer than this is not "a bare answer"
_SENTENCE_BREAK = re.compile(r"[.!?](?:\s|$)|\n|[。！？]")
# Right before a number: a relation that makes it a bound ("n \ge 3", "x < 5", "\approx 2.7"), not the value.
_BOUND_BEFORE = re.compile(r"(?:\\(?:geq?|leq?|gt|lt|neq?)(?![A-Za-z])|[<>≥≤≠])\s*\$?\s*$")
_UNFINISHED = frozenset(",:;=+-/\\({[&^_|<\u2013\u2014")  # a text ending on these was cut off mid-sentence
_SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_]+\|>")  # chat template tokens: <|im_start|>, <|endoftext|>
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z])|[^\W\d_A-Za-z]{2,}")  # ASCII words; runs of other letters
_SHORT_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2}(?![A-Za-z])")
_SHORT_PROSE = frozenset("so is of to in on at it be as by an we if no do my".split())  # two-letter English words
# A number as written in text: 1,250.5 / 12,\!000 / 8{,}000 / 2,74 (decimal comma) / 3/4 / .5 / 2 1/2
# "2 1/2" and "8 and 1/4" are one number (mixed). Digit groups: 1,250 / 12,\!000 / 8{,}000 / Swiss 7'610'539 / Indian 76,10,539.
_NUMBER_TOKEN = re.compile(
    r"[-+−]?(?:(?<!\d)\d{1,9} (?:and )?\d{1,9}/\d+(?![\d/])|(?:(?:\d{1,2}(?:,\d{2})+,\d{3}(?!\d)|(?<!\d)(?<!\d )\d{1,3}(?: \d{3})+(?![\d,])|\d+(?:(?:,|\{,\}|,\\!|['’])\d{3})+(?!\d)|(?<![\d,])\d+,\d{1,2}(?![\d,])|\d+)(?:\.\d+)?|\.\d+)(?:/\d+)?)"
)  # "2 1/2" is one number (two and a half)
# A number in scientific notation: "5e-8", "1.48E+29", "5.29 \\times 10^{-11}", "5.29 x 10^{-11}" (superscript
# exponents read as ^{-11} by the text layer): one number, never its exponent alone. A match starts only where a
# run of digits starts and never gives digits back (possessive): linear on a megabyte of digits.
_SCIENTIFIC = re.compile(
    r"(?<![\d.])[-+−]?\d++(?:\.\d++)?(?:[eE][-+]?\d{1,3}(?!\w|\.\d)"
    r"|\s*(?:\\times|\\cdot|×|·|x|\*)\s*10\s*\^\s*(?:\{\s*[-+−]?\d{1,3}\s*\}|[-+−]?\d))"
)
# A unit symbol ending the sentence after the last number ("3180 min.", "5 km/h", "25 cm^2"): kept with it.
_UNIT_ENDING = re.compile(r"[ \t]?([A-Za-zµμΩ]{1,3}(?:\^\{?-?\d\}?)?(?:/[A-Za-z]{1,3})?)(?=[ \t]*(?:[.!?,;)]|$))")
_UNIT_POWER = re.compile(r"(?<![A-Za-z])[A-Za-zµμΩ]{1,4}\^\{?-?$")  # "m^" right before the last number: m^2
_UNIT_AFTER_NUMBER = re.compile(r"(?:cm|mm|km|kg|mg|ml|mph|min|m|g|s|h|l)(?![A-Za-z])")
_WORD_BEFORE = re.compile(r"([A-Za-z']+)\s{1,3}$")
# "10 minus 3", "more than 5", "5 or 6", "not 12": the number after these words is not the answer
_SCALING_BEFORE = frozenset({"or", "minus", "plus", "times", "than", "over", "not", "never", "isn't", "aren't", "wasn't",
                             "least", "most"})  # fmt: skip
_HEDGE_BEFORE = re.compile(rf"{HEDGE}(?:\s+{lexicon.pattern('hedge_adverbs')})?\s*$", re.IGNORECASE)  # "or maybe 13"
_HEDGE_AFTER = re.compile(rf"\s*{HEDGE}", re.IGNORECASE)
# A hedge or a guess opening the sentence of a value: "47. Or 35.", "47. O 35.", "47. Or perhaps $x = 35$."
_OPENING_HEDGE = re.compile(rf"\s*(?:{lexicon.pattern('hedges', single_letters=False)}|{lexicon.pattern('hedge_adverbs')}"
                            rf"|(?:{'|'.join(lexicon.single_letters('hedges'))})(?=\s+(?:{lexicon.pattern('hedge_adverbs')}\s+)?[-+\d$\\(]))",
                            re.IGNORECASE)  # fmt: skip
_CJK_SCALE = re.compile(f"(?:{SCALE_CHAR})+")
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
# except 25", "twice 25", "the square root of $25$" (only filler words may stand between them and the value). It opens
# with the class of the words' first characters: a position where none starts is rejected before the lookbehind.
_NOT_THE_VALUE = re.compile(
    r"(?=[abcdefhilmnopqrstw%])(?<![A-Za-z'])(?:not|never|cannot|can't|isn't|aren't|wasn't|weren't|won't|neither|nor|except|excluding|besides"
    r"|without|other\s+than|rather\s+than|instead\s+of|anything\s+but|twice|thrice|double|triple|quadruple"
    r"|(?:half|third|quarter|root|reciprocal|square|cube|inverse|negative|opposite|multiple|factor|divisor|fraction"
    r"|power|logarithm|log|complement|percent|%)\s+of)"
    r"(?:\s+(?:be|equal|equals|to|exactly|just|simply|possibly|necessarily|the|a|an|value|number))*[\s$(\\{]*$",
    re.IGNORECASE,
)
_MODIFIER_WINDOW = 48


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
    if _modified(text, first, spans[-1][1]) or _conditional(text, first, spans[-1][1]) or _hedge_before(text, first):
        return None  # "It cannot be $15\\%$.", "twice $x$", "unless it is $7$": the value is not the answer, and no other is
    return _bounded(_joined(parts, gaps), max_chars)


def _later_sentence_number(text: str, span_end: int, span_content: str) -> bool:
    """Whether a number that stands alone follows the span in a later sentence: then it is the answer
    (``... $d = \\frac{90}{n}$ ... Therefore, there are 12 sequences.``), not the math span before it; or one that a
    bound or a hedge makes no value (``$24 \\times 6 = 144$. Hence it is at most 144``): the text then ends on no
    answer, and the span before it is none either."""
    if span_content.rstrip().endswith("."):  # "$$ ... = 2.$$ Therefore ... 100%."
        start = span_end
    else:
        boundary = _SENTENCE_BREAK.search(text, span_end)
        if boundary is None:
            return False
        start = boundary.end()
    later = text[start:]
    if last_number(later, None) is not None:
        return True
    number = _last_match(_NUMBER_TOKEN, later)
    return number is not None and _bound_or_one_of_several(later, number.start(), number.end())


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
    -> ``76``; CJK numerals too (``十二个`` -> ``12``, ``3万`` -> ``30000``, ``九分之一`` -> ``1/9``); ``one of the
    following``, ``two or three``, ``5 apples`` (digits) -> None."""
    if len(text) > _MAX_WORDED_CHARS:
        return None
    cleaned = _LATEX_WRAPPERS.sub(r" \1 ", text).replace("*", " ").replace("$", " ").strip(" \t.!,;:\"'")
    cjk = cjk_number(cleaned)
    if cjk is not None:
        return cjk  # "十二", "负十九", "九分之一", "3万"
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
    if any(char in "十百千万亿兆" for char in word):
        return False  # "3万" is 30000: a scale, never a unit
    return len(word) > 1 and word not in _MATH_WORDS and word not in _VALUE_WORDS and word not in _HEDGE_ENTRIES
_HEDGE_ENTRIES = frozenset(lexicon.entries("hedges") + lexicon.entries("hedge_adverbs"))  # "5 oder", "5 vielleicht"
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
    unit_power = _UNIT_POWER.search(text, max(0, last.start() - 16), last.start())
    if unit_power is not None:  # "1,000.99m²" (read "m^2"): the 2 is the unit's power, the number is before it
        before = _last_match(_NUMBER_TOKEN, text[: unit_power.start()])
        if before is None or text[before.end() : unit_power.start()].strip():
            return None
        last = before
    scientific = _last_match(_SCIENTIFIC, text)
    if scientific is not None and scientific.end() >= last.end():  # "1.48e29", "9.34 × 10²³": the whole number
        last = scientific
    start = last.start()
    if text[start] in "-+−" and start > 0 and (text[start - 1].isalnum() or text[start - 1] in ")}]"):
        start += 1  # a binary minus or plus, not a sign
    scaled = _CJK_SCALE.match(text, last.end())  # "3万", "1.5亿": the scale is part of the number
    end = scaled.end() if scaled is not None and cjk_number(text[start : scaled.end()]) else last.end()
    if not _stands_alone(text, start, end) or _label(text, start, end):
        return None
    unit = _UNIT_ENDING.match(text, end)  # "3180 min.", "20000 mL": the unit goes with the number
    return _bounded(text[start : unit.end(1) if unit is not None else end], max_chars)


def _words_in(text: str, words: frozenset[str], start: int = 0, *, reverse: bool = False) -> Iterator[tuple[int, int]]:
    """(start, end) of each occurrence of ``words`` (case aside, as whole words) from ``start``, in text order
    (or from the end). String search, not a regex alternation: linear with a small constant on megabytes of
    text, and lazy: the first occurrences cost only their own search. The next occurrence of each word waits
    in a heap (where several start at one place, the greatest word first from the end, the least from the
    start), so each occurrence costs a search and a heap step, not a pass over every word."""
    lower = text.lower()
    if _any_word(words).search(lower, start) is None:
        return  # none of them occurs from start (one pass in C; the usual case): no search per word
    step = (lambda word, i: lower.rfind(word, start, i)) if reverse else (lambda word, i: lower.find(word, i))
    sign = -1 if reverse else 1  # the heap pops its least key: from the end, the greatest position
    ranked = sorted(words)
    heap = [(sign * i, sign * rank, word) for rank, word in enumerate(ranked)
            if (i := step(word, len(lower) if reverse else start)) >= 0]
    heapq.heapify(heap)
    while heap:
        key, rank, word = heapq.heappop(heap)
        i = sign * key
        j = i + len(word)
        following = step(word, j - 1) if reverse else step(word, j)
        if following >= 0:
            heapq.heappush(heap, (sign * following, rank, word))
        if not (i and lower[i - 1].isalpha()) and not (j < len(lower) and lower[j].isalpha()):
            yield i, j


_any_word = functools.cache(lexicon.any_of)  # a pattern finding any of the words (whole words are told after)


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
    if after in "^_{}'/&" or after.isdigit() or _CJK_SCALE.match(text, end):  # "3万" is 30000, not 3
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


def _hedge_before(text: str, start: int) -> bool:
    """Whether a hedge comes right before the value at ``start`` (``12 or 13``, ``12 oder vielleicht 13``) or opens its
    sentence (``So we get 47. Or $5\\sqrt{7}$.``, ``47. O 35.``): it is one of two values."""
    if _HEDGE_BEFORE.search(text, max(0, start - 16), start):
        return True
    low = max(0, start - _MODIFIER_WINDOW)
    sentence = _last_match(_SENTENCE_BREAK, text[low:start])
    return sentence is not None and _OPENING_HEDGE.match(text, low + sentence.end(), start + 8) is not None


def _conditional(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]`` holds only in some case: a condition of the lexicon in its sentence
    before it (``12, unless it is 7``), or after it when another value stands before it in the sentence (``$5$, in
    which case it is $7$, depending on the rounding``; ``12, unless I made an error`` keeps its 12)."""
    window = text[max(0, start - _MODIFIER_WINDOW) : start]
    condition = lexicon.find_last(window, "conditions")
    if condition is not None and _SENTENCE_BREAK.search(window, condition[1]) is None:
        return True
    sentence = _last_match(_SENTENCE_BREAK, window)
    before = window[sentence.end() if sentence is not None else 0 :]
    if not has_digit(before) and "$" not in before:
        return False
    after = text[end : end + _MODIFIER_WINDOW]
    condition = next(lexicon.find(after, "conditions"), None)
    return condition is not None and _SENTENCE_BREAK.search(after, 0, condition[0]) is None


def _hedged(text: str, start: int, end: int) -> bool:
    """``5 or more``, ``2 million``, ``3 times``, ``5 or 6`` (``oder``, ``或``, ``или``: any hedge of the lexicon), ``10 minus 3``, ``at least 5``, ``n \\ge 3``: the
    number is hedged, scaled or a bound (it is not the answer), or an operand of arithmetic (``16 - 3``,
    ``9 * 2``: only a result after ``=`` is)."""
    if _bound_or_one_of_several(text, start, end) or _modified(text, start, end) or _conditional(text, start, end):
        return True
    return _operand_before(text, start) or _operand_after(text, end)


def _bound_or_one_of_several(text: str, start: int, end: int) -> bool:
    """Whether the words beside the number at ``text[start:end]`` make it a bound, a scaled value or one of several
    (``at most 5``, ``more than 5``, ``n \\ge 5``, ``10 minus 3``, ``5 or more``, ``12 oder 13``)."""
    before = _WORD_BEFORE.search(text, max(0, start - 14), start)
    if before is not None and before.group(1).lower() in _SCALING_BEFORE:
        return True
    if _hedge_before(text, start) or _HEDGE_AFTER.match(text, end):
        return True  # "12 oder 13", "12或13", "12 или 13": one of two values
    return _BOUND_BEFORE.search(text, max(0, start - 12), start) is not None


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
_LATEX_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
