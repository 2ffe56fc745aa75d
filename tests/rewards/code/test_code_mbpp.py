"""Real MBPP rows through the ``code`` reward: each canonical solution scores 1.0, and the same code with its
entry point answering ``None`` scores 0. The rows (``code_corpus/mbpp_rows.json``, its source and licence
named there: MBPP, CC-BY-4.0) are a varied sample: plain asserts, floats, tuples and sets, regexes, stdlib
containers (``Counter``, ``defaultdict``), a type as an argument, the solution's own ``sys``, an entry point
named ``sum``, objects built by the tests (``Pair``) and trees built in ``test_setup_code`` (``Node``)."""

from __future__ import annotations

import json

import pytest
from paths import TESTS

import rewardhub
from rewardhub.sandbox.local import isolation_problem

CORPUS = json.loads((TESTS / "code_corpus" / "mbpp_rows.json").read_text())
ROWS = CORPUS["rows"]


def _tests(row: dict) -> list[str]:
    setup = row["test_setup_code"].strip()
    return [f"{setup}\n{test}" if setup else test for test in row["test_list"]]


@pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")
def test_mbpp_canonical_solutions_pass_and_a_none_answer_fails():
    assert "CC-BY-4.0" in CORPUS["licence"] and "MBPP" in CORPUS["source"]
    reward = rewardhub.get("code", timeout=10.0)
    columns = {"tests": [_tests(r) for r in ROWS] * 2, "entry_point": [r["entry_point"] for r in ROWS] * 2}
    wrong = [f"{r['code']}\n\n{r['entry_point']} = lambda *args, **kwargs: None\n" for r in ROWS]
    completions = [f"```python\n{code}\n```" for code in [r["code"] for r in ROWS] + wrong]
    got = reward.evaluate(["p"] * len(completions), completions, **columns).scores
    canonical, none = got[:len(ROWS)], got[len(ROWS):]
    assert {r["task_id"]: s.reason for r, s in zip(ROWS, canonical, strict=True) if s.value != 1.0} == {}
    assert {r["task_id"]: s.reason for r, s in zip(ROWS, none, strict=True) if s.value != 0.0} == {}
