"""The ``similarity`` reward: how close the completion is to one or several reference texts.

Metrics (``metric``): ``lcs_f1`` (the default: SQuAD-normalised tokens, F-measure of their longest
common subsequence, i.e. ROUGE-L on SQuAD's normalisation, built in), ``bleu`` and ``chrf`` (sacrebleu's
sentence scores, multi-reference), ``rouge1``, ``rouge2``, ``rougeL`` (rouge-score's F-measure, best
reference), ``token_f1`` and ``exact_match`` (SQuAD's normalisation: lowercase, punctuation and articles
removed; best reference), ``fuzzy`` (rapidfuzz's ``ratio`` or ``token_sort_ratio`` on the normalised
texts). Every value is in [0, 1]. Both texts are read canonically first (``rewards/text``: invisible
characters, full-width forms, look-alike letters).

Bag-of-words metrics (``token_f1``, ``rouge1``, ``fuzzy`` with ``token_sort_ratio``) do not look at word
order: the reference's words reversed or shuffled (word salad) get full credit, and the reason says so.
``chrf`` matches character n-grams of up to 6 characters, so salad keeps part of its credit (0.47 for a
14-word sentence reversed). The
default ``lcs_f1`` credits only words in the reference's order: the reference reversed scores about
``2 / n`` of its ``n`` words.
With ``extractors`` the answer is first read from the completion (``\\boxed``, ``<answer>``, ...);
otherwise the whole completion (after a closed ``<think>`` block) is compared.
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from .deps import require
from .text import canonical
from .text.extract import check_extractors, extract_answer

__all__ = [
    "FUZZY_SCORERS",
    "METRICS",
    "ORDER_BLIND",
    "Similarity",
    "lcs_f1",
    "lcs_length",
    "register_rewards",
    "squad_normalize",
    "token_f1",
]

METRICS = ("lcs_f1", "bleu", "chrf", "rouge1", "rouge2", "rougeL", "token_f1", "exact_match", "fuzzy")
# Metrics that ignore word order: the reference's words in any order score (almost) full credit.
ORDER_BLIND = {"token_f1": "bag of words", "rouge1": "bag of words", "chrf": "character n-grams"}
FUZZY_SCORERS = ("ratio", "token_sort_ratio")
_LIBRARIES = {"bleu": "sacrebleu", "chrf": "sacrebleu", "rouge1": "rouge_score", "rouge2": "rouge_score",
              "rougeL": "rouge_score", "fuzzy": "rapidfuzz"}
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_THINK_END = "</think>"


def squad_normalize(text: str) -> str:
    """SQuAD's answer normalisation: lowercase, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD's token-level F1 of two normalised texts (both empty: 1.0; one empty: 0.0)."""
    predicted, expected = squad_normalize(prediction).split(), squad_normalize(reference).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def lcs_f1(prediction: str, reference: str) -> float:
    """F-measure of the longest common subsequence of the two texts' SQuAD-normalised tokens (ROUGE-L on
    SQuAD's normalisation; both empty: 1.0; one empty: 0.0). Word salad of the reference scores low."""
    predicted, expected = squad_normalize(prediction).split(), squad_normalize(reference).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = lcs_length(predicted, expected)
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists, bit-parallel (Hyyrö 2004): one big-int
    step per token of ``b``, so long texts cost ``len(a) * len(b) / 64`` word operations."""
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    row = full
    for token in b:
        matched = row & masks.get(token, 0)
        row = ((row + matched) | (row - matched)) & full
    return len(a) - row.bit_count()


class Similarity(Reward):
    """A text-similarity metric between the completion (or its extracted answer) and the reference(s)."""

    name = "similarity"
    description = ("word-order-aware LCS F1 (default), BLEU, chrF, ROUGE-1/2/L, SQuAD token F1 / exact match or fuzzy "
                   "ratio against the reference(s)")

    def __init__(
        self,
        *,
        metric: str = "lcs_f1",
        column: str = "solution",
        extractors: list[str] | None = None,
        fuzzy_scorer: str = "ratio",
        rouge_stemmer: bool = False,
        lowercase: bool = False,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if metric not in METRICS:
            import difflib

            close = difflib.get_close_matches(metric, METRICS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"similarity: metric must be one of {', '.join(METRICS)}; got {metric!r}{hint}")
        if fuzzy_scorer not in FUZZY_SCORERS:
            raise ConfigError(f"similarity: fuzzy_scorer must be one of {', '.join(FUZZY_SCORERS)}; got {fuzzy_scorer!r}")
        if metric in _LIBRARIES:
            require(self.name, "similarity", _LIBRARIES[metric])
        self.metric = metric
        self.column = column
        self.extractors = None if extractors is None else check_extractors(extractors)
        self.fuzzy_scorer = fuzzy_scorer
        self.rouge_stemmer = rouge_stemmer
        self.lowercase = lowercase  # for bleu / chrf / rouge (token_f1, exact_match and fuzzy always fold case)
        self._scorer: Any = None

    def score_sample(self, text: str, row: Row) -> Score:
        references = _canonical_references(tuple(_references(row[self.column])))
        if not references:
            return Score(None, f"no reference text in column {self.column!r}")
        text = canonical(text)
        hypothesis = text.rsplit(_THINK_END, 1)[1] if _THINK_END in text else text
        if self.extractors is not None:
            found = extract_answer(hypothesis, self.extractors)
            if found is None:
                return Score(0.0, f"no answer found (tried {', '.join(self.extractors)})", False)
            hypothesis = found.answer
        hypothesis = hypothesis.strip()
        if not hypothesis:
            return Score(0.0, "empty answer", False)
        value = min(max(self._measure(hypothesis, references), 0.0), 1.0)
        best = "" if len(references) == 1 else f" (best of {len(references)} references)"
        blind = ORDER_BLIND.get(self.metric) or ("bag of words" if self.metric == "fuzzy"
                                                 and self.fuzzy_scorer == "token_sort_ratio" else None)
        note = f"; {blind}: word order not checked" if blind else ""
        return Score(value, f"{self.metric} {value:.3f}{best}{note}", value == 1.0)

    def _measure(self, hypothesis: str, references: list[str]) -> float:
        if self.metric == "lcs_f1":
            return max(lcs_f1(hypothesis, r) for r in references)
        if self.metric == "token_f1":
            return max(token_f1(hypothesis, r) for r in references)
        if self.metric == "exact_match":
            return float(any(squad_normalize(hypothesis) == squad_normalize(r) for r in references))
        scorer = self._metric_scorer()
        if self.metric == "fuzzy":
            return max(scorer(squad_normalize(hypothesis), squad_normalize(r)) for r in references) / 100
        if self.lowercase:
            hypothesis, references = hypothesis.lower(), [r.lower() for r in references]
        if self.metric in ("bleu", "chrf"):
            return scorer.sentence_score(hypothesis, references).score / 100
        return max(scorer.score(r, hypothesis)[self.metric].fmeasure for r in references)

    def _metric_scorer(self) -> Any:
        """The library's scorer, built once per reward (imports happen here, inside the family)."""
        if self._scorer is None:
            if self.metric == "bleu":
                from sacrebleu.metrics import BLEU

                self._scorer = BLEU(effective_order=True)
            elif self.metric == "chrf":
                from sacrebleu.metrics import CHRF

                self._scorer = CHRF()
            elif self.metric == "fuzzy":
                from rapidfuzz import fuzz

                self._scorer = getattr(fuzz, self.fuzzy_scorer)
            else:
                from rouge_score.rouge_scorer import RougeScorer

                self._scorer = RougeScorer([self.metric], use_stemmer=self.rouge_stemmer)
        return self._scorer

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_scorer": None}  # rebuilt on first use: library objects may not pickle


@functools.lru_cache(maxsize=4096)
def _canonical_references(references: tuple[str, ...]) -> list[str]:
    """The references read canonically (cached: a group's completions share their references)."""
    return [canonical(reference) for reference in references]


def _references(value: Any) -> list[str]:
    """The reference column as a list of non-empty texts (a string, or a list of alternatives)."""
    if isinstance(value, str):
        items: Sequence[Any] = [value]
    elif isinstance(value, Sequence) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
    else:
        items = [] if value is None else [value]
    return [str(item).strip() for item in items if item is not None and str(item).strip()]


@hookimpl
def register_rewards(register):
    register(Similarity)
