"""Math answer normalisation in the caller (rewards/math/literals.py) and the gold column's answer."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardhub.rewards.math import gold_answer
from rewardhub.rewards.math.literals import normalize, unit_of
from rewardhub.rewards.math.units import convert


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r"\dfrac{1}{2}", r"\frac{1}{2}"),
        (r"\frac12", r"\frac{1}{2}"),
        (r"\left( 1, 2 \right)", "( 1, 2 )"),
        ("1,000,000", "1000000"),
        ("1{,}000", "1000"),
        ("12,345.5", "12345.5"),
        (r"90^\circ", "90"),
        ("90°", "90"),
        (r"\$12.50", "12.50"),
        (r"\text{Tuesday}", "Tuesday"),
        (r"\textbf{5}", "5"),
        ("50%", r"50\%"),
        ("$x = 3$.", "x = 3"),
        ("5 apples", "5"),
        ("5 apples and pears.", "5"),
        ("5 x", "5 x"),
        # words that change the number are not a unit: they stay, so "5 or more" never equals 5
        ("5 or more", "5 or more"),
        ("2 million", "2 million"),
        ("3 squared", "3 squared"),
        ("1 half", "1 half"),
        ("7 not", "7 not"),
        ("5 at least", "5 at least"),
        ("5 approximately", "5 approximately"),
        (r"5 \text{ or more}", "5 or more"),
        (r"2\text{ million}", "2 million"),
        (r"\text{5 or more}", "5 or more"),
        (r"10 \text{ cm}", "10"),
        ("2 pi", "2 \\pi"),  # sympy's pi
        ("3,5", "3,5"),
        ("12.", "12"),
        # scientific notation is a number, not e = 2.718...
        ("1e3", "1000"),
        ("2.5E-3", "0.0025"),
        ("-1.5e+2", "-150"),
        ("1e999", "1e999"),  # far too big to write out: left to the parser
        ("1e-05", "0.00001"),  # Python's str() of a numeric gold column's float
        # rewritten into LaTeX that the parser reads faithfully
        (r"\sqrt3", r"\sqrt{3}"),
        (r"\sqrt 34", r"\sqrt{3}4"),  # TeX takes one token
        (r"\frac1{72}", r"\frac{1}{72}"),
        (r"\frac172", r"\frac{1}{7}2"),
        (r"\frac\pi2", r"\frac{\pi}{2}"),
        (r"\sqrt[3]8", r"\sqrt[3]{8}"),
        (r"10\sqrt3 + \sqrt4", r"10\sqrt{3} + \sqrt{4}"),
        ("3*z**2 + 1", r"3 \cdot z^{2} + 1"),
        ("x**(n+1)", "x^{(n+1)}"),
        ("2**-1", "2^{-1}"),
        ("sqrt(sqrt(2)+1)", r"\sqrt{\sqrt{2}+1}"),
        ("exp(2*x)", r"e^{2 \cdot x}"),
        ("Rational(1, 3)", r"\frac{1}{3}"),
        ("Abs(x-1)", r"\left|x-1\right|"),
        ("oo", r"\infty"),
        (r"\begin{align*}x\end{align*}", r"\begin{align*}x\end{align*}"),  # not a product
        ("0x1f", "31"),
        ("0x1F + 0b11", "31 + 3"),
        ("0o17", "15"),
        ("E'", r"E^{\prime}"),
        ("f''(x)", r"f^{\prime\prime}(x)"),
        (r"\text{Bob's}", "Bob's"),  # inside text an apostrophe is no prime
        ("3128 1/2", r"3128\frac{1}{2}"),
        ("14 {, }916", "14916"),
        (r"11,\! 111,\! 100", "11111100"),
        ("1 000", "1000"),
        ("0,111", "0,111"),  # a decimal comma only beside a number (decimal_comma=True): "0,9" may be a list
        ("28 percent", r"28\%"),
        (r"x \equiv 3 \pmod{5}", "x = 3"),
        (r"2 \times 9 =", r"2 \times 9"),
        ("185\\", "185"),
        (r"\begin{pmatrix}1 \\ 2\end{pmatrix}", "(1, 2)"),  # a column vector is the tuple of its entries
        (r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}", r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}"),  # a row break stays
        (r"\color{blue}{355}", "{355}"),
        (r"\frac{1}{3} \text{meters}", r"\frac{1}{3}"),
    ],
)
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_decimal_comma_only_when_asked():
    assert normalize("3,5", decimal_comma=True) == "3.5"
    assert normalize("0,111", decimal_comma=True) == "0.111"
    assert normalize("1,000", decimal_comma=True) == "1000"
    assert normalize("26,000", decimal_comma=True) == "26000"  # three digits after the comma: thousands


@pytest.mark.parametrize(
    ("answer", "unit"),
    [("5 km", "kilometer"), (r"5\text{ cm}", "centimeter"), ("18 dollars", "dollar"), ("3 hours", "hour"),
     ("2 hrs", "hour"), ("5 apples", None), ("5", None), (r"15\mbox{ cm}^2", "centimeter ** 2"), ("x km", None),
     ("90^\\circ", "degree"), ("2 \\text{ rad}", "radian"), (r"23\,\text{m}", "meter"), (r"23 \text{ m }", "meter"),
     (r"23\;\mathrm{m}", "meter"), (r"23\ \text{m}", "meter"), (r"69~\text{s}", "second"), ("5 ms", "millisecond"),
     ("3 m/s", "meter * second ** -1"), ("25k", None), ("3 M", None), ("28 percent", None)],
)
def test_unit_of(answer, unit):
    assert unit_of(answer) == unit


@pytest.mark.parametrize(
    ("value", "unit", "to", "expected"),
    [(2300, "centimeter", "meter", 23), (5, "millisecond", "second", Fraction(1, 200)), (2, "hour", "minute", 120),
     (3, "meter * second ** -1", "kilometer * hour ** -1", Fraction(54, 5)), (250, "cent", "dollar", Fraction(5, 2)),
     (5, "meter", "second", None), (90, "degree", "radian", None), (3, "dollar", "euro", None)],
)  # fmt: skip
def test_convert_is_exact_and_refuses_another_dimension(value, unit, to, expected):
    assert convert(Fraction(value), unit, to) == expected


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        (r"The area is $\boxed{12}$.", "12"),
        ("48/2 = 24\n#### 72", "72"),
        (7, "7"),
        (" 0.5 ", "0.5"),
        (None, None),
        ("", None),
        (True, None),
    ],
)
def test_gold_answer(gold, expected):
    assert gold_answer(gold) == expected


def test_normalize_has_no_exponential_backtracking():
    assert normalize("5 " + "ab" * 400 + "!") == "5 " + "ab" * 400 + "!"


@given(st.text(max_size=200))
def test_normalize_never_raises(text):
    assert isinstance(normalize(text), str)
