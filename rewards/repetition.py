"""``repetition_penalty``: penalise repeated n-grams, from 0 (none repeated) down to ``max_penalty``.

As in the literature (Yeo et al., "Demystifying Long Chain-of-Thought Reasoning in LLMs"): the
penalty is the fraction of the completion's word n-grams that repeat an earlier one, scaled by
``max_penalty``. Linear time: one pass with a set. Written with ``sample_reward``, as a plugin
author would write it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from rewardhub import ConfigError, Score, hookimpl, sample_reward


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


def check_params(*, ngram_size: int, max_penalty: float) -> None:
    if ngram_size < 1:
        raise ConfigError(f"ngram_size must be >= 1, got {ngram_size}")
    if max_penalty > 0:
        raise ConfigError(f"max_penalty must be <= 0 (it is a penalty), got {max_penalty}")


@sample_reward(
    name="repetition_penalty",
    description="n-gram repetition penalty in [max_penalty, 0]: fraction of repeated n-grams x max_penalty",
    check=check_params,
)
def repetition_penalty(text: str, *, ngram_size: int = 3, max_penalty: float = -1.0) -> Score:
    """``max_penalty * fraction of repeated word n-grams``: 0.0 for fresh text, ``max_penalty`` for a loop."""
    fraction = repeated_fraction(words(text), ngram_size)
    if fraction is None:
        return Score(0.0, f"fewer than {ngram_size} words: nothing to penalise")
    value = fraction * max_penalty if fraction else 0.0  # never -0.0
    return Score(value, f"{fraction:.0%} of {ngram_size}-grams repeated")


@hookimpl
def register_rewards(register):
    register(repetition_penalty)
