"""The final answers a completion states, each read to a canonical value, so that one answer counts once.

A completion states an answer in a box (``\\boxed{}``, ``\\fbox{}``), an ``<answer>`` tag (unless what it holds
states the answer itself: "<answer>The answer is 12</answer>" is one statement), a "####" line or an
answer phrase in one of several languages ("the final answer is", "**Answer:**", "答案是", "la réponse est",
"Antwort:", "ответ:", ...). The same value stated several ways ("the final answer is $\\boxed{12}$",
"**Answer:** 12", a box repeated) is one answer; "12 or 13", two boxes with different values, or a phrase and a
box that disagree are several. Text inside ``<think>...</think>`` is reasoning, not a statement, when the
completion also says something after it.

The monitor reads text here only to describe it (no reward is paid from it), so the reading is lenient
about notation (``\\dfrac12`` = ``1/2`` = ``0.5``, ``x = 3`` = ``3``, ``1,000`` = ``1000``, ``30^\\circ`` = ``30``)
and strict about alternatives.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from fractions import Fraction

__all__ = ["boxed_contents", "canonical", "stated_answers"]

MAX_VALUE_CHARS = 120  # a stated value longer than this is prose, not an answer
_BOX_COMMANDS = ("\\boxed{", "\\fbox{")
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_HASHES = re.compile(r"####[ \t]*([^\n<]+)")
# Answer phrases by language: what follows (up to the end of its sentence) is the stated value.
_PHRASES = re.compile(
    r"(?:\b(?:final\s+)?answer\s*\**\s*(?:\([^()\n]{1,30}\)\s*)?(?:is|would\s+be|will\s+be|should\s+be|[:：=])"
    r"|\b(?:la\s+)?r[ée]ponse(?:\s+finale)?\s*\**\s*(?:est|[:：=])"
    r"|\b(?:la\s+)?respuesta(?:\s+final)?\s*\**\s*(?:es|[:：=])"
    r"|\b(?:a\s+)?resposta(?:\s+final)?\s*\**\s*(?:é|[:：=])"
    r"|\b(?:la\s+)?risposta(?:\s+finale)?\s*\**\s*(?:è|[:：=])"
    r"|\b(?:die\s+)?(?:endg[üu]ltige\s+)?antwort\s*\**\s*(?:ist|lautet|[:：=])"
    r"|(?:окончательный\s+)?ответ\s*\**\s*(?:равен|будет|[:：=—-])"
    r"|(?:最终|最後の|最终的)?(?:答案|答え|解答|正解)\s*\**\s*(?:是|为|為|は|[:：=])"
    r"|(?:정답|답)\s*\**\s*(?:은|는|[:：=]))\s*\**\s*",
    re.I,
)
_SENTENCE_END = re.compile(r"[。！？!?\n]|</?[A-Za-z]+>|\.(?=\s|$)|(?<=\$)\s*,\s|,\s+(?:since|because|as|which|so|donc|car|weil|porque)\b",
                           re.I)
# Between alternatives: "or", "或", "oder", "ou", "o bien", "или" (a plain comma lists the parts of one answer).
_ALTERNATIVE = re.compile(r"\s+(?:or|oder|ou|o\s+bien|или)\s+|\s*(?:或者|或是|或)\s*", re.I)
_WRAPPERS = re.compile(r"\\(?:text|mathrm|textbf|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dt]?frac\s*(?:\{([^{}]*)\}|(\w))\s*(?:\{([^{}]*)\}|(\w))")
_DECORATION = re.compile(r"\\[,;:! ]|\\(?:left|right|displaystyle|quad|qquad)\b|[\s$*`\"“”'「」]|\\[()\[\]]")
_DEGREES = re.compile(r"(?:\^\s*\{?\\circ\}?|°|\\degree)")
_VARIABLE = re.compile(r"^[a-zA-Z](?:_\{?\w+\}?)?=(?!=)")
_LEADING_NUMBER = re.compile(r"^([-+]?\d+(?:\.\d+)?)(?:[a-zA-Z\u00C0-\uFFFF]{2,}.*)$")  # "12apples" -> 12
_PROSE_AFTER = re.compile(r"(?<=\S)\s+[^\W\d_]{2,}(?:\s+[^\W\d_]+)*\s*[。.!?]?$"  # "1/2 です", "12 apples"
                          r"|(?<=[\w})$°])[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+[。.!?]?$")  # "1/2입니다"
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)$")
_TRAILING = "。.,;:!?，；：！？"
# Between two statements, words that take the first back ("Wait, that is wrong"): it was reasoning, not an answer.
_RETRACTION = re.compile(r"\b(?:wait|actually|oops|hmm+|mistake|wrong|incorrect|correction|re-?check|reconsider|"
                         r"recalculate|hold on|scratch that|no,|attends|en fait|espera|en realidad|moment|eigentlich|"
                         r"подожди|нет,|стоп)\b|等等|不对|错了|待って|違う", re.I)


def boxed_contents(text: str) -> Iterator[str]:
    """The contents of each ``\\boxed{...}`` / ``\\fbox{...}`` (braces matched; an unclosed box runs to the end)."""
    for _, inner in sorted(_boxes(text)):
        yield inner


@functools.lru_cache(maxsize=8192)  # answers repeat across a step's completions
def canonical(value: str) -> str:
    """``value`` in one spelling: boxes, ``\\text{}``, dollars, bold and spaces removed, fractions and decimals
    as reduced fractions, ``x = 3`` as ``3``, thousands separators and degree signs dropped, lower case."""
    value = unicodedata.normalize("NFKC", value)
    inner = list(boxed_contents(value))
    if inner:
        value = inner[-1]
    value = re.sub(r"</?[A-Za-z]+>", "", _WRAPPERS.sub(r"\1", value))
    value = _PROSE_AFTER.sub("", value.strip())
    value = _DEGREES.sub("", value)
    value = _FRAC.sub(lambda m: f"({m[1] or m[2]})/({m[3] or m[4]})", value)
    value = _DECORATION.sub("", value.replace("\\$", "")).replace("\\%", "%")
    value = value.strip(_TRAILING)
    value = _VARIABLE.sub("", re.sub(r"([_^])\{(\w)\}", r"\1\2", value))
    if re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", value):
        value = value.replace(",", "")
    value = re.sub(r"^\((\w+)\)/\((\w+)\)$", r"\1/\2", value)
    leading = _LEADING_NUMBER.match(value)
    if leading:
        value = leading[1]
    number = _as_fraction(value)
    return str(number) if number is not None else value.lower()


def stated_answers(text: str) -> set[str]:
    """The distinct canonical values ``text`` states as its final answer (empty when it states none)."""
    text = unicodedata.normalize("NFKC", text)
    after = _THINK.sub(" ", text)
    if after.strip():
        text = after
    tags = [(m.start(), m[1]) for m in _ANSWER_TAG.finditer(text)]
    tags = [(at, inner) for at, inner in tags
            if not any(True for _ in _boxes(inner)) and not _PHRASES.search(inner) and not _HASHES.search(inner)]
    statements = sorted([*_boxes(text), *tags,
                         *((m.start(), m[1]) for m in _HASHES.finditer(text)), *_phrase_values(text)])
    out = set()
    for i, (at, value) in enumerate(statements):
        if i + 1 < len(statements) and _RETRACTION.search(text, at, statements[i + 1][0]):
            continue  # taken back before the next statement
        for part in _ALTERNATIVE.split(_WRAPPERS.sub(r"\1", value)):
            if 0 < len(part) <= MAX_VALUE_CHARS and (read := canonical(part)):
                out.add(read)
    return out


def _boxes(text: str) -> Iterator[tuple[int, str]]:
    """Each box's position and contents."""
    for command in _BOX_COMMANDS:
        start = 0
        while (at := text.find(command, start)) != -1:
            depth, i = 1, at + len(command)
            while i < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            yield at, text[at + len(command):i - 1 if depth == 0 else i]
            start = i


