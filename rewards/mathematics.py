"""The ``math`` reward: is the completion's final answer equal to the gold answer?

Extraction (``extract``, in the math family's order) and plain literals (``math_literals``) are
decided in the caller; everything that needs a parser (LaTeX, expressions, sets, intervals,
matrices, equations) is parsed and verified with Math-Verify in worker processes with a hard
deadline per answer, so no completion can hang training.
The module is named ``mathematics`` to never be confused with the standard library's ``math``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl
from rewardhub.workers import WorkerPool, shared_pool

from .extract import Extraction, extract_answer, gsm8k, last_boxed
from .math_literals import Scalar, literal_verdict, normalize, parse_literal

# The answer tag first (even truncated: R1-style prompts ask for it), then boxes, phrases, GSM8K's ####.
MATH_EXTRACTORS = ("open_answer_tag", "boxed", "answer_is", "gsm8k")
_REQUIRES = ("rewardhub.rewards.mathematics:warm_up",)
# One answer of each shape, so that the parser's and sympy's first-use costs are paid at worker start.
_WARM_UP = [("3", "x = 3"), ("\\frac{1}{2}", "0.5"), ("2\\sqrt{3}", "\\sqrt{12}"), ("2\\pi", "6.28"),
            ("(1, 2]", "[1, 2]"), ("(1, -2)", "(-2, 1)"), ("\\{1, 2\\}", "\\{2, 1\\}"), ("2x+2", "2(x+1)"),
            ("x > 2", "(2, \\infty)"), ("50\\%", "0.5"), ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1, 2)")]  # fmt: skip


@dataclass(frozen=True)
class Check:
    """The verdict on one (gold, answer) pair: ``status`` is ``equal``, ``not equal``,
    ``answer unparseable``, ``gold unparseable``, ``timeout`` or ``error``."""

    status: str
    detail: str = ""

    @property
    def verdict(self) -> bool | None:
        return {"equal": True, "not equal": False, "answer unparseable": False}.get(self.status)


class MathChecker:
    """Decides whether answers are equivalent: exact literals here, everything else in the workers.

    Identical pairs are checked once per call; each worker parses a given text once (LRU cache).
    """

    def __init__(self, timeout: float = 5.0, workers: int | None = None, pool: WorkerPool | None = None):
        if timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds per answer; got {timeout}")
        if workers is not None and workers < 1:
            raise ConfigError(f"workers must be at least 1 (or None for one per usable core); got {workers}")
        self.timeout = timeout
        self._workers = workers
        self._pool = pool

    @property
    def pool(self) -> WorkerPool:
        if self._pool is None:
            self._pool = shared_pool(self._workers)
        return self._pool

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_pool"] = None  # worker processes belong to this process: a copy finds its own pool
        return state

    def compare(self, pairs: Sequence[tuple[str, str]]) -> list[Check]:
        """One :class:`Check` per ``(gold, answer)`` pair of normalised answers."""
        unique = list(dict.fromkeys(pairs))
        checks: dict[tuple[str, str], Check] = {}
        for pair in unique:
            fast = _fast_verdict(*pair)
            if fast is not None:
                checks[pair] = Check("equal" if fast else "not equal", "exact")
        slow = [pair for pair in unique if pair not in checks]
        for pair, outcome in zip(
            slow, self.pool.map(verify_pair, slow, timeout=self.timeout, requires=_REQUIRES), strict=True
        ):
            if outcome.status == "ok":
                checks[pair] = Check(outcome.value)
            else:
                checks[pair] = Check(outcome.status, str(outcome.value))
        return [checks[pair] for pair in pairs]


@functools.lru_cache(maxsize=4096)
def _literal(text: str) -> Any:
    return parse_literal(text)


def _fast_verdict(gold: str, answer: str) -> bool | None:
    """The exact verdict for two plain literals; ``None`` when the full path must decide."""
    gold_literal = _literal(gold)
    answer_literal = _literal(answer) if gold_literal is not None else None
    if gold_literal is None or answer_literal is None:
        return None
    return literal_verdict(gold_literal, answer_literal)


# ----- the full path, run inside worker processes ----------------------------------------------------------
def verify_pair(pair: tuple[str, str]) -> str:
    """Worker function: parse both answers with Math-Verify and compare them; returns a ``Check`` status."""
    from math_verify import verify

    gold = _parse(pair[0])
    if not gold:
        return "gold unparseable"
    answer = _parse(pair[1])
    if not answer:
        return "answer unparseable"
    return "equal" if verify(gold, answer, timeout_seconds=None) else "not equal"


def warm_up() -> None:
    """Run in each worker before it takes work (see ``WorkerPool.map(requires=...)``)."""
    for pair in _WARM_UP:
        verify_pair(pair)


@functools.lru_cache(maxsize=8192)
def _parse(text: str) -> list:
    """Math-Verify's parse of one extracted answer (gold texts repeat across a batch: cached)."""
    import logging

    from latex2sympy2_extended import NormalizationConfig
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    for name in (
        "math_verify.parser",
        "math_verify.grader",
    ):  # its "timeout disabled" warning: we enforce ours
        logging.getLogger(name).setLevel(logging.ERROR)
    config = [
        LatexExtractionConfig(boxed_match_priority=0, normalization_config=NormalizationConfig(units=True)),
        ExprExtractionConfig(),
    ]
    return parse(
        "\\boxed{" + text + "}", extraction_config=config, fallback_mode="no_fallback", parsing_timeout=None
    )


def find_answer(text: str, *, last_number: bool = True) -> Extraction | None:
    """The completion's final answer by the math family's policy (``MATH_EXTRACTORS``, then optionally the
    last number), whatever its length: callers reject over-long answers with a reason that says so."""
    extractors = (*MATH_EXTRACTORS, "last_number") if last_number else MATH_EXTRACTORS
    return extract_answer(text, extractors, max_chars=None)


# ----- the reward --------------------------------------------------------------------------------------
def gold_answer(gold: Any) -> str | None:
    """The answer inside a gold column value: its last ``\\boxed{}``, GSM8K's ``#### x``, or the value itself."""
    if gold is None or isinstance(gold, bool):
        return None
    text = str(gold).strip()
    return last_boxed(text, None) or gsm8k(text, None) or text or None


class UsesMathWorkers(Reward):
    """Base of rewards that check answers with a :class:`MathChecker` (``self.checker``, may be ``None``)."""

    checker: MathChecker | None = None

    def evaluate_batch(self, batch: Batch) -> Any:
        # Start the workers first, so that a start-up failure raises a clear WorkerStartupError here
        # instead of being contained as per-sample errors by the base class.
        if self.checker is not None:
            self.checker.pool.start()
        return super().evaluate_batch(batch)


class MathReward(UsesMathWorkers):
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
            return Score(self.timeout_score, f"timeout after {self.checker.timeout:g} s")
        return Score(None, f"error: {check.detail}")


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@hookimpl
def register_rewards(register):
    register(MathReward)
