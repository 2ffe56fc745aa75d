"""Issue 33: a value a reader does not see (struck out, white, a ``%`` comment) or one the last statement denies
is never the answer: random wrong values in those constructions never score 1, honest forms keep 1."""

import random

import pytest

from rewardhub.rewards.math import MathReward
from rewardhub.rewards.math.negated import negated_statement
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
WORK = "We compute step by step: ${g} - 0 = {g}$ and $5 + 6 = 11$.\n\n"  # the gold in the work too


@pytest.fixture(scope="module")
def reward():
    return MathReward(timeout=10, workers=2)


def _cases(templates, count, seed, wrappers=WRAPPERS):
    """(gold, completion) pairs: a random gold {g} and wrong value {w} in a random template, in a wrapper."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        gold = rng.randint(-300, 300)
        wrong = gold + rng.choice([-1, 1]) * rng.randint(1, 50)
        answer = rng.choice(wrappers).format(rng.choice(templates).format(g=gold, w=wrong))
        cases.append((str(gold), WORK.format(g=gold) + answer))
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
    work = WORK.format(g=12)
    cases = [("12", work + "$\\boxed{\\sout{12}}$"), ("12", work + "<answer>\\color{white} 12</answer>")]
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


# ----- negated statements: the last sentence denies the value read ------------------------------------
DENYING_THE_GOLD = [
    "The answer isn't $x = {g}$.", "It cannot be ${g}$.", "It cannot be $x = {g}$.", "x is not {g}.", "x isn't {g}.",
    "Hence x ≠ {g}.", "So $x \\neq {g}$.", "It can't be {g}.", "The result is never {g}.", "The value is not equal to {g}.",
    "Die Antwort ist nicht {g}.", "La réponse n'est pas {g}.", "La respuesta no es {g}.", "La risposta non è {g}.",
    "A resposta não é {g}.", "Ответ не {g}.", "答案不是{g}。", "答えは{g}ではない。", "답은 {g}가 아니다.",
]  # fmt: skip
STATING_THE_GOLD = [
    "The answer is {g}.", "Not {w}, the answer is {g}.", "It is not {w} but {g}.",
    "The answer is $\\boxed{{{g}}}$. It is not {w}.", "答案是{g}。",
    "La respuesta es {g}.", "So we get $x = {g}$.",
]  # fmt: skip


def test_a_negated_final_statement_never_scores(reward):
    scored = _scores(reward, _cases(DENYING_THE_GOLD, 120, 35, ["{}"]))
    assert [(case, score.reason) for case, score in scored if score.value == 1.0] == []
    assert any("a negated statement" in score.reason for _, score in scored)


def test_a_stated_gold_beside_a_denied_wrong_value_still_scores(reward):
    missed = [(case, score.reason) for case, score in _scores(reward, _cases(STATING_THE_GOLD, 60, 36, ["{}"]))
              if score.value != 1.0]  # fmt: skip
    assert missed == []


def test_a_negated_statement_names_its_sentence():
    assert (
        negated_statement("Work: $12$.\n\nThe answer isn't $x = 12$.", "12") == "The answer isn't $x = 12$."
    )
    assert negated_statement("The answer is 12. It is not 13.", "12") is None
    assert negated_statement("It is not 12; it is 12.", "12") is None  # stated as well as denied
