"""A real TRL GRPOTrainer run on a tiny local model whose paid reward can be gamed: a verbosity bonus pays characters
while the correctness reward (exact match) never pays. The policy games it from the first steps, and the monitor,
wired by ``trainer_rewards(..., monitor=True)``, alarms on it during training, names the bonus (never the
correctness reward) and logs its figures and the completions' signatures through TRL. The monitor's state goes
into the checkpoint TRL saves."""

from __future__ import annotations

import json

import pytest

import rewardhub
from rewardhub import registry
from rewardhub.testing.tiny_models import make_causal_lm
from rewardhub.trainers.grpo import trainer_rewards
from rewardhub.trainers.hacking import CHECKPOINT_FILE

pytestmark = pytest.mark.slow
STEPS = 40


@rewardhub.sample_reward(name="tg_verbose")
def verbose(text: str) -> float:
    """Characters, up to 400: a bonus any long string earns."""
    return min(len(text) / 400, 1.0)


@pytest.fixture(autouse=True)
def _registered():
    if verbose.name not in registry:
        registry.add(verbose, source="test")


def test_a_tiny_grpo_run_gaming_a_verbosity_bonus_is_alarmed(tmp_path):
    import torch
    import trl
    from datasets import Dataset

    torch.set_num_threads(1)
    model = make_causal_lm(tmp_path / "lm")
    dataset = Dataset.from_list([{"prompt": f"Add {a} and {a}:", "solution": str(2 * a)} for a in range(16)])
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, activation_checkpointing=False, report_to="none",
        per_device_train_batch_size=8, num_generations=4, max_completion_length=24, max_steps=STEPS,
        logging_steps=1, log_completions=True, save_strategy="steps", save_steps=STEPS, seed=0, learning_rate=3e-2,
        disable_tqdm=True, temperature=1.0)
    config = {"rewards": [{"name": "exact_match", "alias": "correct", "weight": 1.0},
                          {"name": "tg_verbose", "alias": "verbose", "weight": 1.0, "role": "shaping"}]}
    kwargs = trainer_rewards(config, args, monitor=True)
    callback = kwargs["callbacks"][0]
    trainer = trl.GRPOTrainer(model=str(model), args=args, train_dataset=dataset, **kwargs)
    with pytest.warns(rewardhub.hacking.RewardHackingWarning):
        trainer.train()

    assert callback.alarms, f"no alarm; lengths: {[round(s.means['length']) for s in callback.monitor.history]}"
    first = callback.alarms[0]
    assert first.signal in ("length", "divergence") and first.subject == "verbose", first
    assert "'correct'" not in first.message.split(":")[0]  # the correctness reward is never named as the payer
    assert first.step < STEPS and len(first.examples) == 3
    logged = [entry for entry in trainer.state.log_history if "rewardhub/hacking/alarms" in entry]
    assert logged and logged[-1]["rewardhub/hacking/alarms"] >= 1
    assert "rewardhub/hacking/signatures" in trainer._logs["extra"]
    saved = json.loads((tmp_path / "out" / f"checkpoint-{STEPS}" / CHECKPOINT_FILE).read_text())
    assert saved["alarms"][0]["signal"] == first.signal and len(saved["history"]) == len(callback.monitor.history)
