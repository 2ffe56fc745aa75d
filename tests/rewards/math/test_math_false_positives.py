"""`math` never pays for a wrong answer: one table per failure class (issue 13), and property tests that a
random wrong integer, fraction or expression, written any way a model writes it, never scores 1.

Each class has wrong answers that a careless verifier accepts (the gold's digits inside a LaTeX argument,
a hex literal read as a product, Python's ``**`` misparsed, a dropped prime...) and right answers in the
same shape, so that a verifier that simply says 0 to everything fails too.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardhub.rewards.math import MathReward

WRONG = {
    "bare LaTeX: a digit of an argument is not the answer": [
        ("7", r"Therefore $x = \frac{3}{7}$."),
        ("3", r"$\frac{1}{3}$"),
        ("2", r"So the area is $5\sqrt{2}$."),
        ("10", r"The result is $2^{10}$."),
        ("2", r"\frac{1}{2}"),
        ("1", r"$x_1 = 5$"),
        ("16", r"The side is $\sqrt{16}$."),
        ("3", r"we get $\sqrt[3]{8}$"),
        ("2", r"The answer follows: \[ \frac{1+\sqrt{5}}{2} \]"),
        ("1", r"$-[0,1)$"),
        ("1", r"\begin{pmatrix}1&2\\3&5\end{pmatrix}"),
        ("5", r"The answer is $\binom{5}{2}$."),
        ("1", r"$\frac{1}{3} \text{meters}$"),
    ],
    "a digit inside a word or an identifier": [
        ("2", "AZYUK2A"),
        ("19", "The answer is COVID-19 related."),
        ("2", "We use H2O here"),
        ("10", "It is the 10th term"),
    ],
    "an equation about something else than the asked value": [
        ("6", r"Therefore $2x = 6$."),
        ("4", r"\boxed{x^2 = 4}"),
        ("5", r"So $x + 2 = 5$."),
    ],
    "hedged or scaled numbers": [
        ("5", "The answer is 5 or more."),
        ("5", r"\boxed{5 \text{ or more}}"),
        ("2", "The answer is 2 million."),
        ("3", "the answer is 10 minus 3"),
        ("6", "It is either 5 or 6"),
        ("5", r"\boxed{5 \pm 1}"),
        ("3", r"\boxed{3, 4}"),
    ],
    "mixed numbers read as products": [(r"\pi", r"\boxed{2\frac{1}{2}\pi}"), ("1", r"\boxed{2\frac{1}{2}}")],
    "negated numbers": [
        ("12", "The answer is 13, not 12"),
        ("12", "It is not 12."),
    ],
    "arithmetic operands are not results": [
        ("4", "She has 16 - 3 - 4"),
        ("2", "So the total is 9 * 2"),
    ],
    "hex, binary and octal literals": [
        ("0x1f", r"\boxed{0x20}"),
        ("31", r"\boxed{0x20}"),
        ("0b101", r"\boxed{0b110}"),
        ("0o17", r"\boxed{0o16}"),
    ],
    "Python and sympy syntax": [
        ("x**2 + 1", r"\boxed{x**3 + 1}"),
        ("3*z**2 + 1", r"\boxed{3z^{3} + 1}"),
        ("sqrt(2)", r"\boxed{\sqrt{3}}"),
        ("2**10", r"\boxed{10}"),
        ("x**(n+1)", r"\boxed{x^{n}}"),
        ("Rational(1, 3)", r"\boxed{\frac{1}{4}}"),
        ("exp(2)", r"\boxed{e^{3}}"),
    ],
    "primes": [
        ("E'", r"\boxed{E}"),
        ("E", r"\boxed{E'}"),
        ("f'(x)", r"\boxed{f(x)}"),
        ("f''(x)", r"\boxed{f'(x)}"),
    ],
    "letters with another meaning": [
        (r"\mathcal{B}", r"\boxed{B}"),
        ("B", r"\boxed{\mathcal{B}}"),
        (r"\mathbb{Z}", r"\boxed{Z}"),
        (r"\bar{z}", r"\boxed{z}"),
        (r"\text{listen}", r"\boxed{\text{silent}}"),
        ("hyperbola", r"\boxed{\text{parabola}}"),
    ],
    "units that differ": [
        ("5 km", r"\boxed{5 \text{ cm}}"),
        ("3 hours", "The answer is 3 minutes."),
    ],
    "truncated completions": [
        ("2", r"The legs are 2 inches, so the area is: \[ \frac{1}{2} \cdot"),
    ],
    "currency signs are not math delimiters": [
        ("125", "Thus, # profit for the jewelry shop is $5,000 + $125 = $5,125."),
        ("10", "He paid $10 and then $20 more."),
    ],
    # a parser reads an equation by its last side (issue 33)
    "false relations": [("11", r"$x = 5+5+1 = 7 = 11$"), ("10", r"\boxed{9 = 10}"), ("9", r"\boxed{10 = 9}"),
                        ("10", r"\boxed{x \approx 10}"), ("10", r"The answer is $10 \le x$.")],
}

RIGHT = {
    "bare LaTeX answers": [
        ("1/3", r"$\frac{1}{3}$"),
        ("1/3", r"\frac13"),
        ("1/3", r"\dfrac{1}{3}"),
        ("1/3", r"\left( \frac{1}{3} \right)"),
        ("1/3", r"$\frac{1}{3} \text{meters}$"),
        (r"\frac{3}{7}", r"Therefore $x = \frac{3}{7}$."),
        (r"5\sqrt{2}", r"So the area is $5\sqrt{2}$."),
        ("1024", r"The result is $2^{10}$."),
        ("-2, 1", r"The roots are $-2$ and $1$."),
    ],
    "numbers that stand alone": [
        ("18", "she earns $2 \\times (16 - 7) = $2 \\times 9 = \\$18 $."),
        ("460", "40 hours x $10 / hour + 5 hours x 1.2 x $10/hour = $460."),
        ("18", "So 16 - 3 - 4 = 9 eggs. She makes 9 * 2 = 18 dollars."),
        ("13/28", "计划的比例为13/28"),
        ("1000.99", "so the number is 10 which is 1,000.99m²"),
        ("12", r"Let $d = \frac{90}{n}$. Therefore, there are 12 sequences."),
    ],
    "brace-less LaTeX": [
        (r"\sqrt{3}", r"\boxed{\sqrt3}"),
        (r"\frac{1}{72}", r"\boxed{\frac1{72}}"),
        (r"10\sqrt{3} + 2", r"\boxed{10\sqrt3 + \sqrt4}"),
        (r"\frac{\pi}{2}", r"\boxed{\frac\pi2}"),
        (r"\sqrt{2}+\sqrt{5}", r"\boxed{\sqrt 2+\sqrt 5}"),
    ],
    "Python and sympy syntax": [
        ("3*z**2 + 1", r"\boxed{3z^{2} + 1}"),
        ("x**2 + 1", r"\boxed{x^2 + 1}"),
        ("sqrt(2)/2", r"\boxed{\frac{\sqrt{2}}{2}}"),
        ("Rational(1, 3)", r"\boxed{\frac{1}{3}}"),
        ("pi/4", r"\boxed{\frac{\pi}{4}}"),
    ],
    "hex literals": [("0x1f", r"\boxed{31}"), ("0x1f", r"\boxed{0x1F}")],
    "primes": [("f'(x)", r"\boxed{f'(x)}"), ("E'", r"\boxed{E^{\prime}}"), ("2x", r"\boxed{f'(x) = 2x}")],
    "mixed numbers": [("3128.5", r"\boxed{3128 1/2}"), ("918.5", r"\boxed{918\frac{1}{2}}"), ("7/2", "#### 3 1/2"),
                      ("5/2", r"\boxed{2 \frac{1}{2}}"), (r"\frac{5\pi}{2}", r"\boxed{2\frac{1}{2}\pi}")],
    "text and tags": [
        ("18", "<answer>The answer is 18.</answer>"),
        ("8000", "<answer>#### 8,000</answer>"),
        ("8000", r"\boxed{8{,}000}"),
        ("18", "<think>so</think><answer>She makes $18 every day.</answer>"),
        ("Evelyn", r"\boxed{\text{Evelyn}}"),
        ("5", "\\[\n\\text{Answer: } 5\n\\]"),
    ],
    "units": [("18", "#### 18 dollars"), ("18", r"\boxed{18\text{ dollars}}"), ("5 km", r"\boxed{5 \text{ km}}"),
              ("1/3", r"$\frac{1}{3}\,\text{m}$")],
    "markdown": [("12", "**12**"), ("12", "The answer is **12**."), ("12", "Answer: **12** apples")],
    "named quantities": [("5", r"So $a + b = 5$."), ("7", r"Hence $f(3) = 7$."), ("11", r"$x = 5+5+1 = 11$"),
                         ("10", r"\boxed{\text{Area} = 10}"), ("10", r"\boxed{10 = x}")],
}


@pytest.fixture(scope="module")
def reward():
    return MathReward(timeout=10, workers=2)


def _table(table):
    return [(name, gold, text) for name, cases in table.items() for gold, text in cases]


def test_wrong_answers_never_score(reward):
    rows = _table(WRONG)
    result = reward.evaluate(["q"] * len(rows), [t for _, _, t in rows], solution=[g for _, g, _ in rows])
    paid = [(name, gold, text, score.reason) for (name, gold, text), score in zip(rows, result.scores, strict=True)
            if score.value == 1.0]  # fmt: skip
    assert paid == []
    assert all(score.reason for score in result.scores)


def test_right_answers_of_the_same_shapes_score(reward):
    rows = _table(RIGHT)
    result = reward.evaluate(["q"] * len(rows), [t for _, _, t in rows], solution=[g for _, g, _ in rows])
    missed = [(name, gold, text, score.reason) for (name, gold, text), score in zip(rows, result.scores, strict=True)
              if score.value != 1.0]  # fmt: skip
    assert missed == []


# ----- property tests: random wrong answers, written any way, never score 1 ---------------------------

FORMATS = [
    "The final answer is ${}$. I hope it is correct.",
    "So the answer is \\boxed{{{}}}.",
    "<think>work</think><answer>{}</answer>",
    "Reasoning done.\n#### {}",
    "Therefore, $x = {}$.",
    "We conclude that the value is ${}$",
    "{}",
]
# Reasoning that shows the gold's digits in places a careless reader takes for the answer.
DISTRACTORS = [
    "",
    "First, $\\frac{{1}}{{{g}}}$ of it is used. ",
    "We note that $x^{{{g}}}$ grows and $\\sqrt{{{g}}}$ too. ",
    "Step {g}: keep going. ",
    "Item AZ{g}B is irrelevant. ",
]


def _written(value) -> list[str]:
    """Ways a model writes a number: integer, decimal, a/b, \\frac, \\dfrac, brace-less \\frac, mixed."""
    value = Fraction(value)
    sign = "-" if value < 0 else ""
    p, q = abs(value.numerator), value.denominator
    forms = [f"{sign}\\frac{{{p}}}{{{q}}}", f"{sign}\\dfrac{{{p}}}{{{q}}}", f"{sign}{p}/{q}"]
    if q == 1:
        forms += [f"{sign}{p}", f"{sign}{p}.0", f"{sign}{p:,}"]
    if 10**6 % q == 0:
        forms.append(f"{float(value):.6f}".rstrip("0"))
    if p < 10 and q < 10:
        forms.append(f"{sign}\\frac{p}{q}")
    if p > q > 1:
        forms.append(f"{sign}{p // q}\\frac{{{p % q}}}{{{q}}}" if p % q else f"{sign}{p // q}")
    return forms


numbers = st.builds(Fraction, st.integers(-500, 500), st.sampled_from([1, 1, 1, 2, 3, 4, 5, 7, 8, 12]))


@st.composite
def wrong_number_rows(draw):
    gold = draw(numbers)
    answer = draw(numbers.filter(lambda a: abs(a - gold) > Fraction(1, 10**4)))
    text = draw(st.sampled_from(FORMATS)).format(draw(st.sampled_from(_written(answer))))
    distractor = draw(st.sampled_from(DISTRACTORS)).format(g=draw(st.sampled_from(_written(gold))))
    return draw(st.sampled_from(_written(gold))), distractor + text


POLYNOMIAL_SPELLINGS = [
    lambda a, b, c: f"{a}x^2 + {b}x + {c}",
    lambda a, b, c: f"{a}*x**2 + {b}*x + {c}",
    lambda a, b, c: f"{c} + {b}x + {a}x^{{2}}",
]


@st.composite
def wrong_expression_rows(draw):
    coefficients = draw(st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9)))
    changed = list(coefficients)
    i = draw(st.integers(0, 2))
    changed[i] += draw(st.integers(1, 3))
    gold = draw(st.sampled_from(POLYNOMIAL_SPELLINGS))(*coefficients)
    answer = draw(st.sampled_from(POLYNOMIAL_SPELLINGS))(*changed)
    return gold, draw(st.sampled_from(FORMATS[:4])).format(answer)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(wrong_number_rows(), min_size=10, max_size=10))
def test_a_wrong_number_or_fraction_never_scores(reward, rows):
    result = reward.evaluate(["q"] * len(rows), [t for _, t in rows], solution=[g for g, _ in rows])
    assert [(g, t, s.reason) for (g, t), s in zip(rows, result.scores, strict=True) if s.value == 1.0] == []


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(wrong_expression_rows(), min_size=8, max_size=8))
def test_a_wrong_expression_never_scores(reward, rows):
    result = reward.evaluate(["q"] * len(rows), [t for _, t in rows], solution=[g for g, _ in rows])
    assert [(g, t, s.reason) for (g, t), s in zip(rows, result.scores, strict=True) if s.value == 1.0] == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(numbers, st.data())
def test_the_same_number_written_differently_scores(reward, value, data):
    """The other half of the property: without it, a verifier saying 0 to everything would pass."""
    gold = data.draw(st.sampled_from(_written(value)))
    text = data.draw(st.sampled_from(FORMATS)).format(data.draw(st.sampled_from(_written(value))))
    score = reward.evaluate(["q"], [text], solution=[gold]).scores[0]
    assert score.value == 1.0, (gold, text, score.reason)
