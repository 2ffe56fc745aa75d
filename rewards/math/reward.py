"""The ``math`` reward: is the completion's final answer equal to the gold answer?

Extraction (``rewardhub.rewards.text.extract``, in the math family's order), normalisation and plain
literals (``literals``) are done in the caller; everything that needs a parser (LaTeX, expressions,
sets, intervals, matrices, equations) is parsed and verified with Math-Verify in worker processes with
a hard deadline per answer (``checker``), so no completion can hang training.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from fractions import Fraction
from typing import Any, NamedTuple

from rewardhub import Batch, Reward, Score, hookimpl

from ..memo import Kept
from ..text import canonical, lexicon
from ..text.extract import (
    Extraction,
    Unreadable,
    after_statement,
    alternatives,
    bare,
    bracket_depths,
    canonical_number,
    extract_answer,
    final_statement,
    gsm8k,
    looks_truncated,
    read_answer,
)
from ..text.extract.boxes import _BOX_COMMANDS, _boxes
from ..text.sentences import last_sentence
from .checker import SEVERAL_FOR_ONE, Check, MathChecker, list_items
from .literals import Scalar, has_modulus, normalize, parse_literal
from .negated import negated_statement
from .relations import read_relations
from .units import Quantity, convert, quantity, unit_of, unit_written_after
from .visible import visible

__all__ = [
    "MATH_EXTRACTORS",
    "MathReward",
    "UNMARKED_EXTRACTORS",
    "find_answer",
    "gold_answer",
    "register_rewards",
    "several_stated",
]

# The answer tag first (even truncated: R1-style prompts ask for it), then the later of the last box and
# the last "the answer is", then GSM8K's ####.
MATH_EXTRACTORS = ("open_answer_tag", "final_statement", "gsm8k")
# Unmarked answers, in the order a careful reader falls back on them.
UNMARKED_EXTRACTORS = ("last_math", "bare", "last_number")
_CLOSE_TAG = "</answer>"
_ANSWER_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_UNDECIDED = re.compile(lexicon.pattern("undecided"), re.IGNORECASE)  # "The candidates are 12 and 13; I cannot decide."
_HEDGE_WORD = re.compile(lexicon.pattern("hedges", single_letters=False), re.IGNORECASE)  # "or" in any language
_MAX_BARE = 200  # a completion this short may be the gold itself
_MAX_CANDIDATE = 40  # a longer line is no bare candidate value
_PLAIN_NUMBER = re.compile(r"\s*\$?\s*[-+]?\d[\d,.\s/]*\$?\.?\s*")  # 12, -3.5, 1,000, $7/2$


def find_answer(text: str, *, last_number: bool = True) -> Extraction | Unreadable | None:
    """The completion's final answer by the math family's policy, whatever its length (callers reject
    over-long answers with a reason that says so): ``MATH_EXTRACTORS``, then, unless ``last_number`` is
    False, the last math span, a bare answer and the last number that stands alone, read only after the
    last "the answer is" (never past a stated answer) and never in a completion cut off mid-sentence.
    :class:`Unreadable` when a stated answer cannot be read faithfully (``the answer is 5 or more``).
    Completions up to ``_REMEMBERED_CHARS`` are remembered: a group often repeats one (easy prompts)."""
    if len(text) <= _REMEMBERED_CHARS:
        return _remembered_answer(text, last_number)
    return _answer(text, last_number)


_REMEMBERED_CHARS = 4096
_REMEMBERED_ROWS = 4096  # rows whose reading a math reward keeps (a few training steps' worth)


@functools.lru_cache(maxsize=1024)
def _remembered_answer(text: str, last_number: bool) -> Extraction | Unreadable | None:
    return _answer(text, last_number)


def _answer(text: str, last_number: bool) -> Extraction | Unreadable | None:
    """``find_answer`` without the memo."""
    text = canonical(text)
    found = extract_answer(text, MATH_EXTRACTORS, max_chars=None)
    if isinstance(found, Unreadable) and found.how == "open_answer_tag" and _CLOSE_TAG in text:
        corrected = extract_answer(text[text.rfind(_CLOSE_TAG) :], ("final_statement",), max_chars=None)
        found = corrected if isinstance(corrected, Extraction) else found  # "<answer>5</answer> Wait... The answer is 6."
    if isinstance(found, Extraction) and found.how == "open_answer_tag" and last_number and bare(found.answer, None) is None:
        shown = visible(found.answer)
        inner = _unmarked(shown) if shown else None  # prose in the tag: read what is visible of it
        return found if inner is None else Extraction(inner.answer, found.how) if isinstance(inner, Extraction) else inner
    if found is not None or not last_number:
        return found
    return _unmarked(after_statement(text))


def _unmarked(text: str) -> Extraction | Unreadable | None:
    """An unmarked answer (the last math span, a bare answer, the last number), unless the text was cut off."""
    closing = _closing_values(text)
    if len(closing) > 1:
        return Unreadable(f"several values, one per line ({', '.join(closing)}): no one answer", "last_number")
    found = extract_answer(text, UNMARKED_EXTRACTORS, max_chars=None)
    if isinstance(found, Extraction) and found.how != "bare" and looks_truncated(text):
        return Unreadable("the text stops mid-sentence (cut off?): its tail is no final answer", found.how)
    if isinstance(found, Extraction) and found.how != "bare" and _UNDECIDED.search(last := last_sentence(text)):
        return Unreadable(f"the last sentence leaves the choice open: {last[-80:]!r}", found.how)  # "I cannot decide"
    return found


def _closing_values(text: str, limit: int = 50) -> list[str]:
    """The distinct values ``text`` ends with one per line, each line one plain number and nothing else (``12\\n10``:
    a list of candidates, not an answer), up to the second one found among its last ``limit`` lines."""
    values: list[str] = []
    for line in reversed(text.strip().splitlines()[-limit:]):
        if not line.strip():
            continue
        if len(line) > _MAX_CANDIDATE or not _PLAIN_NUMBER.fullmatch(line):
            break  # a sentence, not a bare value (told without the normaliser's cost)
        value = normalize(line)
        if not value or parse_literal(value) is None:
            break
        values = values if value in values else [value, *values]
        if len(values) > 1:
            break
    return values


def gold_answer(gold: Any) -> str | None:
    """The answer inside a gold column value: its last ``\\boxed{}``, GSM8K's ``#### x``, what a reader finds in
    it (a bare answer, its math spans, its last number), but never one part of a gold that holds other
    values: a one-line gold such as ``(2, 6), (1, n) \\text{ for any } n \\ge 1`` is the answer as a whole."""
    if gold is None or isinstance(gold, bool):
        return None
    text = str(gold).strip()
    if not text:
        return None
    marked = gsm8k(text, None) or final_statement(text, None)
    if isinstance(marked, str):
        return marked
    found = read_answer(text, None)
    if not isinstance(found, str):
        return text
    if found == text or "\n" in text or _SENTENCE.search(text):
        return found  # a bare answer, or a full solution (several sentences): what a reader finds in it
    digits = sum(char.isdigit() for char in text) - sum(char.isdigit() for char in found)
    return found if digits == 0 else text


_SENTENCE = re.compile(r"[.!?]\s+[A-Z]")
_PLUS_MINUS = re.compile(r"\\pm(?![A-Za-z])|±")
_EITHER_SIGN = re.compile(r"\\(?:pm|mp)(?![A-Za-z])|[±∓]")  # a value with either sign: two values


def _plus_minus(answer: str) -> str:
    """A gold written with one ``\\pm`` as the two values it stands for: ``\\pm 4`` is ``4, -4``, ``2 \\pm \\sqrt{7}``
    is ``2+\\sqrt{7}, 2-\\sqrt{7}`` (an answer listing both is right); anything else as written."""
    signs = list(_PLUS_MINUS.finditer(answer))
    if len(signs) != 1 or any(char in answer for char in "=<>,;") or "\\{" in answer:
        return answer
    left, right = answer[: signs[0].start()].strip(), answer[signs[0].end() :].strip()
    if not right or bracket_depths(answer)[signs[0].start()] != 0:
        return answer
    right = right if right.replace(".", "").isalnum() or right.startswith("\\") and "+" not in right and "-" not in right else f"({right})"
    return f"{right}, -{right}" if not left else f"{left}+{right}, {left}-{right}"


def _one_value(gold: str) -> bool:
    """Whether a normalised gold is one value: no list, no set, no sign that stands for two."""
    return "\\{" not in gold and not _EITHER_SIGN.search(gold) and len(list_items(gold)) == 1


class _Gold(NamedTuple):
    """A gold column value read once (golds repeat every step and epoch: cached)."""

    text: str  # normalised; a gold offering alternatives ("n = 1 or n = 2") as the list of its values
    unit: str | None
    is_number: bool
    comma: str  # read with decimal commas ("1,22" is 1.22), for answers that are one number


@functools.lru_cache(maxsize=1 << 14)
def _gold(value: str, max_chars: int) -> _Gold | str | None:
    """The gold of a gold column value; an answer longer than ``max_chars`` comes back as written, for the
    caller to report, and None when there is none."""
    answer = gold_answer(value)
    if answer is None or len(answer) > max_chars:
        return answer
    values = [normalize(part) for part in alternatives(_plus_minus(answer))]
    text = values[0] if len(values) == 1 else ", ".join(values)
    if not text or len(text) > max_chars:
        return text or None
    unit = unit_of(answer) or (unit_of(value) if "\n" not in value else None)  # "112\\,\\mathrm{s}": read as 112
    return _Gold(text, unit, isinstance(parse_literal(text), Scalar), normalize(answer, decimal_comma=True))


class _Pending(NamedTuple):
    """A row to check: the normalised ``(gold, answer)`` pairs (one, or one per value the answer offers, ``5 or 6``,
    each of which must equal the gold), whether the answer was stated (a box, a tag, "the answer is") rather than
    guessed from unmarked text, and the ``((closed side, closed side), statement)`` pairs its relation chain
    needs equal to be true (``9 = 10`` is false; see ``relations``)."""

    pairs: list[tuple[str, str]]
    stated: bool
    sides: tuple[tuple[tuple[str, str], str], ...] = ()


class MathReward(Reward):
    """1.0 when the final answer equals the gold answer, else 0.0; ``verdict`` says "correct"."""

    name = "math"
    description = "Math answer verification (boxed/answer-tag/phrase extraction, exact + Math-Verify) with hard deadlines"

    def __init__(
        self,
        *,
        column: str = "solution",
        timeout: float = 5.0,
        timeout_score: float | None = None,
        last_number: bool = True,
        max_answer_chars: int = 1000,
        workers: int | None = None,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        self.column = column
        self.timeout_score = timeout_score
        self.last_number = last_number
        self.max_answer_chars = max_answer_chars
        self.checker = MathChecker(timeout, workers)
        self._prepared = Kept(_REMEMBERED_ROWS)  # (completion, gold) -> its score, or what to check

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def score_batch(self, batch: Batch) -> list[Score]:
        golds = batch.column(self.column)
        scores: list[Score | None] = [None] * len(batch)
        pending: dict[int, _Pending] = {}
        for i, (text, gold) in enumerate(zip(batch.texts, golds, strict=True)):
            outcome = self._remembered(text, gold)
            if isinstance(outcome, Score):
                scores[i] = outcome
            else:
                pending[i] = outcome
        checks = iter(self.checker.compare([pair for row in pending.values()
                                            for pair in (*row.pairs, *(side for side, _ in row.sides))]))
        for i, row in pending.items():
            score = self._combined([self._score(next(checks), *pair) for pair in row.pairs])
            score = self._true_statement(score, [(next(checks), statement) for _, statement in row.sides])
            # a wrong unmarked answer (``:``, ``Solution``) is final, as are several different stated answers:
            # a verifier would grade its own guess, or pick one of the answers
            scores[i] = score if row.stated or score.value != 0.0 else dataclasses.replace(score, final=True)
        return scores  # type: ignore[return-value]

    def _remembered(self, text: str | None, gold_value: Any) -> Score | _Pending:
        """:meth:`_prepare`, remembered for a completion up to ``_REMEMBERED_CHARS`` with a text gold: a group
        often repeats one (easy prompts), and the answer it reads depends on nothing else."""
        if text is None or len(text) > _REMEMBERED_CHARS or not isinstance(gold_value, str):
            return self._prepare(text, gold_value)
        key = (text, gold_value)
        outcome = self._prepared.get(key)
        return self._prepared.keep(key, self._prepare(text, gold_value)) if outcome is None else outcome

    def _prepare(self, text: str | None, gold_value: Any) -> Score | _Pending:
        """A final score for rows decided without a parser, else what to check (see :class:`_Pending`)."""
        if text is None:
            return Score(None, "no text")
        if gold_value is None or isinstance(gold_value, bool) or not str(gold_value).strip():
            return Score(None, f"no gold answer in column {self.column!r}")
        gold_text = str(gold_value).strip()
        gold = _gold(gold_text, self.max_answer_chars) if len(gold_text) <= 20 * self.max_answer_chars else None
        if not isinstance(gold, _Gold):
            return Score(None, f"gold unparseable: no answer of at most {self.max_answer_chars} chars found in it")
        found = find_answer(text, last_number=self.last_number)
        if not isinstance(found, Extraction) and len(text) <= _MAX_BARE and normalize(canonical(text).strip()) == gold.text:
            return _Pending([(gold.text, gold.text)], True)  # the completion is the gold ("Ada Lovelace"), whatever markup it lacks
        # Failures marked final are never sent to a rescue's model verifier: without one readable answer,
        # a verifier would grade its own reading of the text (what judge master keys exploit).
        if found is None:
            return Score(0.0, "no answer found", False, final=True)
        if isinstance(found, Unreadable):
            return Score(0.0, f"no answer: {found.reason}", False, final=True)
        shown = visible(found.answer)  # "\\sout{12} 13", "{\\color{white} 12} 13", "13 % 12" answer 13
        if not shown:
            return Score(0.0, f"no answer: nothing of {_short(found.answer)!r} is visible (struck out, hidden or a "
                              "comment)", False, final=True)
        found = Extraction(shown, found.how)
        denial = negated_statement(canonical(text), shown)  # "It cannot be $x = 12$." states no 12
        if denial is not None:
            return Score(0.0, f"a negated statement: {_short(denial)!r} denies the answer", False, final=True)
        if len(found.answer) > self.max_answer_chars:
            return Score(0.0, f"answer too long ({len(found.answer)} chars > {self.max_answer_chars})", False,
                         final=True)
        stated = (found.how in MATH_EXTRACTORS and not several_stated(canonical(text))
                  and not _HEDGE_WORD.search(found.answer))  # "41 \text{ oder } 42": a hedge, whatever it scores
        offered = alternatives(found.answer)
        if gold.unit is not None:  # "$232 centimeters$", "$232$ centimeters", "(or possibly $404 meters$)" read as a
            written = canonical(text)  # bare number: the unit written after it is checked
            offered = [(unit_written_after(written, value) or value) if canonical_number(value) is not None else value
                       for value in offered]  # fmt: skip
        if not all(offered):
            return Score(0.0, f"no answer: a hedge, {_short(found.answer)!r} leaves an alternative empty", False,
                         final=True)
        # "112\,\text{min}" is one quantity, no list; "d = 232 centimeters" the quantity it names
        whole = quantity(_named_value(offered[0])) if len(offered) == 1 else None
        quantities = [whole] if whole else [quantity(item) for value in offered for item in list_items(value)]
        other = next((q.unit for q in quantities if q is not None and gold.unit is not None and q.unit != gold.unit), None)
        if whole is not None and gold.unit is not None:  # "2300 cm" for "23\,\text{m}": the value in the gold's unit
            converted = _in_unit(whole, gold.unit)
            if isinstance(converted, Score):
                return converted
            offered = [converted]
        elif whole is not None:
            offered = [whole.number]  # a unit the gold does not state: its number answers
        elif other is not None:
            return Score(0.0, f"not equal: {_short(found.answer)} is in {other}, the gold in {gold.unit}", False)
        answers = [normalize(value, decimal_comma=gold.is_number) for value in offered]
        if not all(answers):
            return Score(0.0, "no answer found", False, final=True)
        if any(_EITHER_SIGN.search(answer) for answer in answers) and _one_value(gold.text):
            # "\pm t = 26" for "t = 26": Math-Verify reads past a sign it cannot parse, and would pay it
            return Score(0.0, f"not equal: {_short(found.answer)} offers two values (a ± sign), the gold one", False,
                         final=True)
        if len(answers) > 1 and len(list_items(gold.text)) == len(answers) and _solutions(answers):
            answers = [", ".join(answers)]  # "x = 1 or x = 2" for the gold's two solutions "1, 2"
        modular = has_modulus(found.answer)  # "8 \\equiv 3 \\pmod 5": its sides differ by design
        readings = [read_relations(gold.text, answer, modular=modular) for answer in answers]
        refused = next((reading.refused for reading in readings if reading.refused), None)
        if refused is not None:  # "x \\approx 10" for 10: no value equal to the gold, whatever its number
            return Score(0.0, f"{refused}: {_short(found.answer)}", False, final=True)
        sides = tuple((check, answer) for answer, reading in zip(answers, readings, strict=True) for check in reading.checks)
        answers = [reading.answer for reading in readings]  # "x = 2 \\cdot 5 = 10", "10 = x" state 10
        if len(answers) == 1 and not gold.is_number and isinstance(parse_literal(answers[0]), Scalar):
            return _Pending([(gold.comma, answers[0])], stated, sides)  # "1,22" gold, "1.22" answer
        return _Pending([(gold.text, answer) for answer in answers], stated, sides)

    def _true_statement(self, score: Score, sides: list[tuple[Check, str]]) -> Score:
        """``score``, unless the answer's statement is false (``9 = 10``: two closed sides that differ), which
        fails it, or could not be checked in time while ``score`` pays, which abstains (or fails, when the
        answer's own runaway side used its whole budget)."""
        for check, statement in sides:
            if check.status == "not equal":
                return Score(0.0, f"a false equation: {_short(statement)}", False, final=True)
        for check, statement in sides:
            if check.status in ("runaway", "timeout", "error") and (score.value or 0.0) > 0.0:
                return self._score(check, statement, statement)
        return score

    def _score(self, check: Check, gold: str, answer: str) -> Score:
        how = f" ({check.detail})" if check.detail not in ("", "exact", "as written") else ""
        if check.status == "equal":
            return Score(1.0, f"correct: {_short(answer)}{how if check.detail == 'compared as written' else ''}", True)
        if check.status == "not equal":
            return Score(0.0, f"not equal: {_short(answer)} vs {_short(gold)}{how}", False,
                         final=check.detail == SEVERAL_FOR_ONE)
        if check.status == "answer unparseable":
            return Score(0.0, f"answer unparseable: {_short(answer)}", False)
        if check.status == "gold unparseable":
            return Score(None, f"gold unparseable: {_short(gold)}")
        if check.status == "runaway":  # the answer's doing (a tower of powers): a scored failure unless told otherwise
            value = 0.0 if self.timeout_score is None else self.timeout_score
            return Score(value, f"runaway: the answer used its whole {self.checker.timeout:g} s of cpu "
                                f"({check.detail}): {_short(answer)}", False, "timeout")
        if check.status == "timeout":  # the machine's doing: the pair did not get its cpu in time
            busy = f" with only {check.detail} (a busy machine)" if check.detail else ""
            return Score(self.timeout_score, f"timeout after {self.checker.timeout:g} s{busy}", None, "timeout")
        return Score(None, f"error: {check.detail}", None, "error")

    @staticmethod
    def _combined(scores: list[Score]) -> Score:
        """One score for the values an answer offers: 1.0 only when every one is right; a wrong one decides."""
        if len(scores) == 1:
            return scores[0]
        wrong = next((score for score in scores if score.verdict is False), None)
        if wrong is not None:
            return Score(0.0, f"several values offered, not all right: {wrong.reason}", False, final=True)
        undecided = next((score for score in scores if score.verdict is None), None)
        if undecided is not None:
            return undecided
        return Score(1.0, "correct: every value offered " + "; ".join(score.reason for score in scores), True)


def several_stated(text: str) -> bool:
    """Whether the completion states more than one distinct answer (its boxes and ``<answer>`` blocks)."""
    if sum(text.count(command) for command in (*_BOX_COMMANDS, "<answer>")) < 2:
        return False  # one statement at most (told without reading them)
    stated = {" ".join(content.split()) for _, _, content in _boxes(text)}
    stated |= {" ".join(block.group(1).split()) for block in _ANSWER_BLOCK.finditer(text)
               if not any(command in block.group(1) for command in _BOX_COMMANDS)}  # a box in it is counted
    return len(stated) > 1


_SOLUTION = re.compile(r"([A-Za-z](?:_\{?\w+\}?)?)\s*=\s*[^=,;]+")


def _solutions(answers: list[str]) -> bool:
    """Whether values offered with "or" are the solutions of one equation (``x = 1 or x = 2``: each an equation
    for the same unknown), which a list gold holds as ``1, 2``; a hedge (``4 or maybe 4, 5``, ``8 or 23``) is not."""
    names = {match.group(1) if (match := _SOLUTION.fullmatch(answer)) else None for answer in answers}
    return len(names) == 1 and None not in names


def _named_value(answer: str) -> str:
    """The value side of ``x = value`` (a quantity named by one letter: ``d = 232 centimeters``), else ``answer``."""
    return answer.split("=", 1)[1] if _SOLUTION.fullmatch(answer.strip()) else answer


def _in_unit(found: Quantity, unit: str) -> str | Score:
    """The number of ``found`` expressed in ``unit`` (exactly), or the score when it cannot be: 0 for a quantity
    of another kind (a time for a length), an abstention when its number is no exact literal."""
    if found.unit == unit:
        return found.number
    number = parse_literal(normalize(found.number))
    if not isinstance(number, Scalar) or not number.rational or number.percent:
        return Score(None, f"cannot compare: {found.number} {found.unit} is no exact number to convert to {unit}")
    value = convert(number.value, found.unit, unit)
    if value is None:
        return Score(0.0, f"not equal: {found.number} {found.unit} is not a quantity in {unit}", False)
    return _decimal(value) if _terminates(value.denominator) else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _terminates(denominator: int) -> bool:
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    return denominator == 1


def _decimal(value: Fraction) -> str:
    from decimal import Decimal, localcontext

    with localcontext() as context:
        context.prec = 60
        return format((Decimal(value.numerator) / Decimal(value.denominator)).normalize(), "f")


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@hookimpl
def register_rewards(register):
    register(MathReward)
