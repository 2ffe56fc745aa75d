"""Reward-hacking monitor on scripted runs: detection delay on runs that drift into each hack, false alarms on
clean runs, and the monitor's cost per scored row.

    python -m bench.hacking [--seeds 20]

Each hack run is clean until its drift starts (a seeded step between 15 and 25), then drifts over 3-8 steps.
A hack counts as detected when the signal named after it raises an alarm; the delay is the alarm's step minus
the drift's first step. Any alarm on a clean run, or before the drift on a hack run, is a false alarm.
The cost is the time ``observe`` takes per row, against scoring the same rows with a cheap built-in reward
(``format_regex``) in the same process.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from rewardhub._set.routing import Route
from rewardhub.hacking import HackingMonitor
from rewardhub.testing.scripted_runs import CLEAN, HACKS, scripted_run

ROUTES = {"clean_routed": {"code": Route("data_source", ("code",)), "correct": Route("data_source", ("math",))}}


def monitor_run(name: str, seed: int, window: int | None = None):
    run = scripted_run(name, seed)
    from rewardhub.hacking.settings import MonitorSettings

    settings = MonitorSettings(window) if window else None  # default warm-up
    monitor = HackingMonitor(run.roles, lambda step: run.weights, aggregate=run.aggregate,
                             routes=ROUTES.get(name, {}), settings=settings, warn=False)
    for step, batch, results in run.batches():
        monitor.observe(step, batch, results)
    return run, monitor


def evaluate(seeds: int, window: int | None = None) -> dict:
    rows = {}
    for name in CLEAN + HACKS:
        delays, false, missed, extra = [], 0, 0, []
        for seed in range(seeds):
            run, monitor = monitor_run(name, seed, window)
            early = [a for a in monitor.alarms if run.start is None or a.step < run.start]
            false += bool(early)
            if run.hack is None:
                continue
            hits = [a for a in monitor.alarms if a.signal == run.hack and a.step >= run.start]
            if hits:
                delays.append(hits[0].step - run.start)
            else:
                missed += 1
            extra += sorted({a.signal for a in monitor.alarms if a.signal != run.hack and a.step >= run.start})
        rows[name] = {"runs": seeds, "false_alarm_runs": false, "missed": missed, "delays": delays,
                      "other_signals": sorted(set(extra))}
    return rows


def cost(repeats: int = 5) -> tuple[float, float]:
    """Seconds per row (the best of ``repeats``): the monitor's ``observe`` and a ``format_regex`` reward on the
    same rows (a fresh monitor each time, so every step is summarised and read)."""
    import rewardhub

    run = scripted_run("clean", 0)
    batches = list(run.batches())[:16]
    reward = rewardhub.get("format_regex", pattern=r"^<think>.*?</think>\s*<answer>.*?</answer>$")
    n = sum(len(b) for _, b, _ in batches)
    watched, scored = [], []
    for _ in range(repeats):
        monitor = HackingMonitor(run.roles, lambda step: run.weights, warn=False)
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
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--window", type=int, default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    results = evaluate(args.seeds, args.window)
    print(f"{'run':<14} {'runs':>4} {'false':>5} {'missed':>6} {'delay median':>12} {'delay max':>9}  other signals")
    for name, r in results.items():
        d = r["delays"]
        median = f"{statistics.median(d):.1f}" if d else "-"
        worst = f"{max(d):.0f}" if d else "-"
        print(f"{name:<14} {r['runs']:>4} {r['false_alarm_runs']:>5} {r['missed']:>6} {median:>12} {worst:>9}  "
              f"{', '.join(r['other_signals']) or '-'}")
    watched, scored = cost()
    print(f"monitor: {1e6 * watched:.0f} us per row; format_regex: {1e6 * scored:.0f} us per row "
          f"(ratio {watched / scored:.1f}x)")


if __name__ == "__main__":
    main()
