"""The answer statement, read faithfully (issue 20): one property test per class of misreading.

Each class comes from the held-out-style generator of ``bench/math_cases.py`` (random golds of many shapes,
wrong values by small perturbations, distractors, re-spellings): in every construction a wrong value never
scores 1 (for `math` and for `exact_match`), and the gold written faithfully always scores 1 with `math`.
A wrong answer's 0 carries a reason that names what was refused.
"""

from __future__ import annotations

import random

import pytest
from bench_modules import load_bench
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rewardhub

CASES = load_bench("math_cases")
PROPERTY = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
seeds = st.lists(st.integers(0, 2**32 - 1), min_size=12, max_size=12)


def _batch(kind: str, seeds: list[int]):
    return [CASES.CLASSES[kind](random.Random(seed)) for seed in seeds]


@pytest.mark.parametrize("kind", list(CASES.CLASSES))
@PROPERTY
@given(seeds=seeds)
def test_math_pays_exactly_the_faithful_answers(math_reward, kind, seeds):
    cases = _batch(kind, seeds)
    result = math_reward.evaluate(["q"] * len(cases), [c.completion for c in cases], solution=[c.gold for c in cases])
    wrong = [(c.gold, c.completion[-90:], s.reason) for c, s in zip(cases, result.scores, strict=True)
             if (s.value == 1.0) != c.truth]  # fmt: skip
    assert wrong == []
    assert all(s.reason for s in result.scores)


@pytest.mark.parametrize("kind", list(CASES.CLASSES))
@PROPERTY
@given(seeds=seeds)
def test_exact_match_never_pays_a_wrong_answer(exact_match, kind, seeds):
    cases = _batch(kind, seeds)
    values = exact_match(["q"] * len(cases), [c.completion for c in cases], solution=[c.gold for c in cases])
    assert [(c.gold, c.completion[-90:]) for c, v in zip(cases, values, strict=True) if v == 1.0 and not c.truth] == []


@pytest.mark.parametrize(
    ("gold", "completion", "reason"),
    [
        (r"\frac{1}{12}", r"The answer is $\frac{1}{12}$ or 1.", "several values offered, not all right"),
        ("5", "The answer is 5 or more.", "no answer: a hedge"),
        ("3", "The answer is 5 apples and 3 oranges.", "no answer: several values in the answer statement"),
        ("5", "The answer is at least 5.", "no answer: a bound or an estimate"),
        ("5", "The answer is 5?", "no answer: the answer is asked"),
        ("18", r"\boxed{18} Wait, I made an error: 4 + 16 = 20, then 20 - 1 = 19.", "no answer: the stated answer '18' is taken back"),
        ("2", "... so (2) Now, for the next part, we need to", "no answer found"),
        ("3", "Hence we have 3 cases to", "no answer: the text stops mid-sentence"),
        ("1011_2", r"\boxed{1011_3}", "not equal: 1011_3 vs 1011_2 (a number in a base"),
        ("(2, 9)", r"\boxed{\{2, 9\}}", r"not equal: \{2, 9\} vs (2, 9) (a set is not an interval or a tuple)"),
        ("(2, 9)", r"\boxed{2, 9}", "(a list of values is not an interval or a tuple)"),
        (r"(2, 6), (1, n) \text{ for any } n \ge 1", r"\boxed{1}", "(compared as written)"),
        ("25", "One total is 25.\nTherefore, the answer is fifty-two.", "not equal: 52 vs 25"),
    ],
)
def test_a_refused_construction_says_why(math_reward, gold, completion, reason):
    score = math_reward.evaluate(["q"], [completion], solution=[gold]).scores[0]
    assert score.value == 0.0
    assert reason in score.reason, score.reason


@pytest.mark.parametrize(
    ("gold", "completion"),
    [
        (r"2\sqrt{3}", r"\boxed{2√3}"),
        (r"(-\infty, 3)", "The answer is (−∞, 3)."),
        ("1000", "So x = 1,000"),
        (r"2\frac{1}{2}", "So x = 2 1/2"),
        ("1", "the answer is one"),
        ("76", "The answer is seventy six."),
        ("odd", "So the number is $odd$."),
        ("255", "The value is $0xff$."),
        ("35", r"\boxed{35.0\%}"),
        ("80", "The answer (arabic numerals) is 80.\n\nI also thought about 7 and 9 for a while, then dropped them."),
        (r"6.02\times10^{23}", r"\boxed{6.02e23}"),
        (r"\frac{1}{2}", r"The answer is $\frac{1}{2}$, or equivalently $0.5$."),  # one value, twice
        ("1, 2", "The solutions are $x = 1$ or $x = 2$."),  # the gold's two solutions
        ("12", "The answer is 12 because there are 3 boxes of 4."),  # the reason after it is no answer
        ("7", "The answer is 16 - 9 = 7."),  # the result of the arithmetic
        ("3.14", "The answer is approximately 3.14."),  # a rounded answer
    ],
)
def test_correct_answers_in_these_notations_score(math_reward, gold, completion):
    score = math_reward.evaluate(["q"], [completion], solution=[gold]).scores[0]
    assert score.value == 1.0, score.reason


