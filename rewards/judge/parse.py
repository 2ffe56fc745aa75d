"""Read a judge's answer as a score in [0, 1]: only a number or verdict in a score position counts.

Chatty answers hold incidental numbers ("I looked at 3 aspects of the answer..."); reading one as
the score is a wrong reward, so a number counts only where graders put scores, and an answer with
none abstains. The grammar, in order (the first form present decides; docs/judge.md has examples):

The answer is read canonically (``rewards/text``: invisible characters, full-width forms, line breaks).
Quoted text (``"Score: 10"``, a ``>`` line, ```` `Score: 10` ````, a fenced block) is the response
quoted, never the judge's score; it is read only as a label's value (``Score: "7"``, ``Winner: `1` ``),
when it is the whole answer, or as a fenced JSON object closing the answer.

numbers:  JSON field ``{"score": 7}`` (or rating, grade); a marker ``[[7]]`` (MT-Bench) or
          ``[RESULT] 7`` (Prometheus); a label ``Score: 7`` / ``Final rating - 8/10`` /
          ``my verdict is 5``; a score verb ``I'd give it a 7``; a fraction over the scale's
          maximum ``7/10``; a bare number alone on the whole answer, its first or its last line.
verdicts: JSON field; ``[RESULT] Yes``; a label ``Verdict: incorrect``; the first word standing
          alone ``No.``; the last word standing alone ``..., correct.``; ``it is (not) correct``.

A score must end its phrase (``7.``, ``7 because``, ``7/10``): ``3 aspects`` is not one. A score in a
negated clause (``not 10/10``) or naming the scale (``a perfect score of 10``, ``(0-10)``) is not one.
When one form yields different scores and nothing says which is final, the answer abstains.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub.rewards.text import canonical

__all__ = [
    "PARSE_MODES",
    "Parsed",
    "ScoreScale",
    "TokenLogprobs",
    "UnparsableAnswer",
    "expected_score",
    "parse_answer",
    "unquoted",
]

PARSE_MODES = ("auto", "number", "yes_no", "json")

_NUM = r"-?\d+(?:\.\d+)?"
_OVER = r"(?:\s*(?:/|out\s+of)\s*(?P<over>\d+(?:\.\d+)?))?"
# What may follow a score: the end of the line, punctuation, a dash, or a word that opens a new clause.
_END = (
    r"(?=[ \t]*(?:$|\n|[.,;:!?()\[\]]|[-–—]\s|"
    r"(?:points?|because|since|for|overall|given|due|but|though|although|not|rather|instead)\b))"
)
_LABELLED = re.compile(
    rf"""(?:\b(?P<qualifier>final|overall|total)\s+)?\b(?:score|rating|grade|verdict)s?\b
         ["']?\s*(?:(?:[:=]|[-–—](?!\d)|\bis\b|\bof\b|\bwas\b|\bwould\s+be\b)\s*){{0,2}}(?:(?:an?|the)\s+)?[(\[]?\s*
         (?P<number>{_NUM}){_OVER}\s*[)\]]?{_END}
       | \b(?P<alone>final|overall|total)\b\s*[:=]\s*(?P<number2>{_NUM})(?:\s*(?:/|out\s+of)\s*(?P<over2>\d+(?:\.\d+)?))?{_END}""",
    re.I | re.X,
)
_MARKER = re.compile(
    rf"""\[\[\s*(?P<number>{_NUM})\s*\]\]
       | \[(?:RESULT|SCORE)\]:?\s*(?:(?:score|result)\s*(?:of|:)?\s*)?[(\[]?\s*(?P<number2>{_NUM}){_OVER}\s*[)\]]?{_END}
       | [(\[]\s*(?:score|result)\s*:?\s*(?P<number3>{_NUM})\s*[)\]]""",
    re.I | re.X,
)
_VERB = re.compile(
    rf"""(?:\b(?:rate|rating|give|giving|score|scoring|grade|grading|award|awarding)\s+
            (?:it|this|that|the\s+(?:response|answer|completion))(?:\s+(?:response|answer|completion|one))?\s+
            (?:(?:an?|as|at)\s+)?
          | \b(?:deserves?|earns?|merits?|gets?)\s+an?\s+)
         (?P<number>{_NUM}){_OVER}{_END}""",
    re.I | re.X,
)
_FRACTION = re.compile(rf"(?<![\w.])(?P<number>{_NUM})\s*(?:/|out\s+of)\s*(?P<over>\d+(?:\.\d+)?){_END}", re.I)
_BARE = re.compile(rf"[^\w-]*(?P<number>{_NUM}){_OVER}[^\w]*")
# The scale the judge was given, not its score: blanked out before looking for scores.
_SCALE = re.compile(
    rf"""\(\s*(?:from\s+)?{_NUM}\s*(?:-|–|to)\s*{_NUM}\s*\) | \(\s*out\s+of\s+{_NUM}\s*\)
       | \b(?:on\s+)?(?:a\s+)?(?:scale|range)\s+(?:of\s+|from\s+)?{_NUM}\s*(?:-|–|to)\s*{_NUM}
       | \bfrom\s+{_NUM}\s+to\s+{_NUM}""",
    re.I | re.X,
)
# Text before a number that makes it not the score: a negated clause, or the scale's bounds.
_NEGATED = re.compile(r"(?:\bnot\b|\bnever\b|n't\b|\brather\s+than\b|\binstead\s+of\b)[^,;:.!?\n]*$", re.I)
_BOUND = re.compile(
    r"\b(?:perfect|maximum|max|highest|top|full|lowest|minimum|min|possible|best|worst)\s+"
    r"(?:(?:score|rating|grade|mark)\s+)?(?:(?:of|is)\s+)?(?:an?\s+)?$",
    re.I,
)
# A label right after one of these words is the answer's score ("my score", "a rating of"); after any
# other word it scores one aspect ("Clarity score: 6") and yields to a plain or final label.
_WORD_BEFORE = re.compile(r"(\w+)[ \t]*$")
_PLAIN_BEFORE = frozenset({"a", "an", "the", "my", "our", "its", "this", "his", "her", "their", "your", "i"})

_VERDICT_WORDS = {
    "yes": True, "correct": True, "true": True, "pass": True, "right": True,
    "no": False, "incorrect": False, "false": False, "wrong": False, "fail": False, "not correct": False,
}  # fmt: skip
_WORD = r"(?P<word>not\s+correct|incorrect|correct|yes|no|true|false|wrong|pass|fail)"
_LABELLED_VERDICT = re.compile(
    rf"""(?:\[RESULT\]|\b(?:final\s+)?(?:verdict|judgement|judgment|answer|decision|assessment|result)\b)
         \s*(?:\bis\b)?\s*[:=\-–—]?\s*[(\[]?\s*{_WORD}\b""",
    re.I | re.X,
)
_LEADING_VERDICT = re.compile(rf"[\s>#\"'(\[]*{_WORD}\b(?=[ \t]*(?:[^\w\s]|\n|$))", re.I)
_TRAILING_VERDICT = re.compile(rf"(?:^|[,;:.\n\-–—])\s*[\"'(\[]*{_WORD}[^\w]*$", re.I)
_PREDICATE = re.compile(r"\b(?:is|are|was|seems|looks)\s+(?P<negation>not\s+)?(?P<word>correct|incorrect|wrong|right)\b", re.I)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_JSON_KEYS = ("score", "rating", "grade", "final_score", "overall_score", "verdict", "correct")


class UnparsableAnswer(ValueError):
    """The answer holds no score in a score position (or several that disagree)."""


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
    """A parsed answer: value in [0, 1], verdict for yes/no answers, how it was read, and where."""

    value: float
    verdict: bool | None
    how: str
    span: tuple[int, int] | None = None  # the score's characters in the answer (for logprobs)


@dataclass(frozen=True)
class _Found:
    raw: float  # on the judge's scale
    span: tuple[int, int]
    rank: int = 1  # labels: 2 final/overall/total, 1 plain, 0 one aspect's ("Clarity score")


def parse_answer(text: str, mode: str, scale: ScoreScale) -> Parsed:
    """Read a score from ``text`` in ``mode`` (one of ``PARSE_MODES``); raise ``UnparsableAnswer`` if none.

    What the judge quotes (``"..."``, a ``>`` line, backticks, a fenced block) is the response's text,
    not the judge's score: it is blanked before reading (see :func:`unquoted`). The span of the score
    is kept (for logprobs) only when the canonical reading left the answer's characters as they were."""
    read = canonical(text)
    parsed = _parse(unquoted(read), mode, scale)
    return parsed if read == text else dataclasses.replace(parsed, span=None)


# A quoted or fenced span: a closed ``` / ~~~ fence, a > line, "...", “...”, `...` (inline spans bounded:
# an opening quote never closed must not cost a scan of the rest per quote).
_QUOTED = re.compile(
    r"""^[ \t]*(?P<fence>`{3,}|~{3,})[^\n]*\n.*?^[ \t]*(?P=fence)[ \t]*$
      | ^[ \t]*>[^\n]*
      | "[^"\n]{0,400}" | “[^”\n]{0,400}” | `[^`\n]{1,400}`""",
    re.MULTILINE | re.DOTALL | re.VERBOSE,
)
# What makes a quoted span the judge's own: it is the value of a verdict label ("Score: `7`").
_LABEL_BEFORE = re.compile(r"\b(?:score|rating|grade|verdict|label|winner|ranking|result|decision|judge?ment|"
                           r"classification|choice)s?\b[*_ \t]*[:=][*_ \t]*$", re.IGNORECASE)


def unquoted(text: str, spans: bool = True) -> str:
    """``text`` with what it quotes blanked (offsets and line breaks unchanged): fenced blocks and ``>``
    lines, and (``spans``) quoted spans ``"..."`` / ``“...”`` / ```` `...` ````. A span stays when it is a
    verdict label's value, the whole answer, or a fenced JSON object closing the answer."""

    objects = [m.span() for m in _JSON_OBJECT.finditer(text)] if "{" in text else []

    def blank(match: re.Match[str]) -> str:
        quoted = match.group()
        if not spans and not match.group("fence") and not quoted.lstrip().startswith(">"):
            return quoted
        if quoted[0] == '"' and any(s <= match.start() and match.end() <= e for s, e in objects):
            return quoted  # a JSON object's key or string: the object is read as a whole
        if _judges_own(match, text):
            return quoted
        return re.sub(r"[^\n]", " ", quoted)

    return _QUOTED.sub(blank, text)


def _judges_own(match: re.Match[str], text: str) -> bool:
    if not (text[: match.start()] + text[match.end() :]).strip(" \t\n.*_"):
        return True  # the whole answer
    line_start = text.rfind("\n", 0, match.start()) + 1
    if _LABEL_BEFORE.search(text[line_start : match.start()]):
        return True
    if match.group("fence") and not text[match.end() :].strip():
        body = match.group().split("\n", 1)[1].strip()
        return body.startswith("{")
    return False


def _parse(text: str, mode: str, scale: ScoreScale) -> Parsed:
    plain = _blank(text)
    numbers: tuple[Callable[[str, str, ScoreScale], Parsed | None], ...] = (
        _from_marker, _from_label, _from_verb, _from_fraction,
    )  # fmt: skip
    verdicts = (_from_labelled_verdict, _from_leading_verdict, _from_trailing_verdict, _from_predicate)
    readers = {
        "json": (_from_json,),
        "number": (_from_json, *numbers, _from_bare_number),
        "yes_no": (_from_json, *verdicts),
        "auto": (_from_json, *numbers, *verdicts[:2], _from_bare_number, *verdicts[2:]),
    }[mode]
    for reader in readers:
        found = reader(text, plain, scale)
        if found is not None:
            return found
    kind = {"yes_no": "yes/no verdict", "json": 'JSON "score" field'}.get(mode, "score")
    raise UnparsableAnswer(f"no {kind} in a score position")


def _blank(text: str) -> str:
    """``text`` with markdown emphasis and scale phrases replaced by spaces (offsets unchanged)."""
    text = text.replace("*", " ").replace("`", " ")
    return _SCALE.sub(lambda m: " " * len(m.group()), text)


def _number(found: _Found, scale: ScoreScale, how: str) -> Parsed:
    value, note = scale.normalise(found.raw)
    return Parsed(value, None, how + note, found.span)


def _verdict(verdict: bool, how: str, span: tuple[int, int] | None) -> Parsed:
    return Parsed(1.0 if verdict else 0.0, verdict, how, span)


# ----- numbers --------------------------------------------------------------------------------------
def _from_json(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    for match in reversed(list(_JSON_OBJECT.finditer(text))):  # the last object is the final word
        try:
            data = json.loads(match.group())
        except ValueError:
            continue
        fields = {str(k).lower(): v for k, v in data.items()}
        key = next((k for k in _JSON_KEYS if k in fields), None)
        if key is None:
            continue
        value, at = fields[key], re.search(rf'"{key}"\s*:\s*"?', match.group(), re.I)
        span = (match.start() + at.end(), match.start() + at.end() + len(str(value))) if at else None
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _VERDICT_WORDS:
                return _verdict(_VERDICT_WORDS[word], "json", span)
            value = float(word) if re.fullmatch(_NUM, word) else None
        if isinstance(value, bool):
            return _verdict(value, "json", span)
        number = _finite(value)
        if number is not None:
            return _number(_Found(number, span or (0, 0)), scale, "json")
    return None


def _finite(value: Any) -> float | None:
    """A JSON number as a finite float, else ``None`` (an integer of 400 digits overflows a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _from_marker(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    found = [f for f in _candidates(_MARKER, plain, scale) if f is not None]
    return _number(found[-1], scale, "number") if found else None


def _from_label(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    found = [f for f in _candidates(_LABELLED, plain, scale) if f is not None]
    if not found:
        return None
    top = max(f.rank for f in found)
    return _agreed([f for f in found if f.rank == top], scale, "labelled scores")


def _from_verb(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    return _agreed(_candidates(_VERB, plain, scale), scale, "scores given")


def _from_fraction(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    return _agreed(_candidates(_FRACTION, plain, scale, over_required=scale.high), scale, "fractions")


def _from_bare_number(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    """A number alone: the whole answer, its first line or its last line, within the scale."""
    lines = [(m.start(), m.group()) for m in re.finditer(r"[^\n]+", plain) if m.group().strip()]
    if not lines:
        return None
    found = []
    for offset, line in {lines[0], lines[-1]}:
        match = _BARE.fullmatch(line)
        if match:
            raw = _scaled(match, scale)
            if raw is not None and scale.low <= raw <= scale.high:
                found.append(_Found(raw, (offset + match.start("number"), offset + match.end("number"))))
    return _agreed(found, scale, "first and last lines")


def _candidates(
    pattern: re.Pattern[str], plain: str, scale: ScoreScale, over_required: float | None = None
) -> list[_Found | None]:
    """Each match as a score, ``None`` where it is negated, names the scale or has another denominator."""
    found: list[_Found | None] = []
    for match in pattern.finditer(plain):
        group = next(g for g in ("number", "number2", "number3") if g in match.re.groupindex and match.group(g))
        start, end = match.span(group)
        before = plain[max(0, start - 80) : start]
        over = _over(match)
        if _NEGATED.search(before) or _BOUND.search(before) or (over_required is not None and over != over_required):
            found.append(None)
            continue
        raw = _scaled(match, scale, group)
        found.append(None if raw is None else _Found(raw, (start, end), _rank(match, plain)))
    return found


def _rank(match: re.Match[str], plain: str) -> int:
    if _group(match, "qualifier") or _group(match, "alone"):
        return 2
    line_start = plain.rfind("\n", 0, match.start()) + 1
    word = _WORD_BEFORE.search(plain, line_start, match.start())
    return 1 if word is None or word.group(1).lower() in _PLAIN_BEFORE else 0


def _agreed(candidates: Iterable[_Found | None], scale: ScoreScale, what: str) -> Parsed | None:
    """The score all candidates agree on; raises when they disagree."""
    found = [f for f in candidates if f is not None]
    if not found:
        return None
    if len({f.raw for f in found}) > 1:
        raise UnparsableAnswer(f"{what} disagree ({_listed(found)})")
    return _number(found[-1], scale, "number")


def _scaled(match: re.Match[str], scale: ScoreScale, group: str = "number") -> float | None:
    """The matched number on the judge's scale: ``4 out of 5`` on a 0-10 scale is 8."""
    raw, over = float(match.group(group)), _over(match)
    if over is None or over == scale.high:
        return raw
    if over <= 0:
        return None
    return scale.low + raw / over * (scale.high - scale.low)


def _over(match: re.Match[str]) -> float | None:
    over = _group(match, "over") or _group(match, "over2")
    return float(over) if over else None


def _group(match: re.Match[str], name: str) -> str | None:
    return match.group(name) if name in match.re.groupindex else None


def _listed(found: Sequence[_Found]) -> str:
    return ", ".join(dict.fromkeys(f"{f.raw:g}" for f in found))


# ----- verdicts -------------------------------------------------------------------------------------
def _from_labelled_verdict(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    matches = list(_LABELLED_VERDICT.finditer(plain))
    return _word_verdict(matches[-1]) if matches else None


def _from_leading_verdict(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    match = _LEADING_VERDICT.match(plain)  # "No." and "**Yes** -" count; the "No" of "No issues" does not
    return _word_verdict(match) if match else None


def _from_trailing_verdict(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    match = _TRAILING_VERDICT.search(plain.rstrip())
    return _word_verdict(match) if match else None


def _from_predicate(text: str, plain: str, scale: ScoreScale) -> Parsed | None:
    said = [(_VERDICT_WORDS[m.group("word").lower()] != bool(m.group("negation")), m) for m in _PREDICATE.finditer(plain)]
    if not said:
        return None
    if len({verdict for verdict, _ in said}) > 1:
        raise UnparsableAnswer("the answer calls it both correct and incorrect")
    verdict, match = said[-1]
    return _verdict(verdict, "yes/no", match.span("word"))


def _word_verdict(match: re.Match[str]) -> Parsed:
    word = " ".join(match.group("word").lower().split())
    return _verdict(_VERDICT_WORDS[word], "yes/no", match.span("word"))


# ----- logprobs -------------------------------------------------------------------------------------
TokenLogprobs = Sequence[tuple[str, Sequence[tuple[str, float]]]]


def expected_score(logprobs: TokenLogprobs, text: str, parsed: Parsed, scale: ScoreScale) -> Parsed | None:
    """The probability-weighted score at the token the text parser read the score from.

    ``logprobs`` is the answer's tokens, each with its top alternatives and their log-probabilities.
    Numbers: the mean of the in-range numeric alternatives; verdicts: P(yes) / (P(yes) + P(no)).
    ``None`` when the tokens do not spell ``text`` or the score is not one whole token.
    """
    if parsed.span is None or "".join(token for token, _ in logprobs) != text:
        return None
    start, end = parsed.span
    offset = 0
    for token, alternatives in logprobs:
        if offset <= start < offset + len(token):
            if token.strip() != text[start:end].strip():
                return None
            return _verdict_expectation(alternatives) if parsed.verdict is not None else _number_expectation(
                alternatives, scale
            )
        offset += len(token)
    return None


def _number_expectation(alternatives: Sequence[tuple[str, float]], scale: ScoreScale) -> Parsed | None:
    total = mean = 0.0
    for alt, logprob in alternatives:
        value = _token_number(alt, scale)
        if value is not None:
            total += math.exp(logprob)
            mean += math.exp(logprob) * value
    if total <= 0:
        return None
    value, note = scale.normalise(mean / total)
    return Parsed(value, None, f"logprobs E={mean / total:.3f}{note}")


def _verdict_expectation(alternatives: Sequence[tuple[str, float]]) -> Parsed | None:
    weights = {True: 0.0, False: 0.0}
    for alt, logprob in alternatives:
        verdict = _VERDICT_WORDS.get(alt.strip().lower())
        if verdict is not None:
            weights[verdict] += math.exp(logprob)
    total = weights[True] + weights[False]
    if total <= 0:
        return None
    p_yes = weights[True] / total
    return Parsed(p_yes, p_yes >= 0.5, f"logprobs P(yes)={p_yes:.3f}")


def _token_number(token: str, scale: ScoreScale) -> float | None:
    token = token.strip()
    if not re.fullmatch(_NUM, token):
        return None
    value = float(token)
    return value if scale.low <= value <= scale.high else None
