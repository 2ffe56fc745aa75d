"""Benchmark: ``reward_model``'s length-sorted batches vs a naive padded-batch forward pass, same run.

Scores 1,024 completions of mixed lengths (most short, a long tail) with a tiny local Qwen2 reward model.
The naive baseline is what a plain loop does (and what GRPOTrainer does for a model reward): take the
completions in arrival order, pad each batch to its longest member, run it. Both paths start from
strings, produce the same scores (checked), and use the same batch size; the figure is the time ratio.

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.reward_model [--n 1024] [--batch-size 32] [--hidden 64]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

WORDS = "the answer is because first then we compute sum of each value so result equals".split()


def mixed_completions(n: int, seed: int = 0) -> list[str]:
    """Lengths from 4 to ~150 words (up to ~480 tokens), log-uniform: many short completions, a long tail."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(int(2 ** rng.uniform(2, 7.2)))) for _ in range(n)]


def naive_scores(model, tokenizer, prompts: list[str], completions: list[str], batch_size: int) -> list[float]:
    import torch

    eos = tokenizer.eos_token
    texts = [p + c + eos for p, c in zip(prompts, completions, strict=True)]
    scores: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            inputs = tokenizer(texts[start : start + batch_size], return_tensors="pt", padding=True, padding_side="right")
            scores.extend(model(**inputs).logits[:, 0].tolist())
    return scores


def interleaved_best(repeats: int, *fns) -> list[tuple[float, list[float]]]:
    """Best wall time of each function, runs alternating so that load drift on a shared machine hits both."""
    best = [(float("inf"), [])] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            result = fn()
            best[k] = min(best[k], (time.perf_counter() - start, result), key=lambda pair: pair[0])
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=32, help="hidden size of the tiny model (default 32)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForSequenceClassification

    from rewardhub.rewards.reward_model import RewardModelReward
    from rewardhub.testing.tiny_models import load_tokenizer, make_seq_classifier

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_seq_classifier(
            Path(tmp) / "rm", hidden_size=args.hidden, intermediate_size=2 * args.hidden, num_attention_heads=4
        )
        completions = mixed_completions(args.n)
        prompts = [f"Question {i}: what is the result?\n" for i in range(args.n)]
        reward = RewardModelReward(model=str(folder), batch_size=args.batch_size, device="cpu")
        model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
        tokenizer = load_tokenizer(folder)
        lengths = sorted(len(tokenizer(p + c)["input_ids"]) for p, c in zip(prompts, completions, strict=True))

        reward(prompts[:64], completions[:64])  # load and warm up both paths
        naive_scores(model, tokenizer, prompts[:64], completions[:64], args.batch_size)
        (naive_s, naive), (ours_s, ours) = interleaved_best(
            args.repeats,
            lambda: naive_scores(model, tokenizer, prompts, completions, args.batch_size),
            lambda: reward(prompts, completions),
        )

    drift = max(abs(a - b) for a, b in zip(ours, naive, strict=True))
    print(f"{args.n} completions, tokens min/median/max {lengths[0]}/{lengths[len(lengths) // 2]}/{lengths[-1]}, "
          f"batch size {args.batch_size}, hidden {args.hidden}, 1 CPU thread")
    print(f"naive padded batches (arrival order): {naive_s:.3f} s  ({args.n / naive_s:.0f} completions/s)")
    print(f"reward_model (length-sorted batches): {ours_s:.3f} s  ({args.n / ours_s:.0f} completions/s)")
    print(f"speed-up: {naive_s / ours_s:.2f}x   max |score difference|: {drift:.2e}")


if __name__ == "__main__":
    main()
