"""``repetition_penalty``: penalise repeated n-grams, from 0 (none repeated) down to ``max_penalty``.

As in the literature (Yeo et al., "Demystifying Long Chain-of-Thought Reasoning in LLMs"): the
penalty is the fraction of the completion's word n-grams that repeat an earlier one, scaled by
``max_penalty``. Linear time: one pass with a set. Written with ``sample_reward``, as a plugin
author would write it.

Words are read as a person sees them (:func:`rewardhub.rewards.text.canonical`), so a loop varied with
invisible characters is still a loop: a zero-width space inside a word (``c\u200bat``) is nothing, and
one between words (``the\u200bcat``) may be a space. Both readings are counted and the more repetitive
one decides, so wherever the invisible characters go, they cannot make a loop look fresh.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

from rewardhub import ConfigError, Score, hookimpl, sample_reward

from .text import canonical

__all__ = [
    "check_params",
    "register_rewards",
    "repeated_fraction",
    "repeated_share",
    "repetition_penalty",
    "word_readings",
    "words",
]

# Invisible characters that can stand between words (a line-break opportunity or a joiner): the second reading.
_ZERO_WIDTH = re.compile("[​‌‍⁠᠎﻿]")


def words(text: str) -> list[str]:
    """Lower-cased whitespace-separated words of the canonical text: the units n-grams are built from."""
    return canonical(text).lower().split()


def word_readings(text: str, seen: str | None = None) -> list[list[str]]:
    """The text's words with invisible characters read as nothing, and (when it has any) read as spaces.
    ``seen``: the canonical text, when the caller has read it already."""
    seen = canonical(text) if seen is None else seen
    read = seen.lower().split()
    if seen == text or _ZERO_WIDTH.search(text) is None:  # canonical removes every zero-width character
        return [read]
    return [read, words(_ZERO_WIDTH.sub(" ", text))]


def repeated_share(text: str, n: int, seen: str | None = None) -> float | None:
    """The largest :func:`repeated_fraction` of ``text``'s word readings (None when it has too few words);
    ``seen``: the canonical text, when the caller has read it already."""
    readings = word_readings(text, seen)
    if len(readings) == 1:  # most text: no invisible character, one reading
        return repeated_fraction(readings[0], n)
    fractions = [f for f in (repeated_fraction(r, n) for r in readings) if f is not None]
    return max(fractions) if fractions else None


def repeated_fraction(tokens: Sequence[Hashable], n: int) -> float | None:
    """Fraction of the ``n``-grams of ``tokens`` that already occurred earlier; None if there are none."""
    total = len(tokens) - n + 1
    if total <= 0:
        return None
    distinct = len(set(zip(*[tokens[i:] for i in range(n)], strict=False)))  # shifted copies as a list, not a generator
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
    fraction = repeated_share(text, ngram_size)
    if fraction is None:
        return Score(0.0, f"fewer than {ngram_size} words: nothing to penalise")
    value = fraction * max_penalty if fraction else 0.0  # never -0.0
    return Score(value, f"{fraction:.0%} of {ngram_size}-grams repeated")


@hookimpl
def register_rewards(register):
    register(repetition_penalty)
