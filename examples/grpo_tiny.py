"""GRPO with a composed rewardhub reward set on a tiny locally built model (CPU, a few seconds).

    python examples/grpo_tiny.py [--steps 3] [--config examples/configs/grpo_tiny.yaml]

Prints the weighted reward and each reward's mean per step, as TRL logs them
(``rewards/<alias>/mean``), and one completion with its per-reward reasons.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import warnings
from pathlib import Path

import rewardhub

HERE = Path(__file__).resolve().parent


@rewardhub.register  # a reward written here, TRL-style; the config names it like any installed reward
def answer_last(completions, **kwargs):
    """1.0 when the completion ends with its answer (nothing after ``</answer>``)."""
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [1.0 if text.rstrip().endswith("</answer>") else 0.0 for text in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--config", default=str(HERE / "configs" / "grpo_tiny.yaml"))
    cli = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)

    import torch
    from datasets import Dataset
    from transformers import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    from rewardhub.testing.tiny_models import tiny_chat_model
    from rewardhub.trainers.grpo import trainer_rewards

    torch.set_num_threads(1)
    model, tokenizer = tiny_chat_model()
    rng = random.Random(0)
    pairs = [(rng.randint(0, 50), rng.randint(0, 50)) for _ in range(16)]
    dataset = Dataset.from_list([
        {"prompt": [{"role": "user", "content": f"What is {a} + {b}? Think, then answer."}], "solution": str(a + b)}
        for a, b in pairs
    ])
    with tempfile.TemporaryDirectory() as out:
        args = GRPOConfig(
            output_dir=out, use_cpu=True, bf16=False, activation_checkpointing=False, report_to="none",
            per_device_train_batch_size=4, num_generations=4, max_completion_length=24, max_steps=cli.steps,
            logging_steps=1, log_completions=True, num_completions_to_print=0, save_strategy="no",
            learning_rate=1e-4, disable_tqdm=True, seed=0,
        )
        trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=dataset,
                              **trainer_rewards(cli.config, args))
        trainer.remove_callback(PrinterCallback)  # we print our own summary below
        trainer.train()
        aliases = [f.__name__ for f in trainer.reward_funcs]
        print(f"\nreward weights: {dict(zip(aliases, args.reward_weights, strict=True))}")
        for log in trainer.state.log_history:
            if "reward" in log:
                means = "  ".join(f"{a}={_fmt(log.get(f'rewards/{a}/mean'))}" for a in aliases)
                print(f"step {log['step']}: reward={log['reward']:+.3f}  {means}")
        logs = trainer._logs
        print(f"\nlast completion: {logs['completion'][-1]!r}")
        for alias in aliases:
            print(f"  {alias}: {logs['rewards'][alias][-1]:+.3f}  ({logs['extra'][f'{alias}/reason'][-1]})")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or value != value else f"{value:+.3f}"


if __name__ == "__main__":
    main()
