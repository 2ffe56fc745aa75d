"""`majority_vote` with runaway answers in the batch: what a few hostile rows cost a scoring run.

GRPO-shaped rows (prompts x 8 completions, answers from `bench.math`'s LaTeX-heavy generator: right
spellings, wrong answers, symbolic forms), scored three ways in one process after a warm-up:
`majority_vote` on the clean rows (the baseline), `majority_vote` on the same rows with a share of
completions replaced by distinct power towers (`\\boxed{9^{9^{9^{k}}}}`: parse in a millisecond, never
evaluate), and `math` on the hostile rows (the same deadline path, one check per row). Printed: seconds,
the hostile run against the clean one, the share of the hostile run spent on hostile rows, and timeouts.

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.majority_vote [--prompts 125] [--hostile 0.048]
"""

from __future__ import annotations

import argparse
import random
import time

from bench.math import LATEX_HEAVY, make_problem


def make_rows(prompts: int, generations: int, hostile: float, seed: int) -> tuple[list[dict], list[dict]]:
    """The clean rows and the same rows with ``hostile`` of the completions made runaway towers."""
    rng = random.Random(seed)
    clean, dirty = [], []
    for p in range(prompts):
        problem = make_problem(rng, LATEX_HEAVY)
        for _ in range(generations):
            answer = rng.choice(problem.right if rng.random() < 0.6 else problem.wrong)
            row = {"prompt": f"problem {p}", "completion": f"Working... so \\boxed{{{answer}}}", "solution": problem.gold}
            clean.append(row)
            tower = f"Working... so \\boxed{{9^{{9^{{9^{{{rng.randint(5, 10**6)}}}}}}}}}"
            dirty.append({**row, "completion": tower} if rng.random() < hostile else row)
    return clean, dirty


def timed(reward, rows: list[dict]) -> tuple[float, int]:
    start = time.perf_counter()
    result = reward.evaluate([r["prompt"] for r in rows], [r["completion"] for r in rows],
                             solution=[r["solution"] for r in rows])
    return time.perf_counter() - start, result.outcomes.count("timeout")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=125)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--hostile", type=float, default=0.048)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=256, help="rows per scoring call, as `rewardhub score`")
    args = parser.parse_args()

    import rewardhub

    vote = rewardhub.get("majority_vote", timeout=args.timeout)
    math = rewardhub.get("math", timeout=args.timeout)
    warm, _ = make_rows(16, args.generations, 0.0, seed=1)
    timed(vote, warm), timed(math, warm)
    clean, dirty = make_rows(args.prompts, args.generations, args.hostile, seed=0)
    hostile = sum(a is not b for a, b in zip(clean, dirty, strict=True))
    print(f"{len(clean)} rows, {hostile} hostile ({hostile / len(clean):.1%}), timeout {args.timeout:g} s, "
          f"batches of {args.batch}")
    figures = {}
    for label, reward, rows in (("majority_vote clean", vote, clean), ("majority_vote hostile", vote, dirty),
                                ("math hostile", math, dirty)):
        seconds, timeouts = 0.0, 0
        for i in range(0, len(rows), args.batch):
            s, t = timed(reward, rows[i:i + args.batch])
            seconds, timeouts = seconds + s, timeouts + t
        figures[label] = seconds
        print(f"{label:24s} {seconds:8.2f} s  timeouts {timeouts}")
    extra = figures["majority_vote hostile"] - figures["majority_vote clean"]
    print(f"hostile / clean: {figures['majority_vote hostile'] / figures['majority_vote clean']:.1f}x; "
          f"hostile rows' share of the hostile run: {extra / figures['majority_vote hostile']:.0%}; "
          f"majority_vote hostile / math hostile: {figures['majority_vote hostile'] / figures['math hostile']:.2f}x")


if __name__ == "__main__":
    main()
