"""Numbers in English words (rewards/text/number_words.py): well-formed numbers read, anything else refused."""

from __future__ import annotations

from fractions import Fraction

import pytest
from bench_modules import load_bench
from hypothesis import given
from hypothesis import strategies as st

from rewardhub.rewards.text.number_words import words_to_number

IN_WORDS = load_bench("math_cases").in_words


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("fifty-two", 52), ("Fifty Two", 52), ("seventy six", 76), ("one", 1), ("zero", 0), ("twelve", 12),
        ("one hundred and five", 105), ("a hundred", 100), ("a thousand", 1000), ("two thousand twenty", 2020),
        ("eleven hundred", 1100), ("minus seven", -7), ("negative three", -3),
        ("nine hundred ninety-nine thousand nine hundred ninety-nine", 999_999), ("three million", 3_000_000),
        ("two thirds", Fraction(2, 3)), ("one half", Fraction(1, 2)), ("three quarters", Fraction(3, 4)),
    ],
)  # fmt: skip
def test_numbers_in_words(text, value):
    assert words_to_number(text) == value


@pytest.mark.parametrize(
    "text",
    ["", "and", "one of them", "twenty twenty", "five hundred five hundred", "thousand", "one hundred and",
     "two or three", "zero hundred", "one halves", "two third", "thousand million", "a", "fifty-two apples",
     " ".join(["one"] * 20)],
)  # fmt: skip
def test_anything_else_is_no_number(text):
    assert words_to_number(text) is None


@given(st.integers(0, 999_999), st.randoms(use_true_random=False))
def test_every_number_written_out_reads_back(n, rng):
    assert words_to_number(IN_WORDS(n, rng)) == n
