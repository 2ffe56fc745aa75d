"""End to end: `rewardhub pairs` / `select` output trains TRL's DPOTrainer and SFTTrainer on a tiny local model."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardhub.testing.tiny_models import load_tokenizer, make_causal_lm

pytestmark = pytest.mark.slow
RH = str(Path(sys.executable).with_name("rewardhub"))


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    import torch

    torch.set_num_threads(1)
    return make_causal_lm(tmp_path_factory.mktemp("lm") / "lm")


@pytest.fixture(scope="module")
def scored_file(tmp_path_factory) -> Path:
    """8 chat prompts x 3 completions, scored as `rewardhub score` writes them (a right, a wrong, an unformatted)."""
    rows = []
    for a in range(8):
        prompt = [{"role": "user", "content": f"What is {a} + {a}?"}]
        for text, reward, fmt in ((f"<answer>{2 * a}</answer>", 1.2, 1.0), (f"<answer>{2 * a + 1}</answer>", 0.2, 1.0),
                                  (f"{2 * a}", 1.0, 0.0)):
            rows.append({"prompt": prompt, "completion": [{"role": "assistant", "content": text}],
                         "solution": str(2 * a), "reward": reward, "rewards": {"math": reward - 0.2 * fmt, "fmt": fmt},
                         "reasons": {"math": "", "fmt": ""}})
    path = tmp_path_factory.mktemp("data") / "scored.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def rh(*args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([RH, *args], capture_output=True, text=True, env=env, timeout=120)


def test_dpo_trainer_trains_on_the_pairs_folder(tiny_lm, scored_file, tmp_path):
    import datasets
    import torch
    import trl
    from transformers import AutoModelForCausalLM

    done = rh("pairs", str(scored_file), "-o", str(tmp_path / "pairs"), "--require", "fmt>=1", "--keep", "solution")
    assert done.returncode == 0, done.stderr
    assert "wrote 8 pairs from 8 prompts" in done.stderr
    pairs = datasets.load_from_disk(str(tmp_path / "pairs"))
    assert len(pairs) == 8
    first = pairs[0]
    assert first["prompt"] == [{"role": "user", "content": "What is 0 + 0?"}]
    assert first["chosen"] == [{"role": "assistant", "content": "<answer>0</answer>"}]
    assert first["rejected"] == [{"role": "assistant", "content": "<answer>1</answer>"}]
    assert first["margin"] == pytest.approx(1.0) and first["solution"] == "0"

    model = AutoModelForCausalLM.from_pretrained(str(tiny_lm))
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    args = trl.DPOConfig(
        output_dir=str(tmp_path / "dpo"), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
        max_steps=2, logging_steps=1, save_strategy="no", seed=0, learning_rate=1e-3, disable_tqdm=True,
        max_length=64,
    )
    trainer = trl.DPOTrainer(model=model, args=args, train_dataset=pairs, processing_class=load_tokenizer(tiny_lm))
    trainer.train()
    logs = [log for log in trainer.state.log_history if "loss" in log]
    assert len(logs) == 2 and all(math.isfinite(log["loss"]) for log in logs)
    assert trainer.state.global_step == 2
    changed = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert changed, "DPO steps left every weight unchanged"


def test_sft_trainer_trains_on_the_selection(tiny_lm, scored_file, tmp_path):
    import datasets
    import trl

    out = tmp_path / "sft.parquet"
    done = rh("select", str(scored_file), "-o", str(out), "--format", "messages", "--min-score", "1")
    assert done.returncode == 0, done.stderr
    sft = datasets.Dataset.from_parquet(str(out))
    assert len(sft) == 8 and sft[0]["messages"][-1] == {"role": "assistant", "content": "<answer>0</answer>"}
    args = trl.SFTConfig(
        output_dir=str(tmp_path / "sft"), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
        max_steps=2, logging_steps=1, save_strategy="no", seed=0, learning_rate=1e-3, disable_tqdm=True,
        max_length=64,
    )
    trainer = trl.SFTTrainer(model=str(tiny_lm), args=args, train_dataset=sft, processing_class=load_tokenizer(tiny_lm))
    trainer.train()
    logs = [log for log in trainer.state.log_history if "loss" in log]
    assert len(logs) == 2 and all(math.isfinite(log["loss"]) for log in logs)
