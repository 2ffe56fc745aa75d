"""Real TRL GRPOTrainer runs on a tiny local model: a weight schedule followed step by step in TRL's logs, and the
hacking monitor naming a hack a deliberately gameable reward invites."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from serving import ensure_registered

from rewardhub.hacking import PREFIX, RewardHackingWarning
from rewardhub.testing.tiny_models import load_tokenizer, make_causal_lm
from rewardhub.trainers.grpo import trainer_rewards

pytestmark = pytest.mark.slow
PROMPTS = [f"Add {a} and {a}:" for a in range(8)]


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


def _args(out: Path, steps: int, **extra):
    import trl

    settings = dict(
        output_dir=str(out), use_cpu=True, bf16=False, activation_checkpointing=False, report_to="none",
        per_device_train_batch_size=8, num_generations=4, max_completion_length=8, max_steps=steps, logging_steps=1,
        save_strategy="no", seed=0, learning_rate=1e-3, disable_tqdm=True,
    )
    settings.update(extra)
    return trl.GRPOConfig(**settings)


def _train(model: Path, args, config, **options):
    import trl
    from datasets import Dataset

    run = trl.GRPOTrainer(model=str(model), args=args, train_dataset=Dataset.from_list([{"prompt": p} for p in PROMPTS]),
                          **trainer_rewards(config, args, **options))
    run.train()
    return run, [log for log in run.state.log_history if "reward" in log]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    import torch

    torch.set_num_threads(1)
    return make_causal_lm(tmp_path_factory.mktemp("lm") / "lm")


@pytest.mark.parametrize("composite", [False, True])
def test_the_logged_weight_follows_the_schedule(tiny_lm, tmp_path, composite):
    schedule = {"schedule": "linear", "start": 1.0, "end": 0.0, "steps": 3}
    config = {"rewards": [{"name": "th_async_len", "alias": "length", "weight": schedule},
                          {"name": "th_contains", "weight": 0.5}]}
    args = _args(tmp_path, steps=4)
    run, logs = _train(tiny_lm, args, config, composite=composite)
    assert len(logs) == 4
    for log in logs:
        generated_at = log["step"] - 1  # rewards are computed before the optimizer step TRL logs them under
        weight = max(1.0 - generated_at / 3, 0.0)
        assert log["length/weight"] == pytest.approx(weight)
        if not composite:  # TRL sums weight 1.0 x the values the reward scaled itself
            assert log["rewards/length/mean"] == pytest.approx(weight * log["length/mean"], abs=1e-6)
    assert logs[-1]["length/weight"] == 0.0


def _short_answers_model(base: Path, out: Path) -> Path:
    """The tiny model taught (a few supervised steps) to stop after 2-5 tokens, so its length can grow."""
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = load_tokenizer(base)
    model = AutoModelForCausalLM.from_pretrained(base)
    generator = torch.Generator().manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(60):
        rows = []
        for prompt in PROMPTS:
            answer = torch.randint(10, len(tokenizer) - 3, (int(torch.randint(2, 6, (1,), generator=generator)),),
                                   generator=generator).tolist()
            rows.append(tokenizer(prompt, add_special_tokens=False)["input_ids"] + answer + [tokenizer.eos_token_id])
        width = max(map(len, rows))
        ids = torch.tensor([r + [tokenizer.pad_token_id] * (width - len(r)) for r in rows])
        labels = torch.tensor([r + [-100] * (width - len(r)) for r in rows])
        model(input_ids=ids, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def test_the_monitor_names_a_length_hack_in_a_real_run(tiny_lm, tmp_path):
    """A reward that pays for length (length_penalty's target mode with a far target): the policy learns to
    stop later, length and reward grow together, and the monitor says so while training runs."""
    model = _short_answers_model(tiny_lm, tmp_path / "short")
    config = {"monitor": {"warmup": 0, "window": 6}, "rewards": [
        {"name": "length_penalty", "alias": "long", "params": {"mode": "target", "target_len": 64}}]}
    args = _args(tmp_path / "grpo", steps=12, max_completion_length=64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run, logs = _train(model, args, config, monitor=True)
    hacking = [w for w in caught if issubclass(w.category, RewardHackingWarning)]
    assert [str(w.message).split("'")[1] for w in hacking] == ["length"], [str(w.message) for w in hacking]
    assert "length is being paid for" in str(hacking[0].message)
    assert logs[-1]["completions/mean_length"] > 2 * logs[0]["completions/mean_length"]
    flags = [log[f"{PREFIX}/length"] for log in logs]
    assert flags[0] == 0.0 and 1.0 in flags  # the flag shows in TRL's logs from the step it holds
    assert logs[-1][f"{PREFIX}/alarms"] == 1.0
    assert all(f"{PREFIX}/length_correlation" in log or log["completions/min_length"] == log[
        "completions/max_length"] for log in logs)
    callback = next(c for c in run.callback_handler.callbacks if type(c).__name__ == "HackingCallback")
    assert [a.signal for a in callback.alarms] == ["length"]


def test_stop_on_ends_training_at_the_alarm(tiny_lm, tmp_path):
    model = _short_answers_model(tiny_lm, tmp_path / "short")
    config = {"monitor": {"warmup": 0, "window": 6}, "rewards": [
        {"name": "length_penalty", "alias": "long", "params": {"mode": "target", "target_len": 64}}]}
    args = _args(tmp_path / "grpo", steps=30, max_completion_length=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RewardHackingWarning)
        run, logs = _train(model, args, config, monitor=True, stop_on=("length",))
    assert run.state.global_step < 30
    assert logs[-1][f"{PREFIX}/length"] == 1.0
