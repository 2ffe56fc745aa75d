"""A run's CPU time (``SandboxResult.cpu_seconds``) and the rule it feeds: a timeout with less than half its
limit as CPU was starved by a busy machine (``SandboxResult.starved``), one that used its CPU ran away."""

from __future__ import annotations

import pytest

from rewardhub import sandbox
from rewardhub.sandbox import SandboxResult
from rewardhub.sandbox.local import isolation_problem
from rewardhub.sandbox.program import STARVED_SHARE

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")


def test_the_rule_judges_a_timeout_by_the_cpu_it_got():
    assert STARVED_SHARE == 0.5
    assert SandboxResult(timed_out=True, cpu_seconds=0.2).starved(1.0)
    assert not SandboxResult(timed_out=True, cpu_seconds=0.95).starved(1.0)  # used its budget: the program's doing
    assert not SandboxResult(timed_out=True, cpu_seconds=None).starved(1.0)  # unknown: stays the program's failure
    assert not SandboxResult(timed_out=False, cpu_seconds=0.0, exit_code=0).starved(1.0)


@needs_isolation
def test_cpu_seconds_count_the_program_and_the_children_it_waited_for():
    code = ("import os\npid = os.fork()\nif pid == 0:\n    x = 0\n    for i in range(3_000_000):\n        x += i\n"
            "    t = os.times()\n    print(t.user + t.system, flush=True)\n    os._exit(0)\nos.waitpid(pid, 0)\n")
    result = sandbox.run(code, timeout=60)
    assert result.ok, result.reason
    child = float(result.stdout.split()[0])
    assert child > 0 and result.cpu_seconds is not None and result.cpu_seconds >= child
    assert not result.starved(60)


@needs_isolation
def test_a_sleeping_program_that_times_out_used_next_to_no_cpu():
    """A program blocked past its deadline looks like a starved one: it got almost none of its CPU."""
    result = sandbox.run("import time\ntime.sleep(30)", timeout=1)
    assert result.timed_out and result.reason == "timeout after 1 s"
    assert result.cpu_seconds is not None and result.cpu_seconds < STARVED_SHARE and result.starved(1)


@needs_isolation
def test_a_spinning_program_that_times_out_is_judged_by_the_cpu_it_measured():
    result = sandbox.run("while True:\n    pass", timeout=1)
    assert result.timed_out and result.cpu_seconds is not None and result.cpu_seconds > 0
    assert result.starved(1) == (result.cpu_seconds < STARVED_SHARE)  # on an idle machine: ~1 s, not starved
