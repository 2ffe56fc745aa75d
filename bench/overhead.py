"""Wrapper overhead: rewardhub's batch callable vs calling the raw TRL-style function, 10k completions.

Prints microseconds per completion added by the wrapper (goal: well under 10 µs) and the ratio.
``--clock cpu`` times the process's CPU (all its threads) instead of the wall clock: on a machine other
work keeps busy it measures what the wrapper costs, not how long it waited for a core.
Run from the repository root: python -m bench.overhead [--n 10000] [--repeat 7] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import statistics
import time

import rewardhub


def raw_exact(prompts, completions, solution, **kwargs):
    """The baseline: what a TRL user writes by hand (plain-string completions)."""
    return [float(c.strip() == s) for c, s in zip(completions, solution, strict=True)]


@rewardhub.sample_reward(name="bench_exact_sample")
def exact_sample(text, solution):
    return float(text.strip() == solution)


@rewardhub.batch_reward(name="bench_exact_batch")
def exact_batch(texts, solution):
    return [float(t.strip() == s) for t, s in zip(texts, solution, strict=True)]


class ExactClass(rewardhub.Reward):
    name = "bench_exact_class"

    def score_sample(self, text, row):
        return float(text.strip() == row["solution"])


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def best_time(fn, repeat: int, clock=time.perf_counter) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    n = args.n
    completions = [f"answer {i % 97}" for i in range(n)]
    chat = [[{"role": "assistant", "content": c}] for c in completions]
    solution = [f"answer {i % 89}" for i in range(n)]
    prompts = [f"prompt {i // 8}" for i in range(n)]
    logs = []

    def trl_kwargs():
        return {"trainer_state": None, "log_extra": lambda k, v: logs.append(k), "log_metric": lambda k, v: None}

    def with_timeout(factory):
        reward = factory()
        reward.batch_timeout = 60.0  # a config entry's ``timeout``: the batch runs in a watched thread
        return reward

    cases = {
        "raw function (baseline)": lambda: raw_exact(prompts, completions, solution, **trl_kwargs()),
        "sample_reward, plain": lambda: exact_sample()(prompts, completions, solution=solution, **trl_kwargs()),
        "sample_reward, chat": lambda: exact_sample()(prompts, chat, solution=solution, **trl_kwargs()),
        "batch_reward, plain": lambda: exact_batch()(prompts, completions, solution=solution, **trl_kwargs()),
        "Reward subclass, plain": lambda: ExactClass()(prompts, completions, solution=solution, **trl_kwargs()),
        "sample_reward + timeout": lambda: with_timeout(exact_sample)(prompts, completions, solution=solution,
                                                                      **trl_kwargs()),
    }
    assert cases["raw function (baseline)"]() == cases["sample_reward, plain"]() == cases["batch_reward, plain"]()
    print(f"{n} completions, best of {args.repeat} runs (median in brackets), {args.clock} clock")
    base_best, base_median = best_time(cases["raw function (baseline)"], args.repeat, clock)
    for label, fn in cases.items():
        best, median = best_time(fn, args.repeat, clock)
        overhead_us = (best - base_best) / n * 1e6
        print(f"  {label:26s} {best * 1e3:8.2f} ms ({median * 1e3:.2f})  "
              f"{best / n * 1e6:6.2f} µs/item  overhead {overhead_us:+6.2f} µs/item  ratio {best / base_best:5.2f}x")


if __name__ == "__main__":
    main()
