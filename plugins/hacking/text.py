"""What the monitor reads from a completion's text: its length, its word n-grams and its repetition.

Nothing here scores: these are the shape of the text (how long, how repetitive, shared with which
other completions), measured the same way for every reward.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["MAX_CHARS", "MIN_WORDS", "NGRAM", "TextShape", "duplicate_rates", "shape", "template_share"]

NGRAM = 4  # word n-grams: long enough that chance overlaps between unrelated texts are rare
# Completions shorter than this many words are left out of the duplicate and template figures: a short
# answer ("42") repeated by a converged policy is not a template.
MIN_WORDS = 8
MAX_CHARS = 20_000  # the start of a longer completion is its shape (a runaway completion must not stall a step)
_WORD = re.compile(r"\w+|[^\w\s]+")


@dataclass(frozen=True)
class TextShape:
    """One completion's length (characters), words, distinct n-grams and the fraction of its n-grams
    that repeat an earlier one of the same text (words and n-grams of its first ``MAX_CHARS`` characters)."""

    length: int
    words: int
    ngrams: frozenset[int]
    repeated: float
    fingerprint: int | None  # the normalised text's hash (None when too short to count as a template)


def shape(text: str) -> TextShape:
    words = _WORD.findall(text[:MAX_CHARS].lower())
    distinct = frozenset(map(hash, zip(*(words[i:] for i in range(NGRAM)), strict=False)))  # shifted copies
    count = len(words) - NGRAM + 1
    repeated = 1.0 - len(distinct) / count if count > 0 else 0.0
    fingerprint = hash(" ".join(words)) if len(words) >= MIN_WORDS else None
    return TextShape(len(text), len(words), distinct, repeated, fingerprint)


def duplicate_rates(shapes: Sequence[TextShape], groups: Sequence[Sequence[int]]) -> tuple[float, float, int]:
    """The fraction of (long enough) completions identical to another in their group, the fraction
    identical to one in another group, and how many completions were long enough to count."""
    owners: dict[int, set[int]] = {}
    for g, group in enumerate(groups):
        for i in group:
            if shapes[i].fingerprint is not None:
                owners.setdefault(shapes[i].fingerprint, set()).add(g)
    counted = within = across = 0
    for group in groups:
        seen: dict[int, int] = {}
        for i in group:
            if shapes[i].fingerprint is not None:
                seen[shapes[i].fingerprint] = seen.get(shapes[i].fingerprint, 0) + 1
        for fingerprint, count in seen.items():
            counted += count
            if count > 1:
                within += count
            if len(owners[fingerprint]) > 1:
                across += count
    if not counted:
        return 0.0, 0.0, 0
    return within / counted, across / counted, counted


def template_share(shapes: Sequence[TextShape], groups: Sequence[Sequence[int]]) -> tuple[float, dict[int, float]]:
    """The fraction of the step's n-grams that appear in the completions of most prompts (a shared template),
    and that fraction for each completion (by index).

    An n-gram counts as templated when it occurs in at least half the groups (and at least three): text
    that answers different questions with the same words. Needs three groups or more (else 0.0).
    """
    if len(groups) < 3:
        return 0.0, {}
    spread: dict[int, int] = {}
    for group in groups:
        for gram in frozenset().union(*(shapes[i].ngrams for i in group)):
            spread[gram] = spread.get(gram, 0) + 1
    threshold = max(3, (len(groups) + 1) // 2)
    total = templated = 0
    per_row = {}
    for group in groups:
        for i in group:
            shared = sum(1 for gram in shapes[i].ngrams if spread[gram] >= threshold)
            total += len(shapes[i].ngrams)
            templated += shared
            per_row[i] = shared / len(shapes[i].ngrams) if shapes[i].ngrams else 0.0
    return (templated / total if total else 0.0), per_row
