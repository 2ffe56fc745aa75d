"""The training examples run as they are (fresh processes, tiny locally built model)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from paths import EXAMPLES

pytestmark = pytest.mark.slow


def _run(script: str, *args: str) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                          env=env, timeout=600, cwd=EXAMPLES.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_grpo_tiny_prints_per_reward_means_per_step():
    out = _run("grpo_tiny.py", "--steps", "2")
    steps = re.findall(r"^step (\d+): reward=([+-]\d\.\d+)  accuracy=\S+  format=\S+  tags=\S+  answer_last=(\S+)  "
                       r"length_window=(\S+)$", out, re.M)
    assert [s[0] for s in steps] == ["1", "2"]
    assert all(s[2] != "n/a" for s in steps)  # the reward defined in the script scored every step
    assert ("reward weights: {'accuracy': 1.0, 'format': 0.2, 'tags': 0.2, 'answer_last': 0.1, "
            "'length_window': 0.5}") in out
    assert re.search(r"^  format: [+-]\d\.\d+  \(.+\)$", out, re.M)  # a reason from the completions table


def test_ppo_tiny_prints_finite_losses_and_rewards():
    out = _run("ppo_tiny.py", "--iterations", "2")
    lines = re.findall(r"^iteration (\d): reward=(\S+)  accuracy=(\S+)  length_window=(\S+)  kl=(\S+)  "
                       r"policy_loss=(\S+)  value_loss=(\S+)", out, re.M)
    assert [line[0] for line in lines] == ["1", "2"]
    for line in lines:
        assert all(float(v) == float(v) and abs(float(v)) < 1e6 for v in line[1:])
