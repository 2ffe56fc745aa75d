"""The ``math`` reward: is the completion's final answer equal to the gold answer?

Extraction (``rewardhub.rewards.extract``, in the math family's order) and plain literals
(``literals``) are decided in the caller; everything that needs a parser (LaTeX, expressions, sets,
intervals, matrices, equations) is parsed and verified with Math-Verify in worker processes with a
hard deadline per answer (``checker``), so no completion can hang training.
"""

from __future__ import annotations

from typing import Any

from rewardhub import Batch, Reward, Score, hookimpl

from ..extract import Extraction, extract_answer, gsm8k, last_boxed
from .checker import Check, MathChecker
from .literals import Scalar, normalize, parse_literal

# The answer tag first (even truncated: R1-style prompts ask for it), then boxes, phrases, GSM8K's ####.
MATH_EXTRACTORS = ("open_answer_tag", "boxed", "answer_is", "gsm8k")


def find_answer(text: str, *, last_number: bool = True) -> Extraction | None:
    """The completion's final answer by the math family's policy (``MATH_EXTRACTORS``, then optionally the
    last number), whatever its length: callers reject over-long answers with a reason that says so."""
    extractors = (*MATH_EXTRACTORS, "last_number") if last_number else MATH_EXTRACTORS
    return extract_answer(text, extractors, max_chars=None)


def gold_answer(gold: Any) -> str | None:
    """The answer inside a gold column value: its last ``\\boxed{}``, GSM8K's ``#### x``, or the value itself."""
    if gold is None or isinstance(gold, bool):
        return None
    text = str(gold).strip()
    return last_boxed(text, None) or gsm8k(text, None) or text or None


class MathReward(Reward):
    """1.0 when the final answer equals the gold answer, else 0.0; ``verdict`` says "correct"."""

    name = "math"
    description = "Math answer verification (boxed/answer-tag/phrase extraction, exact + Math-Verify) with hard deadlines"

    def __init__(
        self,
        *,
        column: str = "solution",
        timeout: float = 5.0,
        timeout_score: float | None = 0.0,
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

    def score_batch(self, batch: Batch) -> list[Score]:
        golds = batch.column(self.column)
        scores: list[Score | None] = [None] * len(batch)
        pending: dict[int, tuple[str, str]] = {}
        for i, (text, gold) in enumerate(zip(batch.texts, golds, strict=True)):
            outcome = self._prepare(text, gold)
            if isinstance(outcome, Score):
                scores[i] = outcome
            else:
                pending[i] = outcome
        checks = self.checker.compare(list(pending.values()))
        for (i, (gold, answer)), check in zip(pending.items(), checks, strict=True):
            scores[i] = self._score(check, gold, answer)
        return scores  # type: ignore[return-value]

    def _prepare(self, text: str | None, gold_value: Any) -> Score | tuple[str, str]:
        """A final score for rows decided without a parser, else the normalised (gold, answer) pair."""
        if text is None:
            return Score(None, "no text")
        raw_gold = gold_answer(gold_value)
        if raw_gold is None:
            return Score(None, f"no gold answer in column {self.column!r}")
        if len(raw_gold) > self.max_answer_chars:
            return Score(None, f"gold unparseable: {len(raw_gold)} chars and no \\boxed answer")
        found = find_answer(text, last_number=self.last_number)
        if found is None:
            return Score(0.0, "no answer found", False)
        if len(found.answer) > self.max_answer_chars:
            return Score(0.0, f"answer too long ({len(found.answer)} chars > {self.max_answer_chars})", False)
        gold = normalize(raw_gold)
        answer = normalize(found.answer, decimal_comma=isinstance(parse_literal(gold), Scalar))
        if not answer:
            return Score(0.0, "no answer found", False)
        return gold, answer

    def _score(self, check: Check, gold: str, answer: str) -> Score:
        if check.status == "equal":
            return Score(1.0, f"correct: {_short(answer)}", True)
        if check.status == "not equal":
            return Score(0.0, f"not equal: {_short(answer)} vs {_short(gold)}", False)
        if check.status == "answer unparseable":
            return Score(0.0, f"answer unparseable: {_short(answer)}", False)
        if check.status == "gold unparseable":
            return Score(None, f"gold unparseable: {_short(gold)}")
        if check.status == "timeout":
            return Score(self.timeout_score, f"timeout after {self.checker.timeout:g} s", None, "timeout")
        return Score(None, f"error: {check.detail}", None, "error")


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@hookimpl
def register_rewards(register):
    register(MathReward)
