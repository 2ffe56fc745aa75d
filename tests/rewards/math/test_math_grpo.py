"""`math` and `majority_vote` inside a real TRL GRPOTrainer run on a tiny local model."""

from __future__ import annotations

import pytest

import rewardhub
from rewardhub.testing.tiny_models import make_causal_lm

pytestmark = pytest.mark.slow


def test_grpo_trains_with_math_and_majority_vote(tmp_path):
    import torch
    import trl
    from datasets import Dataset

    torch.set_num_threads(1)
    model = make_causal_lm(tmp_path / "lm")
    rewards = rewardhub.load(
        [
            {"name": "math", "weight": 1.0, "params": {"timeout": 5}},
            {"name": "majority_vote", "weight": 0.5, "params": {"group_size": 2}},
        ]
    )
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none", seed=0,
        per_device_train_batch_size=4, num_generations=2, max_completion_length=8, max_steps=1,
        logging_steps=1, log_completions=True, save_strategy="no", disable_tqdm=True,
        reward_weights=rewards.reward_weights,
    )  # fmt: skip
    dataset = Dataset.from_list([{"prompt": f"Add {a} and {a}:", "solution": str(2 * a)} for a in range(4)])
    run = trl.GRPOTrainer(model=str(model), args=args, train_dataset=dataset, reward_funcs=rewards.reward_funcs)
    run.train()

    logs = run._logs
    math_values = list(logs["rewards"]["math"])
    reasons = list(logs["extra"]["math/reason"])
    assert len(math_values) == len(reasons) == 4
    assert all(v in (0.0, 1.0) for v in math_values)  # a random model is never "unjudgeable": golds parse
    assert all(r.startswith(("correct", "not equal", "no answer found", "answer")) for r in reasons)
    assert all(r.startswith(("majority", "minority", "tie", "no answer")) for r in logs["extra"]["majority_vote/reason"])
