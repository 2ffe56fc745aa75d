"""Numbers in English words (rewards/text/number_words.py): well-formed numbers read, anything else refused."""

from __future__ import annotations

from fractions import Fraction

import pytest
from bench_modules import load_bench
from hypothesis import given
from hypothesis import strategies as st

from rewardhub.rewards.text.number_words import cjk_number, without_measure_word, words_to_number

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


@pytest.mark.parametrize(
    ("text", "number"),
    [("十二", "12"), ("负十九", "-19"), ("九分之一", "1/9"), ("百分之五十六", "56%"), ("3万", "30000"), ("1.5亿", "150000000"),
     ("三万零二十", "30020"), ("一点五", "1.5"), ("两千元", "2000"), ("十二个", "12"), ("十二です", "12"), ("8.6万亿", "8600000000000"),
     ("6.4百万", "6400000"), ("육십일입니다", "61"), ("십팔", "18")],
)  # fmt: skip
def test_cjk_numerals_are_read(text, number):
    assert cjk_number(text) == number


@pytest.mark.parametrize("text", ["十分简单", "一些", "12", "答案", "48kg", "4000千克", "十二个人", ""])
def test_words_that_are_no_cjk_number_are_refused(text):
    assert cjk_number(text) is None


@pytest.mark.parametrize(
    ("text", "bare"), [("34 元", "34"), ("866 个", "866"), ("13です", "13"), ("42입니다", "42"), ("(-8,2) 입니다", "(-8,2)"),
                       ("48", "48"), ("Paris", "Paris"), ("3万", "3万")],
)  # fmt: skip
def test_a_measure_word_or_copula_after_a_number_is_no_part_of_it(text, bare):
    assert without_measure_word(text) == bare
