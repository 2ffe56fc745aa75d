"""`math` vs TRL's `accuracy_reward` on GRPO-shaped batches: throughput and agreement with known verdicts.

Two batches (64 prompts x 8 completions by default), generated with a fixed seed: an integer-heavy one
(16 answer kinds, most of them plain numbers) and a LaTeX-heavy one (fractions, radicals, multiples of
pi, polynomial expressions, intervals, plain numbers in equal shares). Completions are realistic model
output (reasoning with intermediate numbers and LaTeX, then the answer in one of many formats:
\\boxed, "the final answer is", GSM8K's ####, <answer> tags, a last math span, plain last line), correct
answers in equivalent spellings, wrong answers, and repeated completions; each completion's expected
verdict is known by construction. Both rewards score the same batches in the same process, after a
warm-up on a different batch (imports, worker start-up); the cold first call of `math` is printed too.
Every batch is new (no verdict of `math`'s cache has seen its pairs), but golds recur across batches as
in training (a dataset has few golds per step; they repeat every epoch).

``--against PYTHON`` compares two checkouts: this file runs under that interpreter (its own ``rewardhub``)
and under this one, alternately, ``--rounds`` times each, and the best of each figure is printed per side
with the ratio: completions/s of ``math`` (wall clock, worker processes included), its speed relative to
TRL's in the same run, and the calling process's CPU microseconds per completion (reading the answers;
the least disturbed by other load).

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.math [--prompts 64] [--generations 8] [--repeat 3]
[--json] [--against /path/to/base/.venv/bin/python --rounds 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A gold answer with ways to write it correctly and ways to get it wrong."""

    gold: str
    right: list[str]
    wrong: list[str]


INTEGER_HEAVY = ["integer", "integer", "integer", "big", "fraction", "decimal", "radical", "pi", "interval",
                 "point", "expression", "percent", "equation", "set", "angle", "money"]  # fmt: skip
LATEX_HEAVY = ["fraction", "radical", "pi", "expression", "interval", "integer"]


def make_problem(rng: random.Random, kinds: list[str]) -> Problem:
    kind = rng.choice(kinds)
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    n = rng.randint(2, 400)
    if kind == "integer":
        return Problem(f"{n}", [f"{n}", f"{n}", f"{n}.0", f"x = {n}"], [f"{n + 1}", f"{n - 2}", f"{2 * n}"])
    if kind == "big":
        big = rng.randint(1000, 999_999)
        return Problem(
            f"{big}", [f"{big}", f"{big:,}", f"{big:,}".replace(",", "{,}")], [f"{big + 10}", f"{big // 10}"]
        )
    if kind == "fraction":
        p, q = sorted(rng.sample([1, 2, 3, 5, 7, 11], 2))
        return Problem(
            rf"\frac{{{p}}}{{{q}}}",
            [rf"\frac{{{p}}}{{{q}}}", rf"\dfrac{{{p}}}{{{q}}}", f"{p}/{q}", rf"\frac{{{2 * p}}}{{{2 * q}}}",
             rf"\frac{p}{q}" if q < 10 else rf"\frac{p}{{{q}}}"],
            [rf"\frac{{{q}}}{{{p}}}", rf"\frac{{{p + 1}}}{{{q}}}", f"{q}"],
        )
    if kind == "decimal":
        p, q = rng.choice([(1, 2), (3, 4), (1, 4), (2, 5), (7, 8)])
        return Problem(
            rf"\frac{{{p}}}{{{q}}}",
            [f"{p / q:g}", rf"\frac{{{p}}}{{{q}}}"],
            [f"{p / q + 0.1:g}", f"{q / p:g}"],
        )
    if kind == "radical":
        b = rng.choice([2, 3, 5, 6, 7])
        return Problem(
            rf"{a}\sqrt{{{b}}}",
            [rf"{a}\sqrt{{{b}}}", rf"\sqrt{{{a * a * b}}}", rf"{a}\sqrt{b}", rf"\frac{{{2 * a}\sqrt{{{b}}}}}{{2}}"],
            [rf"\sqrt{{{b}}}", rf"{a + 1}\sqrt{{{b}}}", f"{a * b}", rf"{a}\sqrt{{{b + 1 if b != 3 else 2}}}"],
        )
    if kind == "pi":
        return Problem(
            rf"\frac{{{a}\pi}}{{{b}}}" if a % b else f"{a // b}\\pi",
            [rf"\frac{{{a}\pi}}{{{b}}}", rf"\frac{{{a}}}{{{b}}}\pi", rf"{a}\pi/{b}"],
            [rf"\frac{{{a + 1}\pi}}{{{b}}}", rf"\frac{{{a}}}{{{b}}}", f"{a * 3.14 / b:.2f}"],
        )
    if kind == "interval":
        return Problem(
            f"({-a}, {b}]",
            [f"({-a}, {b}]", rf"\left({-a},{b}\right]", rf"\left( -{a}, {b} \right]"],
            [f"[{-a}, {b}]", f"({-a}, {b})", f"({-a}, \\infty)"],
        )
    if kind == "point":
        return Problem(f"({a}, {-b})", [f"({a}, {-b})", f"({a},{-b})"], [f"({-b}, {a})", f"({a}, {b})"])
    if kind == "expression":
        return Problem(
            f"{a}x+{a * b}",
            [f"{a}(x+{b})", f"{a}x + {a * b}", f"{a * b} + {a}x", f"{a}x+{a * b}"],
            [f"{a}x+{b}", f"{a}(x-{b})", f"{a}x^2+{a * b}"],
        )
    if kind == "percent":
        return Problem(f"{10 * a}", [rf"{10 * a}\%", f"{10 * a}"], [rf"{10 * a + 5}\%", f"{a}"])
    if kind == "equation":
        return Problem(f"{-a}", [f"x = {-a}", f"{-a}", f"x={-a}"], [f"x = {a}", f"{a}"])
    if kind == "set":
        return Problem(
            rf"\{{{a}, {a + b}\}}",
            [rf"\{{{a + b}, {a}\}}", rf"\{{{a}, {a + b}\}}"],
            [rf"\{{{a}\}}", rf"\{{{a}, {b + a + 1}\}}"],
        )
    if kind == "angle":
        return Problem(
            f"{15 * a}", [rf"{15 * a}^\circ", rf"{15 * a}^{{\circ}}", f"{15 * a}"], [rf"{15 * a + 15}^\circ"]
        )
    return Problem(f"{n}", [rf"\${n}", rf"{n}\text{{ dollars}}", f"{n}"], [rf"\${n + 5}", f"{n * 3}"])