def _phrase_values(text: str) -> Iterator[tuple[int, str]]:
    """What each answer phrase states, up to its sentence's end (a phrase that only introduces another, as
    in "Final Answer: The final answer is 5", gives way to the inner one)."""
    matches = list(_PHRASES.finditer(text))
    for i, match in enumerate(matches):
        end = _sentence_end(text, match.end())
        if i + 1 < len(matches) and matches[i + 1].start() < end:
            continue
        value = text[match.end():end].strip()
        if value:
            yield match.start(), value


def _sentence_end(text: str, start: int) -> int:
    """Where the sentence that begins at ``start`` ends (braces of a box or a fraction are never cut)."""
    depth = 0
    for i in range(start, min(len(text), start + 4 * MAX_VALUE_CHARS)):
        char = text[i]
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif depth == 0 and _SENTENCE_END.match(text, i):
            return i
    return min(len(text), start + 4 * MAX_VALUE_CHARS)


def _as_fraction(value: str) -> Fraction | None:
    """A plain number or a ratio of two plain numbers as an exact fraction (else None)."""
    parts = value.split("/")
    if len(parts) > 2 or not all(_NUMBER.match(p) for p in parts):
        return None
    try:
        number = Fraction(parts[0])
        return number / Fraction(parts[1]) if len(parts) == 2 else number
    except (ValueError, ZeroDivisionError):
        return None
