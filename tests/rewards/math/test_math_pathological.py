"""Completions built to hang a verifier: called from a non-main thread, the reward comes back in time."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from responsive import beats_during

from rewardhub.rewards.math import MathReward

TIMEOUT = 1.0

PATHOLOGICAL = {
    "tower of powers": (r"\boxed{9^{9^{9}}}", "5", {"timeout after 1 s", "runaway", "answer unparseable: 9^{9^{9}}"}),
    "huge factorial": (r"\boxed{100000!}", "5", {"timeout after 1 s", "runaway", "not equal: 100000! vs 5"}),
    "10k nested braces": (
        r"\boxed{" + "{" * 10_000 + "1" + "}" * 10_000 + "}",
        "1",
        {"answer too long (20001 chars > 1000)"},
    ),
    "unclosed 10k braces": ("{" * 10_000 + r"\boxed{" + "{" * 10_000, "1",
                            {"no answer: the last box is left open: the text stops inside its answer (cut off?)"}),
    "1 MB completion": ("Let me think. " * 75_000 + r"So \boxed{7}.", "7", {"correct: 7"}),
    "1 MB of digits": ("1" * 1_000_000, "7", {"answer too long (1000000 chars > 1000)"}),
    "nested fractions": (
        r"\boxed{" + r"1+\frac{1}{" * 80 + "2" + "}" * 80 + "}",
        "1",
        {"timeout after 1 s", "runaway", "not equal", "answer unparseable"},  # which one: the machine's speed
    ),
}


@pytest.fixture(scope="module")
def reward():
    reward = MathReward(timeout=TIMEOUT, workers=2)
    reward.evaluate(["warm up"], [r"\boxed{x^2}"], solution=["x^2"])  # workers started and sympy imported
    return reward


@pytest.mark.parametrize("case", list(PATHOLOGICAL))
def test_pathological_completion_comes_back_at_the_deadline_from_a_thread(reward, case):
    text, gold, reasons = PATHOLOGICAL[case]
    score, beats = beats_during(lambda: reward.evaluate(["q"], [text], solution=[gold]).scores[0])
    assert any(score.reason.startswith(r) for r in reasons), score
    # a timeout: a runaway (its whole cpu budget used) is the answer's failure, a busy machine's abstains
    assert score.value in ((0.0 if score.reason.startswith("runaway") else None,) if score.outcome == "timeout"
                           else (0.0, 1.0))
    if score.outcome == "timeout":  # it waited out the deadline: meanwhile the main thread kept running
        assert beats >= 1


def test_one_pathological_row_does_not_cost_the_others(reward):
    texts = [r"\boxed{9^{9^{9}}}", r"\boxed{2}", r"\boxed{\frac{1}{2}}", r"\boxed{x+1}"]
    result = reward.evaluate(["q"] * 4, texts, solution=["5", "2", "0.5", "1+x"])
    assert result.values[1:] == [1.0, 1.0, 1.0] and result.outcomes[0] == "timeout"
    assert result.values[0] == (0.0 if result.reasons[0].startswith("runaway") else None)


def test_a_timeout_abstains_by_default_and_timeout_score_is_configurable():
    """A busy machine times out right answers too: a timeout with cpu to spare is no evidence that the answer is
    wrong (it abstains, and counts at its group's floor in a set); timeout_score sets what every timeout scores."""
    assert MathReward().timeout_score is None
    reward = MathReward(timeout=TIMEOUT, timeout_score=0.0, workers=2)
    result = reward.evaluate(["q"], [r"\boxed{9^{9^{9}}}"], solution=["5"])
    assert result.scores[0].value == 0.0 and result.scores[0].reason.startswith(("timeout after 1 s", "runaway"))
    assert result.scores[0].outcome == "timeout"


@pytest.mark.parametrize("timeout_score", [None, 0.25])
def test_a_runaway_is_the_answers_failure_and_a_starved_pair_abstains(timeout_score):
    """Judged by the cpu the pair used (the workers report it): its whole budget is a runaway, the answer's doing
    (``\\boxed{9^{9^{9^{9}}}}``), scored 0.0 unless timeout_score says otherwise; less is a busy machine's doing."""
    from rewardhub.rewards.math.checker import Check

    reward = MathReward(timeout=5, timeout_score=timeout_score)
    runaway = reward._score(Check("runaway", "5 s of cpu"), "42", "9^{9^{9^{9}}}")
    assert runaway.value == (0.0 if timeout_score is None else timeout_score) and runaway.outcome == "timeout"
    assert runaway.verdict is False and runaway.reason.startswith("runaway: the answer used its whole 5 s of cpu")
    starved = reward._score(Check("timeout", "0.3 s of cpu"), "42", "41")
    assert starved.value == timeout_score and starved.outcome == "timeout" and starved.verdict is None
    assert starved.reason == "timeout after 5 s with only 0.3 s of cpu (a busy machine)"


MATHY = st.sampled_from(
    [r"\boxed{", "}", "{", r"\frac", "^", "9", "1", "0", ".", ",", "-", "/", "####", "<answer>", "</answer>",
     "answer is ", r"\%", "%", "$", r"\sqrt", "x", "=", "(", ")", "[", "]", r"\infty", r"\text{", " ", "\n", "!",
     r"\left", r"\right", r"\pi", r"\cdot", "e", "é", "\x00"]
)  # fmt: skip
TEXTS = st.lists(MATHY, max_size=30).map("".join) | st.text(max_size=40)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.tuples(TEXTS, TEXTS | st.integers(-100, 100) | st.none()), min_size=1, max_size=6))
def test_fuzzed_batches_never_error_and_stay_in_range(reward, rows):
    texts = [text for text, _ in rows]
    golds = [gold for _, gold in rows]
    result = reward.evaluate(["q"] * len(rows), texts, solution=golds)
    assert result.errors == 0, result.reasons
    for score in result.scores:
        assert score.value in (0.0, 1.0, None)
        assert score.reason
        assert score.verdict is None or score.verdict == (score.value == 1.0)
