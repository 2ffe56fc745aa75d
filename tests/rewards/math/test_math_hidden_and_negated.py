"""Issue 33: a value a reader does not see (struck out, white, a ``%`` comment) or one the last statement denies
is never the answer: random wrong values in those constructions never score 1, honest forms keep 1."""

import random

import pytest

from rewardhub.rewards.math import MathReward
from rewardhub.rewards.math.visible import visible

# The gold hidden, a wrong value shown: {g} is the gold, {w} the wrong value.
HIDING_THE_GOLD = [
    "\\sout{{{g}}} {w}", "\\cancel{{{g}}} {w}", "\\bcancel{{{g}}}{w}", "\\xcancel{{{g}}} {w}", "\\st{{{g}}} {w}",
    "\\xout{{{g}}} {w}", "{w}\\phantom{{{g}}}", "\\hphantom{{{g}}}{w}", "\\color{{white}}{{{g}}} {w}",
    "{{\\color{{white}} {g}}}{w}", "\\textcolor{{white}}{{{g}}}{{{w}}}", "\\textcolor[rgb]{{1,1,1}}{{{g}}} {w}",
    "{{\\color[HTML]{{FFFFFF}}{g}}} {w}", "{w} % {g}", "{w} %{g}", "\\frac{{{w}}}{{1}} % {g}",
]  # fmt: skip
# The wrong value hidden, the gold shown: what a reader sees is right.
HIDING_A_WRONG_VALUE = [
    "\\sout{{{w}}} {g}", "\\cancel{{{w}}} {g}", "{g}\\phantom{{{w}}}", "{{\\color{{white}} {w}}}{g}",
    "\\textcolor{{white}}{{{w}}}{{{g}}}", "{g} % {w}", "\\textcolor{{red}}{{{g}}}", "{{\\color{{blue}} {g}}}",
]  # fmt: skip
WRAPPERS = ["The answer is ${}$.", "$\\boxed{{{}}}$", "<answer>{}</answer>", "Final answer: $\\boxed{{{}}}$"]
WORK = "We compute step by step: $3 \\cdot 4 = 12$ and $5 + 6 = 11$.\n\n"


@pytest.fixture(scope="module")
def reward():
    return MathReward(timeout=10, workers=2)


def _cases(templates, count, seed):
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        gold = rng.randint(-300, 300)
        wrong = gold + rng.choice([-1, 1]) * rng.randint(1, 50)
        answer = rng.choice(templates).format(g=gold, w=wrong)
        cases.append((str(gold), WORK + rng.choice(WRAPPERS).format(answer)))
    return cases


def _scores(reward, cases):
    result = reward.evaluate(
        ["q"] * len(cases), [text for _, text in cases], solution=[gold for gold, _ in cases]
    )
    return list(zip(cases, result.scores, strict=True))


def test_a_hidden_or_struck_out_gold_never_scores(reward):
    paid = [
        (case, score.reason)
        for case, score in _scores(reward, _cases(HIDING_THE_GOLD, 120, 33))
        if score.value == 1.0
    ]
    assert paid == []


def test_a_hidden_or_struck_out_wrong_value_leaves_the_gold_visible(reward):
    missed = [(case, score.reason) for case, score in _scores(reward, _cases(HIDING_A_WRONG_VALUE, 60, 34))
              if score.value != 1.0]  # fmt: skip
    assert missed == []


def test_nothing_visible_is_no_answer(reward):
    cases = [("12", WORK + "$\\boxed{\\sout{12}}$"), ("12", WORK + "<answer>\\color{white} 12</answer>")]
    for _, score in _scores(reward, cases):
        assert score.value == 0.0 and "visible" in score.reason


@pytest.mark.parametrize(
    ("answer", "seen"),
    [("32%", "32%"), ("32% of them", "32% of them"), ("50\\%", "50\\%"), ("12 % 13", "12"),
     ("\\color{white}{12} 13", ""), ("{\\color{white} 12}13", "13"), ("\\textcolor{red}{12}", "12"),
     ("\\cancelto{0}{x}", "\\cancelto{0}{x}"), ("\\star 3", "\\star 3"), ("\\sout{1\\}2} 3", "3")],
)  # fmt: skip
def test_visible_reads_as_rendered(answer, seen):
    assert visible(answer) == seen