def test_exact_match_takes_the_last_statement_and_keeps_matrix_shape(exact_match):
    completions = [r"\boxed{18} Wait, I made an arithmetic error above. Fixing it, the correct answer is 20.",
                   r"\boxed{\begin{pmatrix}1 & 2\end{pmatrix}}", r"\boxed{\begin{pmatrix}1 \\ 2\end{pmatrix}}",
                   r"The answer is $\frac{1}{12}$ or 1.", "the answer is fifty-two"]  # fmt: skip
    golds = ["18", r"\begin{pmatrix}1 \\ 2\end{pmatrix}", r"\begin{pmatrix}1 \\ 2\end{pmatrix}", r"\frac{1}{12}", "52"]
    assert exact_match(["q"] * 5, completions, solution=golds) == [0.0, 0.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("completion", "stated", "denied"),
    [
        ("The answer is 71, not 47.", "71", "47"),
        ("Die Antwort ist 71, nicht 47.", "71", "47"),
        ("Ответ: 71, не 47.", "71", "47"),
        ("答案是71，不是47。", "71", "47"),
        ("The answer is 71 and not 47.", "71", "47"),
        ("So we get $x = 4$, not 2.", "4", "2"),
    ],
)
@pytest.mark.parametrize("reward", ["math", "exact_match"])
def test_a_contrast_after_the_answer_pays_the_stated_value_never_the_denied_one(reward, completion, stated, denied):
    import rewardhub

    score = rewardhub.get(reward)
    assert score(["q", "q"], [completion, completion], solution=[stated, denied]) == [1.0, 0.0]


@pytest.mark.parametrize(
    "completion",
    ["The answer is 71, not 47?", "The answer is 71, not 47 or 48.", "The answer is 5 or not 5."],
)
def test_a_denial_that_does_not_end_the_statement_pays_neither_value(completion):
    import rewardhub

    for reward in ("math", "exact_match"):
        assert rewardhub.get(reward)(["q", "q"], [completion, completion], solution=["71", "47"])[1] == 0.0


@pytest.mark.parametrize(
    "completion",
    [
        "The candidates are -71 and 71; I cannot decide between them.",
        "So the total is 71. I'm not sure.",
        "候选是70和71，我不确定。",
        "Die Kandidaten sind 70 und 71, ich bin nicht sicher.",
        "Los candidatos son 70 y 71; no estoy seguro.",
    ],
)
def test_a_value_guessed_from_an_undecided_last_sentence_is_no_answer(completion):
    import rewardhub

    for reward in ("math", "exact_match"):
        assert rewardhub.get(reward)(["q", "q"], [completion, completion], solution=["71", "70"]) == [0.0, 0.0]


def test_a_stated_answer_stays_stated_beside_doubt_and_an_unmarked_one_without_it():
    import rewardhub

    math = rewardhub.get("math")
    assert math(["q", "q"], ["The answer is 71. I'm not sure though.", "Adding them gives 71."], solution=["71", "71"]) == [1.0, 1.0]


_RUN = 200_000  # a run of blanks a policy can emit: any pattern that backtracks over it more than linearly never ends


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "completion",
    [
        "The answer is 5" + " " * _RUN + "6.",
        "The answer is 5" + " \t" * (_RUN // 2) + "6.",
        "The answer is 5" + " ," * (_RUN // 2) + " or 6.",
        "The answer is 5," + " " * _RUN + "not 4.",
        "The answer is 5 (" + " " * _RUN + "or 6)",
        "The answer is 5" + " " * _RUN + "(without quotes)",
        "The answer is 5" + " " * _RUN + "because 6",
        "答案是 5" + " " * _RUN + "元",
        "It is not" + " " * _RUN + "12.",
    ],
    ids=["spaces", "tabs", "commas", "denial", "or-remark", "remark", "reason", "measure-word", "negation"],
)
def test_runs_of_blanks_in_an_answer_statement_are_read_in_linear_time(completion):
    """Each reading of the statement (hedge separators, remarks, reasons, measure words, denials) is linear on a run
    of blanks: a cubic one took 2 minutes on 800 spaces. A value the text never writes is never paid."""
    import rewardhub

    for reward in ("math", "exact_match"):
        assert rewardhub.get(reward)(["q"], [completion], solution=["7"]) == [0.0]


@pytest.mark.parametrize(
    "completion",
    [
        "Multiplying, $24 \\times 6 = 144$.\n\nHence it is at most 144",
        "Multiplying, $24 \\times 6 = 144$. So it is more than 144.",
        "We get $x = 144$. Then $n \\ge 144$ holds, so n is 144 or more.",
        "Multiplying, $24 \\times 6 = 144$. It is 144 oder 145.",
    ],
)
@pytest.mark.parametrize("reward", ["math", "exact_match"])
def test_a_math_span_before_a_last_sentence_that_bounds_the_value_is_no_answer(reward, completion):
    """The text ends on a bound or a choice: neither it nor the span before it is the answer."""
    score = rewardhub.get(reward).evaluate(["q"], [completion], solution=["144"]).scores[0]
    assert score.value == 0.0, score.reason


def test_a_math_span_before_a_later_remark_without_a_value_stays_the_answer(math_reward):
    completion = "Multiplying, $24 \\times 6 = 144$. Hence the total is $144$. That settles it."
    assert math_reward.evaluate(["q"], [completion], solution=["144"]).scores[0].value == 1.0


@pytest.mark.parametrize(("completion", "expected"), [
    ("So the answer is $7$, although 49 is also possible.", 0.0),  # the stated span, then a plain number it concedes
    ("So the answer is $\\frac{4}{9}$, although 49 is also possible.", 0.0),
    ("The answer is $\\boxed{7}$ though $8$ would also work.", 0.0),
    ("So the answer is $7$, although it took a while to see.", 1.0),  # a concession without a value: a remark
    ("So the answer is $7$, though $7.0$ is the same.", 1.0),  # every value it offers is right
    ("The answer is $\\boxed{7}$, although it took a while to see.", 1.0),
])
def test_a_concession_after_a_stated_answer_offers_its_value_too(math_reward, completion, expected):
    gold = "\\frac{4}{9}" if "frac" in completion else "7"
    score = math_reward.evaluate(["q"], [f"Work.\n\n{completion}"], solution=[gold]).scores[0]
    assert score.value == expected, score.reason
