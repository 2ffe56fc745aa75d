"""The TRL floor pyproject declares is real: at the floor an async rewardhub reward trains in GRPO,
one minor release below it GRPO crashes on it (TRL dispatched async callable objects as sync)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import tomllib

import pytest
from frameworks import install
from paths import ROOT

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent("""
    import sys, tempfile, warnings
    warnings.filterwarnings("ignore")
    import torch, trl
    from datasets import Dataset
    import rewardhub
    from rewardhub.testing.tiny_models import make_causal_lm

    class AsyncLength(rewardhub.AsyncReward):  # an object with `async def __call__`, as every async rewardhub reward
        name = "floor_async_len"

        async def score_sample_async(self, text, row):
            return float(len(text))

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as out:
        args = trl.GRPOConfig(output_dir=out + "/run", use_cpu=True, bf16=False, report_to="none",
                              per_device_train_batch_size=4, num_generations=2, max_completion_length=8,
                              max_steps=1, logging_steps=1, save_strategy="no", seed=0, disable_tqdm=True)
        dataset = Dataset.from_list([{"prompt": f"Add {a} and {a}:"} for a in range(4)])
        run = trl.GRPOTrainer(model=str(make_causal_lm(out + "/lm")), args=args, train_dataset=dataset,
                              reward_funcs=[AsyncLength()])
        run.train()
        means = [log["rewards/floor_async_len/mean"] for log in run.state.log_history if "reward" in log]
        print("TRL", trl.__version__, "MEANS", means)
""")


def declared_floor() -> str:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    floors = {re.fullmatch(r"trl>=([\d.]+)", spec).group(1) for extra in ("trl", "rm") for spec in extras[extra]
              if spec.startswith("trl")}
    assert len(floors) == 1, floors  # one floor for every extra that pulls TRL in
    return floors.pop()


def _train(version: str) -> subprocess.CompletedProcess:
    folder = install({"trl": version}, helpers=())
    env = {**os.environ, "PYTHONPATH": str(folder), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)


def test_an_async_reward_trains_at_the_declared_floor():
    floor = declared_floor()
    proc = _train(f"{floor}.0" if floor.count(".") == 1 else floor)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(rf"^TRL {re.escape(floor)}(\.0)? MEANS \[\d+\.\d+\]$", proc.stdout, re.M), proc.stdout


def test_below_the_floor_grpo_crashes_on_it():
    major, minor = (int(part) for part in declared_floor().split(".")[:2])
    proc = _train(f"{major}.{minor - 1}.0")
    assert proc.returncode != 0
    assert "TypeError: 'coroutine' object is not iterable" in proc.stderr