FILLER = [
    "First, let me restate the problem in my own words.",
    "We can set up the equation carefully.",
    "Substituting the known values gives",
    "Let me double-check the arithmetic.",
    "Simplifying both sides,",
    "This matches the constraint from the problem.",
    "So we need to be careful with the signs here.",
    "Now combine like terms.",
]


def reasoning(rng: random.Random) -> str:
    steps = []
    for _ in range(rng.randint(3, 9)):
        x, y = rng.randint(1, 99), rng.randint(1, 99)
        steps.append(rng.choice(FILLER))
        steps.append(rng.choice([f"${x} + {y} = {x + y}$.", rf"$\frac{{{x}}}{{{y}}} \cdot {y} = {x}$.",
                                 f"{x} times {y} is {x * y}.", rf"\[ {x}^2 = {x * x} \]"]))  # fmt: skip
    return " ".join(steps)


def present(rng: random.Random, answer: str) -> str:
    """The answer as a model writes it (a human reader finds it in every one of these)."""
    body = reasoning(rng)
    plain = (
        answer.replace(r"\%", "%").replace(r"\$", "$")
        if "\\" not in answer.replace(r"\%", "").replace(r"\$", "")
        else None
    )
    styles = [
        f"{body}\n\nTherefore, the final answer is $\\boxed{{{answer}}}$.",
        f"{body}\nTherefore, ${answer}$ is the value.",
        f"{body}\nSo the answer is \\boxed{{{answer}}}.",
        f"<think>\n{body}\n</think>\n<answer>{answer}</answer>",
        f"<think>\n{body}\n</think>\n<answer>\\boxed{{{answer}}}</answer>",
        f"{body}\nThe final answer is ${answer}$. I hope it is correct.",
        f"{body}\n\n**Final Answer:** $\\boxed{{{answer}}}$",
    ]
    if plain is not None:
        styles += [f"{body}\n#### {plain}", f"{body}\nThe answer is {plain}."]
    return rng.choice(styles)


def make_batch(
    seed: int, prompts: int, generations: int, kinds: list[str] = INTEGER_HEAVY
) -> tuple[list[str], list[str], list[str], list[bool]]:
    rng = random.Random(seed)
    rows_prompt, rows_completion, rows_gold, expected = [], [], [], []
    for p in range(prompts):
        problem = make_problem(rng, kinds)
        skill = rng.random()  # easy prompts: mostly right and often the very same completion
        previous: list[tuple[str, bool]] = []
        for _ in range(generations):
            if previous and rng.random() < 0.25:
                completion, verdict = rng.choice(previous)
            else:
                verdict = rng.random() < skill
                completion = present(rng, rng.choice(problem.right if verdict else problem.wrong))
                previous.append((completion, verdict))
            rows_prompt.append(f"Problem {seed}-{p}: compute the value.")
            rows_completion.append(completion)
            rows_gold.append(f"${problem.gold}$")
            expected.append(verdict)
    return rows_prompt, rows_completion, rows_gold, expected


