"""The ``exact_match`` reward: the completion's final answer against the reference column, by value where the
value can be read exactly, else by normalised string (see the package docstring for what it reads and refuses).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from ..math.reward import find_answer
from ..math.units import unit_written_after
from ..memo import Kept
from ..text import canonical
from ..text.extract import (
    DEFAULT_EXTRACTORS,
    MAX_ANSWER_CHARS,
    Extraction,
    Normalizer,
    Unreadable,
    boxed,
    canonical_number,
    check_extractors,
    extract_answer,
)
from .compare import Comparison, normalised
from .statements import refusal, revised
from .values import Measured

__all__ = ["ExactMatch", "register_rewards"]

_EMPHASIS = re.compile(r"^\s*([*_]{1,3})(.+?)\1\s*$", re.DOTALL)  # **Paris**, _Paris_
_WHOLE_BOX = re.compile(r"[\s$]*\\(?:boxed|fbox)\s*\{.*\}[\s$.]*", re.DOTALL)
# The reader of the math family, used when no extractors are named: the answer tag, the last statement, ####,
# then (nothing stated) the last math span, a bare answer or the last number, never in a text cut off.
_MATH_READING = ("open_answer_tag", "final_statement", "gsm8k", "last_math", "bare", "last_number")
_KNOWN_REFERENCES = 4096  # reference texts a reward keeps read (a few training steps' worth)


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
        self.compare = _comparison(case_sensitive, normalize_whitespace, strip_punctuation, normalize_numbers, strip_latex,
                                   max_answer_chars)
        self.normalize = self.compare.normalize
        self._known = Kept(_KNOWN_REFERENCES)  # a text column's value -> its references, and whether one is a measure

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def score_sample(self, text: str, row: Row) -> Score:
        references, measured = self._references(row[self.column])
        if not references:
            return Score(None, f"no reference answer in column {self.column!r}")
        longest = max(map(len, references.values()))  # a longer text cannot normalise to a reference: not read
        if len(text) <= min(self.max_answer_chars, 8 * longest + 64) and self.compare.text(_EMPHASIS.sub(r"\2", text)) in references:
            return Score(1.0, f"correct: the completion is the reference {_quote(text.strip())}", True)
        found = self._find(text)
        written = canonical(text)  # as the readers read it (look-alike letters and hidden characters undone)
        if self.extractors is None and isinstance(found, Extraction):
            found = revised(written, found)
        if found is None:
            return Score(0.0, f"no answer found (tried {', '.join(self.extractors or _MATH_READING)})", False)
        if isinstance(found, Unreadable):
            return Score(0.0, f"{found.reason} (from {found.how})", False)
        if len(found.answer) > self.max_answer_chars:
            return Score(0.0, f"answer too long ({len(found.answer)} chars > {self.max_answer_chars})", False)
        answer = found.answer
        if measured and canonical_number(answer) is not None:
            answer = unit_written_after(written, answer) or answer  # "$232 centimeters$" read as 232
        if not self.compare.pays(answer, references):
            expected = " or ".join(_quote(r) for r in references.values())
            return Score(0.0, f"expected {expected}, got {_quote(answer)} (from {found.how})", False)
        refused = None if self.extractors is not None else refusal(  # named extractors decide alone
            written, found, lambda stated: self.compare.pays(stated, references))
        if refused is not None:
            return Score(0.0, f"{refused} (from {found.how})", False)
        return Score(1.0, f"correct: {_quote(found.answer)} (from {found.how})", True)

    def _find(self, text: str) -> Extraction | Unreadable | None:
        if self.extractors is not None:
            return extract_answer(text, self.extractors, self.max_answer_chars)
        found = find_answer(text)
        if (isinstance(found, Extraction) and len(found.answer) <= self.max_answer_chars and "box" in found.answer
                and _WHOLE_BOX.fullmatch(found.answer)):
            inner = boxed(found.answer, None)
            return Extraction(inner, found.how) if inner else found
        return found

    def _references(self, value: Any) -> tuple[dict[str, str], bool]:
        """Normalised reference answer(s) -> their display form (a list column accepts any of its items), and whether
        one of them is a measure (a number with a unit, read beside the unit an answer writes after its number).

        A reference holding answer markup (GSM8K's ``#### 72``, a ``\\boxed{}`` solution) is reduced to
        that answer with the default extractors, whatever ``extractors`` the completions use. A text column's
        references are remembered: a group's samples share one (callers never change the dict returned).
        """
        if not isinstance(value, str):
            return self._read_references(value)
        known = self._known.get(value)
        return self._known.keep(value, self._read_references(value)) if known is None else known

    def _read_references(self, value: Any) -> tuple[dict[str, str], bool]:
        items = [value] if isinstance(value, str | bytes) or not isinstance(value, Sequence) else value
        references = {}
        for item in items:
            if item is None or isinstance(item, bool) or not isinstance(item, str | int | float):
                continue
            normalised, answer = _reference(str(item).strip(), self.extract_reference, self.normalize)
            if normalised:
                references[normalised] = answer
        return references, any(isinstance(self.compare.gold_value(written), Measured) for written in references.values())


@functools.cache
def _comparison(case_sensitive: bool, whitespace: bool, punctuation: bool, numbers: bool, latex: bool,
                max_answer_chars: int) -> Comparison:
    """One comparison per setting, shared by every reward built with it: the memos it keys find it by identity."""
    normalize = Normalizer(case_sensitive=case_sensitive, whitespace=whitespace, punctuation=punctuation,
                           numbers=numbers, latex=latex)
    return Comparison(normalize, numbers and latex, max_answer_chars)  # values are read from their LaTeX: both on


@functools.lru_cache(maxsize=1 << 14)
def _reference(item: str, extract: bool, normalize: Normalizer) -> tuple[str, str]:
    """A reference read once (references repeat every step and epoch): its normalised and its written answer."""
    answer = item
    if extract:
        found = extract_answer(item, DEFAULT_EXTRACTORS, len(item) or 1)
        answer = found.answer if isinstance(found, Extraction) else item
    return normalised(normalize, answer), answer


def _quote(text: str, limit: int = 80) -> str:
    """``text`` quoted on one line for a reason (LaTeX backslashes kept as written), cut at ``limit``."""
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return "'" + text.replace("\n", "\\n") + "'"


@hookimpl
def register_rewards(register):
    register(ExactMatch)
