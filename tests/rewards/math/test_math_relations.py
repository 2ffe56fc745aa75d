"""A false relation never pays (issue 33): ``\\boxed{9 = 10}`` is no answer 10, whatever its spelling or container;
true chains, equations naming what they state and golds that are relations keep their score."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rewardhub
from rewardhub.rewards.math import MathReward
from rewardhub.rewards.math.relations import MAX_SIDES, read_relations

# How a policy may write "=" (canonical reading folds the full-width sign; \\equiv with no modulus is equality).
SIGNS = ("=", "＝", "\\equiv", ":=", "\\coloneqq", "==", "\\doteq")
CONTAINERS = (
    "\\boxed{{{}}}",
    "The answer is $\\boxed{{{}}}$.",
    "<answer>{}</answer>",
    "<think>4 + 6</think>\n<answer>{}</answer>",
    "The answer is {}.",
    "So $${}$$",
    "Therefore $x = {}$.",
    "答案是 $\\boxed{{{}}}$。",
)


def closed(value: int, how: int) -> str:
    """``value`` written as a closed expression: the number, a sum, a product, a fraction or a factorial-free power."""
    return [str(value), f"{value - 3} + 3", f"{value} \\cdot 1", f"\\frac{{{2 * value}}}{{2}}", f"({value})"][how]


@pytest.fixture(scope="module")
def reward():
    return MathReward(timeout=10, workers=2)


def _scores(reward, rows):
    result = reward.evaluate(["q"] * len(rows), [text for _, text in rows], solution=[gold for gold, _ in rows])
    return result.scores


chains = st.lists(
    st.tuples(st.integers(-50, 500), st.integers(-50, 500), st.sampled_from(SIGNS), st.sampled_from(CONTAINERS),
              st.integers(0, 4), st.booleans()).filter(lambda row: row[0] != row[1]),
    min_size=8, max_size=8,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chains)
def test_a_false_chain_never_scores_for_either_side(reward, rows):
    """``a = b`` with ``a != b`` pays neither for ``b`` (the side a parser reads) nor for ``a``."""
    cases = []
    for a, b, sign, container, how, named in rows:
        statement = f"{'x = ' if named else ''}{closed(a, how)} {sign} {b}"
        cases += [(str(b), container.format(statement)), (str(a), container.format(statement))]
    paid = [(gold, text, score.reason) for (gold, text), score in zip(cases, _scores(reward, cases), strict=True)
            if score.value == 1.0]
    assert paid == []


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(-50, 500), st.sampled_from(SIGNS), st.sampled_from(CONTAINERS),
                          st.integers(0, 4), st.booleans()), min_size=8, max_size=8))
def test_a_true_chain_keeps_its_score(reward, rows):
    cases = [(str(a), container.format(f"{'x = ' if named else ''}{closed(a, how)} {sign} {a}"))
             for a, sign, container, how, named in rows]
    unpaid = [(gold, text, score.reason) for (gold, text), score in zip(cases, _scores(reward, cases), strict=True)
              if score.value != 1.0]
    assert unpaid == []


HONEST = [
    ("10", r"\boxed{x = 10}"),
    ("5", r"\boxed{2+3=5}"),
    ("10", r"\boxed{x = y = 10}"),
    ("10", r"\boxed{f(2) = 10}"),
    ("10", r"The answer is $a_n = 10$."),
    ("10", r"\boxed{\text{Area} = 10}"),
    ("10", r"\boxed{10 = x}"),  # an equation names what it states on either side
    ("10", r"\boxed{x = 2 \cdot 5 = 10}"),
    ("10", r"\boxed{x=\sqrt{100}=10}"),
    ("y = 2x + 1", r"\boxed{y = 2x + 1}"),  # the gold is the equation itself
    ("x = 10", r"\boxed{x = 10}"),
    ("(2, 6)", r"\boxed{(x, y) = (2, 6)}"),
    ("3", r"\boxed{8 \equiv 3 \pmod 5}"),  # a congruence: its sides differ by design
    (r"\frac{\sqrt{3}}{3}", r"\boxed{\frac{\sqrt{3}}{3} \approx 0.577}"),  # the exact value, then its decimal
    (r"\frac{1}{3}", r"\boxed{x = \frac{1}{3} \approx 0.333}"),
    ("[3, \\infty)", r"\boxed{x \ge 3}"),  # a bound for a set gold
    ("120", r"\boxed{5!}"),
    ("120", r"\boxed{5! = 120}"),
    ("1, 2", "The solutions are $x = 1$ or $x = 2$."),
]
FALSE = [
    ("10", r"\boxed{9 = 10}", "a false equation: 9 = 10"),
    ("10", r"\boxed{3 \cdot 3 = 10}", "a false equation: 3 \\cdot 3 = 10"),
    ("10", "$9 = 10$", "a false equation: 9 = 10"),
    ("10", "The answer is 9 = 10", "a false equation: 9 = 10"),
    ("9", r"\boxed{10 = 9}", "a false equation: 10 = 9"),
    ("10", r"\boxed{x = 9 = 10}", "a false equation: x = 9 = 10"),
    ("x = 10", r"\boxed{x = 9 = 10}", "a false equation: x = 9 = 10"),  # false whatever the gold
    ("2", r"\boxed{x = 2, y = 9 = 10}", "a false equation"),
    ("120", r"\boxed{5! = 121}", "a false equation: 5! = 121"),
    ("10", r"\boxed{x \approx 10}", "an approximation, not a value equal to the gold"),
    ("9", r"\boxed{9 \approx 10}", "a false approximation"),
    ("10", r"\boxed{x < 10}", "a bound, not a value equal to the gold"),
    ("10", r"\boxed{10 \le x}", "a bound, not a value equal to the gold"),
    ("10", r"\boxed{x \ne 10}", "not equal: x \\ne 10 vs 10 (a negation: it denies a value)"),
    ("448", r"So the answer is $\not= 448$.", "not equal"),
    ("5", r"\boxed{5!}", "not equal"),
    ("10", "=".join(["10"] * (MAX_SIDES + 1)), f"a chain of {MAX_SIDES + 1} relations, no one answer"),
]


def test_honest_relations_keep_their_score(reward):
    unpaid = [(gold, text, score.reason) for (gold, text), score in zip(HONEST, _scores(reward, HONEST), strict=True)
              if score.value != 1.0]
    assert unpaid == []


def test_false_relations_score_zero_with_the_reason(reward):
    scores = _scores(reward, [(gold, text) for gold, text, _ in FALSE])
    got = [(text, score.value, score.reason) for (_, text, _), score in zip(FALSE, scores, strict=True)
           if score.value != 0.0 or not score.reason.startswith(FALSE[[t for _, t, _ in FALSE].index(text)][2])]
    assert got == []
    refused = [score for score in scores if score.reason.startswith(("a false", "an approximation", "a bound", "a chain"))]
    assert len(refused) == len(FALSE) - 3 and all(score.final for score in refused)  # never sent to a rescue's model verifier


@pytest.mark.parametrize(("gold", "completion"), [
    ("t = 26", r"\boxed{\pm t = 26}"),  # Math-Verify reads past the sign it cannot parse: it paid this
    ("t = 26", r"The answer is $\mp t = 26$."),
    ("26", r"\boxed{\pm 26}"),
    ("x = 5", r"\boxed{x = 5 \pm 1}"),
    ("10", "The answer is ±10."),
    ("[1, 3)", r"\boxed{\pm 1}"),
])
def test_a_sign_that_stands_for_two_values_never_pays_a_one_value_gold(reward, gold, completion):
    score = _scores(reward, [(gold, completion)])[0]
    assert score.value == 0.0, score.reason


@pytest.mark.parametrize(("gold", "completion"), [
    ("4, -4", r"\boxed{\pm 4}"),
    ("x = 3, x = -3", r"\boxed{x = \pm 3}"),
    (r"\pm 4", r"\boxed{\pm 4}"),
    (r"2 \pm \sqrt{7}", r"\boxed{2 \pm \sqrt{7}}"),
    ("t = -26", r"\boxed{-t = 26}"),
])
def test_a_sign_that_stands_for_two_values_pays_the_gold_of_both(reward, gold, completion):
    score = _scores(reward, [(gold, completion)])[0]
    assert score.value == 1.0, score.reason


def test_a_runaway_side_never_pays(reward):
    score = _scores(reward, [("10", r"\boxed{9^{9^{9^{9}}} = 10}")])[0]
    assert score.value != 1.0 and score.verdict is not True, score


def test_the_reading_states_the_value_only_for_a_one_value_gold():
    assert read_relations("10", "x = 2 \\cdot 5 = 10").answer == "10"
    assert read_relations("10", "x = 2 \\cdot 5 = 10").checks == (("10", "2 \\cdot 5"),)
    assert read_relations("x = 10", "x = 10").answer == "x = 10"  # a relation gold compares relations
    assert read_relations("10", "2x = 10").answer == "2x = 10"  # no name: the checker's "equation for 2x"
    assert read_relations("10", "1011_2 = 11").checks == ()  # a base is no closed side


@pytest.mark.parametrize("name", ["exact_match", "majority_vote"])
def test_false_relations_pay_nowhere_else(name):
    reward = rewardhub.get(name, **({"timeout": 10, "group_size": 2} if name == "majority_vote" else {}))
    texts = [r"\boxed{9 = 10}", r"\boxed{3 \cdot 3 = 10}", r"\boxed{9 ＝ 10}", r"\boxed{9 \equiv 10}", r"\boxed{x \approx 10}"]
    if name == "exact_match":
        values = reward(prompts=["q"] * len(texts), completions=texts, solution=["10"] * len(texts))
    else:  # beside an honest 10: a relation does not vote, so it never joins (or ties) the majority
        prompts = [f"p{i}" for i in range(len(texts)) for _ in range(2)]
        completions = [text for relation in texts for text in (r"\boxed{10}", relation)]
        values = reward(prompts=prompts, completions=completions)[1::2]
    assert values == [0.0] * len(texts)
