"""``similarity`` red team (issue 33): word salad cannot max out the default metric, the order-blind
metrics say so in their reason, and both texts are read canonically."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rewardhub
from rewardhub.rewards.similarity import lcs_f1, lcs_length
from rewardhub.testing import GAMING_PROBES, Probe, check_contract

REFERENCE = "the quick brown fox jumps over the lazy dog near the old river bank"
WORDS = REFERENCE.split()


def salads(seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    shuffled = []
    for _ in range(5):
        words = WORDS[:]
        rng.shuffle(words)
        shuffled.append(" ".join(words))
    return [" ".join(WORDS[::-1]), *shuffled, " ".join(sorted(WORDS)), " ".join(WORDS[1::2] + WORDS[::2])]


def test_word_salad_cannot_max_out_the_default_metric():
    reward = rewardhub.get("similarity")
    assert reward.metric == "lcs_f1"
    texts = salads()
    result = reward.evaluate([""] * len(texts), texts, solution=[REFERENCE] * len(texts))
    assert max(result.values) < 0.7, list(zip(texts, result.values, strict=True))
    assert result.values[0] < 0.2  # reversed: one word in order
    honest = reward.evaluate([""] * 3, [REFERENCE, "The quick brown fox jumps over the lazy dog near the river.",
                                        "quick\u200b brown fox jumps over the lazy dog near the old river bank"],
                             solution=[REFERENCE] * 3)
    assert honest.values[0] == 1.0 and honest.values[1] > 0.85 and honest.values[2] == 1.0


@pytest.mark.parametrize("metric", ["token_f1", "rouge1", "chrf"])
def test_order_blind_metrics_say_so_in_the_reason(metric):
    result = rewardhub.get("similarity", metric=metric).evaluate([""], [" ".join(WORDS[::-1])], solution=[REFERENCE])
    assert "word order not checked" in result.reasons[0]
    if metric != "chrf":
        assert result.values == [1.0]  # documented: the reversed reference gets full credit


def test_canonical_reading_of_both_texts():
    reward = rewardhub.get("similarity", metric="exact_match")
    assert reward.evaluate([""] * 2, ["Ｐａｒｉｓ", "P\u200baris"], solution=["Paris"] * 2).values == [1.0, 1.0]
    assert reward.evaluate([""], ["Paris"], solution=["Ｐａｒｉｓ"]).values == [1.0]


@given(st.lists(st.sampled_from("abcdef"), max_size=40), st.lists(st.sampled_from("abcdef"), max_size=40))
def test_bit_parallel_lcs_equals_the_textbook_table(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    assert lcs_length(a, b) == table[-1][-1]


def test_lcs_f1_edges():
    assert lcs_f1("", "") == 1.0 and lcs_f1("x", "") == 0.0 and lcs_f1("cat", "dog") == 0.0
    assert lcs_f1("The cat sat.", "cat sat") == 1.0  # SQuAD's normalisation: articles and punctuation go


SALAD_PROBES = GAMING_PROBES + (
    Probe("reversed_reference", lambda right, wrong: " ".join(REFERENCE.split()[::-1])),
    Probe("sorted_reference", lambda right, wrong: " ".join(sorted(REFERENCE.split()))),
)


def test_default_metric_contract_with_salad_probes():
    check_contract(rewardhub.get("similarity"), columns={"solution": REFERENCE}, right=REFERENCE,
                   correct_completion=REFERENCE, probes=SALAD_PROBES)
