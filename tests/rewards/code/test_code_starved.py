"""Issue 33, item 5: a timeout the busy machine caused (the run got under half its limit as CPU) abstains
with outcome ``timeout``; a timeout the program caused (it used its CPU) stays a scored 0.0."""

from __future__ import annotations

import pytest

import rewardhub
from rewardhub.sandbox.local import isolation_problem

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")
CASES = [{"input": "1 2\n", "output": "3\n"}]


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


@needs_isolation
def test_a_timeout_without_cpu_abstains_and_one_that_spun_is_scored_by_its_cpu():
    programs = ["import time\ntime.sleep(30)", "while True:\n    pass", "a, b = map(int, input().split())\nprint(a + b)"]
    result = rewardhub.get("code", timeout=1.0).evaluate(["p"] * 3, [fenced(p) for p in programs], tests=[CASES] * 3)
    sleeper, spinner, honest = result.scores
    assert sleeper.value is None and sleeper.outcome == "timeout"
    assert sleeper.reason.startswith("timeout after 1 s with only ") and "s of cpu used: a busy machine" in sleeper.reason
    assert honest.value == 1.0
    if spinner.value is None:  # the machine gave the spinner under half a core: the same abstention, never a score
        assert spinner.outcome == "timeout" and "a busy machine" in spinner.reason
    else:
        assert spinner.value == 0.0 and spinner.outcome == "ok" and spinner.reason == "0/1 cases passed; timeout after 1 s on case 1"
