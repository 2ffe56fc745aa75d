"""`exact_match`'s own speed on GRPO-shaped batches, optionally against another checkout's, in one process.

The batches are bench.math's: 64 prompts x 8 completions with repeats, integer-heavy and LaTeX-heavy in turn,
each generated anew so that no memo of either side has seen its completions. A new reward scores each batch,
as a trainer's new step would. With ``--against DIR`` the reward families of the checkout in ``DIR`` (its
``rewards/`` folder, e.g. ``git worktree add DIR v0.2``) are loaded beside this tree's (the core is this tree's),
and both score every batch, the order alternating: a busy machine slows both alike. Printed: CPU microseconds
per completion of each side by batch kind, the ratio of the sums, the median of the per-batch ratios, and how
many rows the two sides score differently (this tree reads hedges, values and unmarked answers the older one
may not). ``--fresh`` empties both sides' memos of texts and answers before each batch: every gold and answer is
then new, as in a first epoch over distinct golds (a batch's own repeats still hit).

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.exact_match [--against DIR] [--batches 48]
[--prompts 64] [--generations 8] [--fresh]
"""

from __future__ import annotations

import argparse
import importlib
import logging
import statistics
import sys
import time
from typing import Any

from bench.catalog import other_rewards
from bench.math import INTEGER_HEAVY, LATEX_HEAVY, make_batch

KINDS = {"integer-heavy": INTEGER_HEAVY, "LaTeX-heavy": LATEX_HEAVY}


def scored(reward_class: Any, batch: tuple[list[str], list[str], list[str], list[bool]]) -> tuple[float, list]:
    """CPU seconds a new reward of ``reward_class`` takes on ``batch``, and its scores."""
    prompts, completions, golds, _ = batch
    reward = reward_class()
    start = time.process_time()
    values = reward(prompts, completions, solution=golds)
    return time.process_time() - start, values


def forget() -> None:
    """Empty every bounded memo of the loaded reward families (both trees'): readings of texts, answers and golds
    (unbounded caches hold compiled patterns and tables, which a new text never changes)."""
    for name, module in list(sys.modules.items()):
        if name.startswith(("rewardhub.rewards", "other_rewards")):
            for value in list(vars(module).values()):
                if hasattr(value, "cache_clear") and value.cache_info().maxsize is not None:
                    value.cache_clear()
                elif isinstance(value, dict) and type(value).__name__ == "Kept":
                    value.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", metavar="DIR", help="the root of another rewardhub checkout")
    parser.add_argument("--batches", type=int, default=48)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7000)
    parser.add_argument("--fresh", action="store_true", help="empty the memos of texts and answers before each batch")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    import rewardhub.rewards.exact_match as this

    sides = {"this tree": this.ExactMatch}
    if args.against:
        other_rewards(args.against)
        sides["other"] = importlib.import_module("other_rewards.exact_match").ExactMatch
    for reward_class in sides.values():  # warm: imports, lexicons, compiled patterns
        scored(reward_class, make_batch(args.seed - 1, args.prompts, args.generations))
    seconds: dict[tuple[str, str], list[float]] = {}
    differ = rows = 0
    for k in range(args.batches):
        kind = list(KINDS)[k % len(KINDS)]
        batch = make_batch(args.seed + k, args.prompts, args.generations, KINDS[kind])
        values = {}
        if args.fresh:
            forget()
        for side in list(sides)[:: 1 if k % 2 else -1]:  # each goes first in turn
            spent, values[side] = scored(sides[side], batch)
            seconds.setdefault((side, kind), []).append(spent / len(batch[1]) * 1e6)
        if len(values) == 2:
            differ += sum(a != b for a, b in zip(*values.values(), strict=True))
        rows += len(batch[1])
    print(f"exact_match, {args.batches} batches of {args.prompts}x{args.generations}{', memos emptied before each' if args.fresh else ''}, "
          f"CPU us per completion (this tree vs {args.against or 'nothing'}), one process:")
    for kind in KINDS:
        figures = "   ".join(f"{side} {statistics.mean(seconds[(side, kind)]):6.1f}" for side in sides)
        print(f"  {kind:14s} {figures}")
    if len(sides) == 2:
        ours, theirs = (sum(sum(seconds[(side, kind)]) for kind in KINDS) for side in sides)
        ratios = [a / b for kind in KINDS for a, b in zip(seconds[("this tree", kind)], seconds[("other", kind)], strict=True)]
        print(f"  this tree / other: {ours / theirs:.3f} (sums), {statistics.median(ratios):.3f} (median of batches); "
              f"{differ} of {rows} rows scored differently")


if __name__ == "__main__":
    main()
