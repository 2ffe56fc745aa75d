"""Reward-hacking monitor on scripted GRPO runs (:mod:`hacking_runs`): detection delay of each hack ramping in over
10, 80 and 300 steps, false alarms on honest runs and before onset, and the monitor's cost per scored row.

    python -m bench.hacking [--seeds 5] [--steps 220]

Every run is 8 prompts x 8 completions a step, scored through a real set's TRL reward functions with
``trainer_rewards(..., monitor=True)``. A hack is caught when any alarm is raised at or after its onset, within
``LIMIT`` steps; its delay is the first such alarm's step minus the onset. Any alarm on an honest run, or
before the onset on a hack run, is a false alarm. The cost is the time ``observe`` takes per row, against
scoring the same rows with a cheap built-in reward (``format_regex``) in the same process.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from bench.hacking_runs import HACKS, HONEST, RAMPS, ScriptedRun

LIMIT = 40  # steps after onset within which a hack must be alarmed


def outcome(name: str, ramp: int, seed: int, steps: int) -> dict:
    """One run's false alarms, delay (None: missed) and the signals that rang."""
    run = ScriptedRun(name, ramp=ramp, seed=seed, steps=steps)
    if run.onset is not None:
        run.steps = min(steps, run.onset + LIMIT + 20)
    alarms = run.alarms()
    early = [a for a in alarms if run.onset is None or a.step < run.onset]
    late = [a for a in alarms if run.onset is not None and a.step >= run.onset]
    delay = late[0].step - run.onset if late and late[0].step - run.onset <= LIMIT else None
    return {"false": bool(early), "delay": delay, "signals": sorted({f"{a.signal}" for a in late}),
            "early": [f"{a.signal}/{a.subject}@{a.step:g}" for a in early]}


def evaluate(seeds: int, steps: int) -> list[tuple[str, int, dict]]:
    rows = []
    for name in HONEST + HACKS:
        for ramp in RAMPS if name in HACKS else (0,):
            results = [outcome(name, ramp or 80, seed, steps) for seed in range(seeds)]
            rows.append((name, ramp, {
                "runs": seeds, "false": sum(r["false"] for r in results),
                "missed": sum(r["delay"] is None for r in results) if name in HACKS else 0,
                "delays": [r["delay"] for r in results if r["delay"] is not None],
                "signals": sorted({s for r in results for s in r["signals"]}),
                "early": [e for r in results for e in r["early"]]}))
    return rows


def cost(repeats: int = 3) -> tuple[float, float]:
    """Seconds per row (the best of ``repeats``): the monitor's ``observe`` and a ``format_regex`` reward on the same
    rows of an honest run (a fresh monitor each time)."""
    import rewardhub
    from rewardhub import Batch
    from rewardhub.hacking import HackingMonitor

    run = ScriptedRun("accuracy_rising", seed=0)
    rewards = rewardhub.load({"rewards": [{"name": "exact_match", "alias": "math"},
                                          {"name": "format_regex", "alias": "format", "weight": 0.2}]})
    batches = []
    for step in range(40):
        prompts, completions, solutions = run.batch(step)
        batch = Batch(prompts, completions, {"solution": solutions})
        batches.append((step, batch, rewards.evaluate_batch(batch).components))
    reward = rewardhub.get("format_regex", pattern=r"^<think>.*?</think>\s*<answer>.*?</answer>$")
    n = sum(len(b) for _, b, _ in batches)
    watched, scored = [], []
    for _ in range(repeats):
        monitor = HackingMonitor({"math": "correctness", "format": "format"}, lambda step: {"math": 1.0, "format": 0.2},
                                 warn=False)
        start = time.perf_counter()
        for step, batch, results in batches:
            monitor.observe(step, batch, results)
        watched.append((time.perf_counter() - start) / n)
        start = time.perf_counter()
        for _, batch, _ in batches:
            reward.evaluate_batch(batch)
        scored.append((time.perf_counter() - start) / n)
    return min(watched), min(scored)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=220)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'run':<22} {'ramp':>4} {'runs':>4} {'false':>5} {'missed':>6} {'delay median':>12} {'delay max':>9}  signals")
    for name, ramp, r in evaluate(args.seeds, args.steps):
        d = r["delays"]
        median = f"{statistics.median(d):.1f}" if d else "-"
        worst = f"{max(d):.0f}" if d else "-"
        print(f"{name:<22} {ramp or '-':>4} {r['runs']:>4} {r['false']:>5} {r['missed']:>6} {median:>12} {worst:>9}  "
              f"{', '.join(r['signals']) or '-'}{'  early: ' + ', '.join(r['early']) if r['early'] else ''}")
    watched, scored = cost()
    print(f"monitor: {1e6 * watched:.0f} us per row; format_regex: {1e6 * scored:.0f} us per row "
          f"(ratio {watched / scored:.1f}x)")


if __name__ == "__main__":
    main()
