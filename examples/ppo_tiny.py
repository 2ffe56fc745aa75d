"""PPO with rewardhub rewards on a tiny locally built model: the reference loop, end to end on CPU.

    python examples/ppo_tiny.py [--iterations 3] [--config examples/configs/ppo_tiny.yaml]

Each iteration samples responses, scores them with the reward set (score on the last token, KL
to the frozen reference on every token), runs GAE and two PPO epochs over minibatches, and prints
the losses, the KL and each reward's mean.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--config", default=str(HERE / "configs" / "ppo_tiny.yaml"))
    cli = parser.parse_args()

    import torch

    from rewardhub.testing.tiny_models import tiny_chat_model
    from rewardhub.trainers.ppo import PPORewards
    from rewardhub.trainers.ppo_loop import PPOConfig, PPOLoop

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, tokenizer = tiny_chat_model()
    rng = random.Random(0)
    rows = []
    for _ in range(16):
        a, b = rng.randint(0, 50), rng.randint(0, 50)
        rows.append({"prompt": [{"role": "user", "content": f"What is {a} + {b}?"}], "solution": str(a + b)})

    config = PPOConfig(rollout_batch_size=8, minibatch_size=4, ppo_epochs=2, max_new_tokens=16, learning_rate=1e-4)
    loop = PPOLoop(model, tokenizer, PPORewards(cli.config), config)
    for i, stats in enumerate(loop.train(rows, iterations=cli.iterations), start=1):
        rewards = "  ".join(f"{k.removeprefix('rewards/')}={v:+.3f}" for k, v in stats.items() if k.startswith("rewards/"))
        print(f"iteration {i}: reward={stats['reward']:+.3f}  {rewards}  kl={stats['kl']:+.4f}  "
              f"policy_loss={stats['loss/policy']:+.4f}  value_loss={stats['loss/value']:.4f}  "
              f"clipfrac={stats['clipfrac']:.2f}")
    rollout = loop.last_rollout
    print(f"\nlast response: {rollout.responses[0]!r}")
    for alias, reasons in rollout.scores.reasons.items():
        print(f"  {alias}: {float(rollout.scores.components[alias][0]):+.3f}  ({reasons[0]})")


if __name__ == "__main__":
    main()