def agreement(values: list, expected: list[bool]) -> float:
    return sum((v == 1.0) == e for v, e in zip(values, expected, strict=True)) / len(expected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object only")
    parser.add_argument("--against", metavar="PYTHON", help="another checkout's interpreter to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs per side with --against")
    args = parser.parse_args()
    if args.against:
        compare(args)
        return
    logging.disable(logging.WARNING)

    from trl.rewards import accuracy_reward

    import rewardhub

    prompts, completions, golds, _ = make_batch(1000, 8, args.generations, LATEX_HEAVY)  # warm-up batch
    math_reward = rewardhub.get("math")
    start = time.perf_counter()
    math_reward(prompts=prompts, completions=_chat(completions), solution=golds)
    cold = time.perf_counter() - start
    accuracy_reward(_chat(completions), golds)
    say = (lambda *_: None) if args.json else print
    say(f"batch: {args.prompts} prompts x {args.generations} completions, {args.repeat} batches each (median); "
        f"`math` with {math_reward.checker.pool.size} worker(s)")  # fmt: skip
    say(f"{'batch':<15}{'reward':<34}{'completions/s':>14}{'agreement':>11}{'vs TRL':>8}{'CPU us':>8}")
    figures = {}
    for name, kinds in (("integer-heavy", INTEGER_HEAVY), ("LaTeX-heavy", LATEX_HEAVY)):
        figures.update(_compare(name, kinds, args, math_reward, accuracy_reward, say))
    say(f"rewardhub math cold first call (worker start-up, imports): {cold:.2f} s")
    if args.json:
        print(json.dumps(figures))


def compare(args: argparse.Namespace) -> None:
    """Alternate runs of this file under ``args.against`` (base) and this interpreter; print the best figures."""
    command = [__file__, "--json", "--prompts", str(args.prompts), "--generations", str(args.generations),
               "--repeat", str(args.repeat)]
    best: dict[str, dict[str, dict[str, float]]] = {"base": {}, "this": {}}
    for _ in range(args.rounds):
        for side, python in (("base", args.against), ("this", sys.executable)):
            out = subprocess.run([python, "-P", *command], capture_output=True, text=True, check=True).stdout
            for run, figures in json.loads(out.splitlines()[-1]).items():
                kept = best[side].setdefault(run, {})
                for figure, value in figures.items():  # the best: most completions/s, least CPU
                    kept[figure] = (min if figure == "cpu_us" else max)(value, kept.get(figure, value))
    print(f"best of {args.rounds} alternating runs per side (base: {args.against}); this / base")
    print(f"{'run':<22}{'figure':<16}{'base':>10}{'this':>10}{'ratio':>8}")
    for run, figures in best["base"].items():
        for figure, value in figures.items():
            ours = best["this"][run][figure]
            print(f"{run:<22}{figure:<16}{value:>10.1f}{ours:>10.1f}{ours / value:>8.2f}")


def _chat(completions: list[str]) -> list[list[dict]]:
    return [[{"role": "assistant", "content": c}] for c in completions]


def _compare(name: str, kinds: list[str], args: argparse.Namespace, math_reward, accuracy_reward,
             say) -> dict[str, dict[str, float]]:
    """Both rewards on the same fresh batches of one kind, `math` in two set-ups, each on batches of its own
    (so that neither sees the other's answers): a new `math` reward per batch (its verdict cache empty;
    the worker processes, their parse caches and the gold cache persist, as between training steps), and
    one reward kept across the batches (verdicts of earlier batches remembered, as in training). Returns the
    figures per set-up: completions/s, speed relative to TRL's, this process's CPU microseconds per completion."""
    import rewardhub

    figures = {}
    setups = {"fresh": "rewardhub math, new each batch", "kept": "rewardhub math, kept across"}
    for offset, (setup, title) in enumerate(setups.items()):
        trl_times, times, cpu, trl_agree, agree, misses = [], [], [], [], [], []
        for seed in range(args.repeat):  # a new batch each time
            batch_seed = 100 * offset + seed
            prompts, completions, golds, expected = make_batch(batch_seed, args.prompts, args.generations, kinds)
            start = time.perf_counter()
            trl_values = accuracy_reward(_chat(completions), golds)
            trl_times.append(time.perf_counter() - start)
            reward = rewardhub.get("math") if setup == "fresh" else math_reward
            start, cpu_start = time.perf_counter(), time.process_time()
            values = reward(prompts=prompts, completions=_chat(completions), solution=golds)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - cpu_start)
            trl_agree.append(agreement(trl_values, expected))
            agree.append(agreement(values, expected))
            misses += [(c[-70:], g, v) for c, g, v, e in zip(completions, golds, values, expected, strict=True)
                       if (v == 1.0) != e]  # fmt: skip
        n = args.prompts * args.generations
        trl_seconds, seconds = statistics.median(trl_times), statistics.median(times)
        cpu_us = statistics.median(cpu) / n * 1e6
        say(f"{name:<15}{'trl accuracy_reward':<34}{n / trl_seconds:>14.0f}{statistics.mean(trl_agree):>11.1%}")
        say(f"{name:<15}{title:<34}{n / seconds:>14.0f}{statistics.mean(agree):>11.1%}"
            f"{trl_seconds / seconds:>7.1f}x{cpu_us:>8.0f}")  # fmt: skip
        for completion, gold, value in misses[:5]:
            say(f"  math disagrees: gold {gold!r}, got {value}, completion ...{completion!r}")
        figures[f"{name} {setup}"] = {"completions/s": n / seconds, "vs TRL": trl_seconds / seconds, "cpu_us": cpu_us}
    return figures


if __name__ == "__main__":
    main()
