"""The ``exact_match`` reward: the completion's final answer against the reference column, by value where the
value can be read exactly, else by normalised string (see the package docstring for what it reads and refuses).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from ..math.literals import Scalar
from ..math.reward import _plus_minus as plus_minus  # a gold "\\pm 4" is the list "4, -4", as math reads it
from ..math.reward import find_answer
from ..math.units import unit_written_after
from ..text import canonical
from ..text.extract import (
    DEFAULT_EXTRACTORS,
    MAX_ANSWER_CHARS,
    Extraction,
    Normalizer,
    Unreadable,
    alternatives,
    boxed,
    canonical_number,
    check_extractors,
    extract_answer,
    number_before_unit,
)
from .statements import refusal, revised
from .values import Items, Measured, Value, has_words, read_value, same_value

__all__ = ["ExactMatch", "register_rewards"]

_EMPHASIS = re.compile(r"^\s*([*_]{1,3})(.+?)\1\s*$", re.DOTALL)  # **Paris**, _Paris_
_DECIMAL_COMMA = re.compile(r"-?\d+,\d{1,2}")  # 3,05: a decimal comma (three digits after it would be thousands)
_UNIT_MARK = re.compile(r"\\circ|°|\\(?:text|mathrm|mbox)\s*\{\s*[A-Za-z]")  # 90^\circ, 5\text{ cm}
# A factorial (5!, (n+1)!, 100000!): the "!" is an operator, never punctuation to strip (5! is not 5).
_FACTORIAL = re.compile(r"(?<=[\w)}\]])!(?!=)")
# A minus between spaces after a number or a closing bracket is subtraction (8 - \sqrt{10}), never the dash of
# "Paris - France" that the string normaliser turns into a space (8 - \sqrt{10} is not 8\sqrt{10}).
_SPACED_MINUS = re.compile(r"(?<=[\d)}\]])\s+-\s+(?=[\d\\A-Za-z({\[])")
_DROPPED_BRACKETS = re.compile(r"\\\{|\\langle|[⟨⟩〈〉]")  # brackets the string normaliser drops as punctuation
_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")  # a canonical number of the string normaliser
_WHOLE_BOX = re.compile(r"[\s$]*\\(?:boxed|fbox)\s*\{.*\}[\s$.]*", re.DOTALL)
_NAMED = re.compile(r"\s*([A-Za-z](?:_\{?\w+\}?)?)\s*=")
# The reader of the math family, used when no extractors are named: the answer tag, the last statement, ####,
# then (nothing stated) the last math span, a bare answer or the last number, never in a text cut off.
_MATH_READING = ("open_answer_tag", "final_statement", "gsm8k", "last_math", "bare", "last_number")


class ExactMatch(Reward):
    """Extracted answer == reference column, by exact value or normalised string (verdict: the answer is correct)."""

    name = "exact_match"
    description = "1.0 if the extracted answer (\\boxed, <answer>, ####, 'the answer is') equals the reference column, by exact value or normalised string"

    def __init__(
        self,
        *,
        column: str = "solution",
        extractors: list[str] | None = None,
        extract_reference: bool = True,
        case_sensitive: bool = False,
        normalize_whitespace: bool = True,
        strip_punctuation: bool = True,
        normalize_numbers: bool = True,
        strip_latex: bool = True,
        max_answer_chars: int = MAX_ANSWER_CHARS,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if max_answer_chars < 1:
            raise ConfigError(f"max_answer_chars must be >= 1, got {max_answer_chars}")
        self.column = column
        self.extractors = None if extractors is None else check_extractors(extractors)
        self.extract_reference = extract_reference
        self.max_answer_chars = max_answer_chars
        self.by_value = normalize_numbers and strip_latex  # values are read from the LaTeX they are written in
        self.normalize = Normalizer(
            case_sensitive=case_sensitive,
            whitespace=normalize_whitespace,
            punctuation=strip_punctuation,
            numbers=normalize_numbers,
            latex=strip_latex,
        )

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def score_sample(self, text: str, row: Row) -> Score:
        references = self._references(row[self.column])
        if not references:
            return Score(None, f"no reference answer in column {self.column!r}")
        longest = max(map(len, references.values()))  # a longer text cannot normalise to a reference: not read
        if len(text) <= min(self.max_answer_chars, 8 * longest + 64) and self._text(_EMPHASIS.sub(r"\2", text)) in references:
            return Score(1.0, f"correct: the completion is the reference {_quote(text.strip())}", True)
        found = self._find(text)
        if self.extractors is None and isinstance(found, Extraction):
            found = revised(canonical(text), found)
        if found is None:
            return Score(0.0, f"no answer found (tried {', '.join(self.extractors or _MATH_READING)})", False)
        if isinstance(found, Unreadable):
            return Score(0.0, f"{found.reason} (from {found.how})", False)
        if len(found.answer) > self.max_answer_chars:
            return Score(0.0, f"answer too long ({len(found.answer)} chars > {self.max_answer_chars})", False)
        answer = found.answer
        if canonical_number(answer) is not None and any(isinstance(self._gold_value(w), Measured) for w in references.values()):
            answer = unit_written_after(canonical(text), answer) or answer  # "$232 centimeters$" read as 232
        offered = alternatives(answer)
        if not self._pays(answer, offered, references):
            expected = " or ".join(_quote(r) for r in references.values())
            return Score(0.0, f"expected {expected}, got {_quote(answer)} (from {found.how})", False)
        refused = None if self.extractors is not None else refusal(  # named extractors decide alone
            canonical(text), found, lambda stated: self._pays(stated, alternatives(stated), references))
        if refused is not None:
            return Score(0.0, f"{refused} (from {found.how})", False)
        return Score(1.0, f"correct: {_quote(found.answer)} (from {found.how})", True)

    def _find(self, text: str) -> Extraction | Unreadable | None:
        if self.extractors is not None:
            return extract_answer(text, self.extractors, self.max_answer_chars)
        found = find_answer(text)
        if isinstance(found, Extraction) and len(found.answer) <= self.max_answer_chars and _WHOLE_BOX.fullmatch(found.answer):
            inner = boxed(found.answer, None)
            return Extraction(inner, found.how) if inner else found
        return found

    def _pays(self, answer: str, offered: list[str], references: dict[str, str]) -> bool:
        """Whether ``answer`` (offering the values ``offered``) equals a reference; several values offered pay
        only when every one of them is right, or when they are the solutions of one equation beside a reference
        that lists them (``x = 7 or x = -7`` for ``\\pm 7``)."""
        if self._matches(answer, references):
            return True
        if len(offered) < 2 or not all(offered):
            return False
        names = {named.group(1) if (named := _NAMED.match(value)) else None for value in offered}
        if len(names) == 1 and None not in names and self._matches(", ".join(offered), references):
            return True
        return all(self._matches(value, references) for value in offered)

    def _matches(self, answer: str, references: dict[str, str]) -> bool:
        got = self._text(answer)
        if got not in references and _DECIMAL_COMMA.fullmatch(answer.strip()):  # "3,05" for a reference 3.05
            got = self._text(answer.strip().replace(",", "."))
        if got not in references and any(
            canonical_number(key) and not _UNIT_MARK.search(written) for key, written in references.items()
        ):  # unit words are dropped for a reference that is a number, never for one with a unit of its own (90^\circ)
            number = number_before_unit(answer)
            got = self._text(number) if number is not None else got
        if got in references:
            return not self.by_value or self._brackets_agree(answer, references[got])
        if not self.by_value or _FACTORIAL.search(answer):
            return False
        if _DECIMAL.fullmatch(got) and "," not in answer and all(_DECIMAL.fullmatch(key) for key in references):
            return False  # two exact decimals already (1.6e-19 reads 0.00000000000000000016): unequal values
        for written in references.values():
            gold = self._gold_value(written)
            if gold is not None and same_value(gold, self._value(answer, gold)):
                return True
        return False

    def _brackets_agree(self, answer: str, written: str) -> bool:
        """Whether two strings the normaliser made equal by dropping brackets it reads as punctuation (``⟨0, 0⟩``
        and ``\\{0, 0\\}`` both become ``0 0``) hold the same kind of list: a vector is no set."""
        if not _DROPPED_BRACKETS.search(answer) and not _DROPPED_BRACKETS.search(written):
            return True
        gold = self._gold_value(written)
        value = self._value(answer, gold) if isinstance(gold, Items) else None
        return not isinstance(value, Items) or same_value(gold, value)

    def _text(self, answer: str) -> str:
        return _normalised(self.normalize, answer)

    def _gold_value(self, gold: str) -> Value | None:
        return None if len(gold) > self.max_answer_chars else _gold_value(gold, self.normalize)

    def _value(self, answer: str, gold: Value) -> Value:
        one_number = not isinstance(gold, Items | str)
        text = functools.partial(_normalised, self.normalize)
        value = read_value(answer, text, one_number=one_number, as_list=isinstance(gold, Items) and not gold.brackets)
        if isinstance(gold, Measured) and isinstance(value, Scalar) and has_words(answer):
            return text(answer)  # "120\text{ rad}\phantom{...}": words the number reader dropped, maybe a unit
        return value

    def _references(self, value: Any) -> dict[str, str]:
        """Normalised reference answer(s) -> their display form; a list column accepts any of its items.

        A reference holding answer markup (GSM8K's ``#### 72``, a ``\\boxed{}`` solution) is reduced to
        that answer with the default extractors, whatever ``extractors`` the completions use.
        """
        items = value if isinstance(value, Sequence) and not isinstance(value, str | bytes) else [value]
        references = {}
        for item in items:
            if item is None or isinstance(item, bool) or not isinstance(item, str | int | float):
                continue
            normalised, answer = _reference(str(item).strip(), self.extract_reference, self.normalize)
            if normalised:
                references[normalised] = answer
        return references


@functools.lru_cache(maxsize=1 << 14)
def _reference(item: str, extract: bool, normalize: Normalizer) -> tuple[str, str]:
    """A reference read once (references repeat every step and epoch): its normalised and its written answer."""
    answer = item
    if extract:
        found = extract_answer(item, DEFAULT_EXTRACTORS, len(item) or 1)
        answer = found.answer if isinstance(found, Extraction) else item
    return _normalised(normalize, answer), answer


@functools.lru_cache(maxsize=1 << 14)
def _normalised(normalize: Normalizer, answer: str) -> str:
    """The normalised string of an answer (a factorial keeps its ``!``: punctuation elsewhere goes)."""
    return normalize(_SPACED_MINUS.sub("-", _FACTORIAL.sub(" factorial ", answer)))


@functools.lru_cache(maxsize=1 << 14)
def _gold_value(gold: str, normalize: Normalizer) -> Value | None:
    """A reference read as a value once (references repeat every step and epoch); None for a factorial."""
    if _FACTORIAL.search(gold):
        return None
    return read_value(plus_minus(gold), functools.partial(_normalised, normalize), one_number=False, as_list=True)


def _quote(text: str, limit: int = 80) -> str:
    """``text`` quoted on one line for a reason (LaTeX backslashes kept as written), cut at ``limit``."""
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return "'" + text.replace("\n", "\\n") + "'"


@hookimpl
def register_rewards(register):
    register(ExactMatch)
