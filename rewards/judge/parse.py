"""Turn a judge's answer into a score in [0, 1]: numbers in chatty text, yes/no, JSON, or logprobs.

Judges rarely answer with a bare number, so each parser looks for the most explicit form first
(a JSON ``{"score": ...}``, then "Score: 7" or "7/10", then a verdict word, then any number).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

PARSE_MODES = ("auto", "number", "yes_no", "json")

_NUMBER = r"-?\d+(?:\.\d+)?"
_LABELLED = re.compile(
    rf"\b(?:score|rating|grade)\b[^\w-]{{0,4}}(?:is|of)?[^\w-]{{0,4}}({_NUMBER})(?:\s*(?:/|out of)\s*({_NUMBER}))?", re.I
)
_FRACTION = re.compile(rf"({_NUMBER})\s*(?:/|out of)\s*({_NUMBER})", re.I)
# "not 10/10", "rather than 9/10", "wouldn't give 10/10": a score the judge rules out.
_NEGATED = re.compile(r"(?:\bnot|\bnever|\brather than|\binstead of|n't\s+\w+)\s+(?:an?\s+|even\s+)?$", re.I)
# "(0-10)", "on a scale of 1 to 10", "from 0 to 10": the range the judge was given, not its score.
_RANGE = rf"{_NUMBER}\s*(?:-|–|to)\s*{_NUMBER}"
_SCALE_PHRASE = re.compile(
    rf"\(\s*(?:from\s+)?{_RANGE}\s*\)|\b(?:scale|range)\s+(?:of\s+|from\s+)?{_RANGE}|\bfrom\s+{_NUMBER}\s+to\s+{_NUMBER}",
    re.I,
)
_ANY_NUMBER = re.compile(_NUMBER)
_LEADING_NUMBER = re.compile(rf"^\W*({_NUMBER})\b")
_VERDICT_WORDS = {
    "yes": True, "correct": True, "true": True, "pass": True,
    "no": False, "incorrect": False, "false": False, "wrong": False, "fail": False, "not correct": False,
}  # fmt: skip
_VERDICT = re.compile(r"\b(not correct|incorrect|correct|yes|no|true|false|wrong|pass|fail)\b", re.I)
_LEADING_VERDICT = re.compile(_VERDICT.pattern + r"(?=[ \t]*(?:[^\w\s]|\n|$))", re.I)
_LABELLED_VERDICT = re.compile(
    r"\b(?:verdict|judgement|judgment|final answer|answer)\b\W{0,4}(not correct|incorrect|correct|yes|no|true|false)\b",
    re.I,
)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")


class UnparsableAnswer(ValueError):
    """The answer holds no score in the expected form."""


@dataclass(frozen=True)
class ScoreScale:
    """The judge's score range (e.g. 0-10), mapped linearly onto [0, 1]."""

    low: float = 0.0
    high: float = 10.0

    def __post_init__(self) -> None:
        if not self.high > self.low:
            raise ValueError(f"max_score ({self.high}) must be greater than min_score ({self.low})")

    def normalise(self, raw: float) -> tuple[float, str]:
        """The score in [0, 1] and a note when ``raw`` was out of range and clipped."""
        clipped = min(max(raw, self.low), self.high)
        note = f" (clipped {raw:g} to {clipped:g})" if clipped != raw else ""
        return (clipped - self.low) / (self.high - self.low), note


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: value in [0, 1], verdict for yes/no answers, and how it was read."""

    value: float
    verdict: bool | None
    how: str


def parse_answer(text: str, mode: str, scale: ScoreScale) -> Parsed:
    """Read a score from ``text`` in ``mode`` (one of ``PARSE_MODES``); raise ``UnparsableAnswer`` if none."""
    readers = {
        "json": (_from_json,),
        "number": (_from_json, _from_labelled_number, _from_any_number),
        "yes_no": (_from_json, _from_verdict_word),
        "auto": (_from_json, _from_labelled_number, _from_verdict_word, _from_any_number),
    }[mode]
    for reader in readers:
        found = reader(text, scale)
        if found is not None:
            return found
    raise UnparsableAnswer(f"no {mode.replace('_', '/')} score found")


def _number(raw: float, scale: ScoreScale, how: str) -> Parsed:
    value, note = scale.normalise(raw)
    return Parsed(value, None, how + note)


def _verdict(verdict: bool, how: str) -> Parsed:
    return Parsed(1.0 if verdict else 0.0, verdict, how)


def _from_json(text: str, scale: ScoreScale) -> Parsed | None:
    for candidate in _JSON_OBJECT.findall(text):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        score = {str(k).lower(): v for k, v in data.items()}.get("score")
        if isinstance(score, bool):
            return _verdict(score, "json")
        if isinstance(score, int | float) and math.isfinite(score):
            return _number(float(score), scale, "json")
        if isinstance(score, str):
            word = score.strip().lower()
            if word in _VERDICT_WORDS:
                return _verdict(_VERDICT_WORDS[word], "json")
            if _ANY_NUMBER.fullmatch(word):
                return _number(float(word), scale, "json")
    return None


def _from_labelled_number(text: str, scale: ScoreScale) -> Parsed | None:
    text = _SCALE_PHRASE.sub(" ", text)
    matches = _asserted(_LABELLED, text) or _asserted(_FRACTION, text)
    if not matches:
        return None
    number, denominator = matches[-1]
    raw = float(number)
    if denominator and float(denominator) > 0 and float(denominator) != scale.high:
        raw = scale.low + raw / float(denominator) * (scale.high - scale.low)
    return _number(raw, scale, "number")


def _asserted(pattern: re.Pattern[str], text: str) -> list[tuple[str, str]]:
    """The groups of each match of ``pattern`` that no negation rules out ("7/10, not 10/10")."""
    return [m.groups() for m in pattern.finditer(text) if not _NEGATED.search(text, max(0, m.start() - 40), m.start())]


def _from_any_number(text: str, scale: ScoreScale) -> Parsed | None:
    text = _SCALE_PHRASE.sub(" ", text)
    leading = _LEADING_NUMBER.match(text)
    if leading:
        return _number(float(leading.group(1)), scale, "number")
    numbers = _ANY_NUMBER.findall(text)
    return _number(float(numbers[-1]), scale, "number") if numbers else None


def _from_verdict_word(text: str, scale: ScoreScale) -> Parsed | None:
    labelled = _LABELLED_VERDICT.findall(text)
    if labelled:
        return _verdict(_VERDICT_WORDS[labelled[-1].lower()], "yes/no")
    words = [w.lower() for w in _VERDICT.findall(text)]
    if not words:
        return None
    first = _LEADING_VERDICT.match(text.strip().lstrip("*#>-_ ").strip())  # "No." counts, "No issues" does not
    word = first.group(1).lower() if first else words[-1]
    return _verdict(_VERDICT_WORDS[word], "yes/no")


TokenLogprobs = Sequence[tuple[str, Sequence[tuple[str, float]]]]


def expected_score(logprobs: TokenLogprobs, mode: str, scale: ScoreScale) -> Parsed | None:
    """The probability-weighted score at the first score token, or ``None`` when no token is a score.

    ``logprobs`` is the answer's tokens, each with its top alternatives and their log-probabilities.
    For numbers: the mean of in-range numeric alternatives; for yes/no: P(yes) / (P(yes) + P(no)).
    """
    for token, alternatives in logprobs:
        if mode == "yes_no":
            if _token_verdict(token) is None:
                continue
            weights = {True: 0.0, False: 0.0}
            for alt, logprob in alternatives:
                verdict = _token_verdict(alt)
                if verdict is not None:
                    weights[verdict] += math.exp(logprob)
            total = weights[True] + weights[False]
            if total > 0:
                p_yes = weights[True] / total
                return Parsed(p_yes, p_yes >= 0.5, f"logprobs P(yes)={p_yes:.3f}")
            return None
        if _token_number(token, scale) is None:
            continue
        total = mean = 0.0
        for alt, logprob in alternatives:
            value = _token_number(alt, scale)
            if value is not None:
                weight = math.exp(logprob)
                total += weight
                mean += weight * value
        if total > 0:
            return _number(mean / total, scale, f"logprobs E={mean / total:.3f}")
        return None
    return None


def _token_number(token: str, scale: ScoreScale) -> float | None:
    token = token.strip()
    if not _ANY_NUMBER.fullmatch(token):
        return None
    value = float(token)
    return value if scale.low <= value <= scale.high else None


def _token_verdict(token: str) -> bool | None:
    return _VERDICT_WORDS.get(token.strip().lower())
