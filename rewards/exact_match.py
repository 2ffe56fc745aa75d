"""``exact_match``: 1.0 when the completion's extracted answer equals the reference column, else 0.0.

The answer is found by the extractors of :mod:`rewardhub.rewards.text.extract` (by default the last statement:
the latest of the last ``\\boxed{}``, the last "the answer is ..." and the last ``<answer>`` tag; then
``#### 42``; the order is configurable); an answer offering several values (``5 or 6``) pays only when each is right, and
a stated answer the reader cannot read faithfully (``5 or more``) scores 0 with the reason. Then
both sides are normalised (case, whitespace, punctuation, numbers such as ``1,000`` = ``8{,}000``-style =
``1000.0``, LaTeX wrappers) before comparing; when the reference is a number, unit words after the
answer's number are dropped (``18 dollars`` = ``18``, never ``5 or more`` = ``5``). A completion that is
itself the reference after normalisation (``42`` for ``42``, ``Paris.`` for ``Paris``) is always right,
whatever markup it lacks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from .text.extract import (
    DEFAULT_EXTRACTORS,
    MAX_ANSWER_CHARS,
    Extraction,
    Normalizer,
    Unreadable,
    alternatives,
    canonical_number,
    check_extractors,
    extract_answer,
    number_before_unit,
)

__all__ = ["ExactMatch", "register_rewards"]

_EMPHASIS = re.compile(r"^\s*([*_]{1,3})(.+?)\1\s*$", re.DOTALL)  # **Paris**, _Paris_
_DECIMAL_COMMA = re.compile(r"-?\d+,\d{1,2}")  # 3,05: a decimal comma (three digits after it would be thousands)
_UNIT_MARK = re.compile(r"\\circ|°|\\(?:text|mathrm|mbox)\s*\{\s*[A-Za-z]")  # 90^\circ, 5\text{ cm}


class ExactMatch(Reward):
    """Extracted answer == reference column after normalisation (verdict: the answer is correct)."""

    name = "exact_match"
    description = "1.0 if the extracted answer (\\boxed, <answer>, ####, 'the answer is') equals the reference column"

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
        self.extractors = check_extractors(extractors)
        self.extract_reference = extract_reference
        self.max_answer_chars = max_answer_chars
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
        if len(text) <= self.max_answer_chars and self.normalize(_EMPHASIS.sub(r"\2", text)) in references:
            return Score(1.0, f"correct: the completion is the reference {_quote(text.strip())}", True)
        found = extract_answer(text, self.extractors, self.max_answer_chars)
        if found is None:
            return Score(0.0, f"no answer found (tried {', '.join(self.extractors)})", False)
        if isinstance(found, Unreadable):
            return Score(0.0, f"{found.reason} (from {found.how})", False)
        offered = alternatives(found.answer)
        if self._matches(found.answer, references) or (
            len(offered) > 1 and all(value and self._matches(value, references) for value in offered)
        ):  # several values offered pay only when every one of them is right
            return Score(1.0, f"correct: {_quote(found.answer)} (from {found.how})", True)
        expected = " or ".join(_quote(r) for r in references.values())
        return Score(0.0, f"expected {expected}, got {_quote(found.answer)} (from {found.how})", False)

    def _matches(self, answer: str, references: dict[str, str]) -> bool:
        got = self.normalize(answer)
        if got not in references and _DECIMAL_COMMA.fullmatch(answer.strip()):  # "3,05" for a reference 3.05
            got = self.normalize(answer.strip().replace(",", "."))
        if got not in references and any(
            canonical_number(key) and not _UNIT_MARK.search(written) for key, written in references.items()
        ):  # unit words are dropped for a reference that is a number, never for one with a unit of its own (90^\circ)
            number = number_before_unit(answer)
            got = self.normalize(number) if number is not None else got
        return got in references

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
            answer = str(item).strip()
            if self.extract_reference:
                found = extract_answer(answer, DEFAULT_EXTRACTORS, len(answer) or 1)
                answer = found.answer if isinstance(found, Extraction) else answer
            normalised = self.normalize(answer)
            if normalised:
                references[normalised] = answer
        return references


def _quote(text: str, limit: int = 80) -> str:
    """``text`` quoted on one line for a reason (LaTeX backslashes kept as written), cut at ``limit``."""
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return "'" + text.replace("\n", "\\n") + "'"


@hookimpl
def register_rewards(register):
    register(ExactMatch)
