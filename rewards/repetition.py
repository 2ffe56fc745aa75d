"""``repetition_penalty``: penalise repeated n-grams, from 0 (none repeated) down to ``max_penalty``.

As in the literature (Yeo et al., "Demystifying Long Chain-of-Thought Reasoning in LLMs"): the
penalty is the fraction of the completion's word n-grams that repeat an earlier one, scaled by
``max_penalty``. Linear time: one pass with a set.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from rewardhub import ConfigError, Reward, Row, Score
from rewardhub.hookspecs import hookimpl


def words(text: str) -> list[str]:
    """Lower-cased whitespace-separated words: the units n-grams are built from."""
    return text.lower().split()


def repeated_fraction(tokens: Sequence[Hashable], n: int) -> float | None:
    """Fraction of the ``n``-grams of ``tokens`` that already occurred earlier; None if there are none."""
    total = len(tokens) - n + 1
    if total <= 0:
        return None
    distinct = len(set(zip(*(tokens[i:] for i in range(n)), strict=False)))
    return (total - distinct) / total


class RepetitionPenalty(Reward):
    """``max_penalty * fraction of repeated word n-grams``: 0.0 for fresh text, ``max_penalty`` for a loop."""

    name = "repetition_penalty"
    description = "n-gram repetition penalty in [max_penalty, 0]: fraction of repeated n-grams x max_penalty"

    def __init__(self, *, ngram_size: int = 3, max_penalty: float = -1.0, on_error: str = "none"):
        super().__init__(on_error=on_error)
        if ngram_size < 1:
            raise ConfigError(f"ngram_size must be >= 1, got {ngram_size}")
        if max_penalty > 0:
            raise ConfigError(f"max_penalty must be <= 0 (it is a penalty), got {max_penalty}")
        self.ngram_size = ngram_size
        self.max_penalty = float(max_penalty)

    def score_sample(self, text: str, row: Row) -> Score:
        fraction = repeated_fraction(words(text), self.ngram_size)
        if fraction is None:
            return Score(0.0, f"fewer than {self.ngram_size} words: nothing to penalise")
        value = fraction * self.max_penalty if fraction else 0.0  # never -0.0
        return Score(value, f"{fraction:.0%} of {self.ngram_size}-grams repeated")


@hookimpl
def register_rewards(register):
    register(RepetitionPenalty)
