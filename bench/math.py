"""`math` vs TRL's `accuracy_reward` on a GRPO-shaped batch: throughput and agreement with known verdicts.

The batch (64 prompts x 8 completions by default) is generated with a fixed seed: realistic model
output (reasoning with intermediate numbers and LaTeX, then the answer in one of many formats:
\\boxed, "the final answer is", GSM8K's ####, <answer> tags, plain last line), correct answers in
equivalent spellings, wrong answers, and repeated completions. Each completion's expected verdict is
known by construction. Both rewards score the same batch in the same process, after a warm-up on a
different batch (imports, worker start-up); the cold first call of `math` is printed too.

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.math [--prompts 64] [--generations 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A gold answer with ways to write it correctly and ways to get it wrong."""

    gold: str
    right: list[str]
    wrong: list[str]


def make_problem(rng: random.Random) -> Problem:
    kind = rng.choice(["integer", "integer", "integer", "big", "fraction", "decimal", "radical", "pi", "interval",
                       "point", "expression", "percent", "equation", "set", "angle", "money"])  # fmt: skip
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
            [rf"\frac{{{p}}}{{{q}}}", rf"\dfrac{{{p}}}{{{q}}}", f"{p}/{q}", rf"\frac{{{2 * p}}}{{{2 * q}}}"],
            [rf"\frac{{{q}}}{{{p}}}", rf"\frac{{{p + 1}}}{{{q}}}"],
        )
    if kind == "decimal":
        p, q = rng.choice([(1, 2), (3, 4), (1, 4), (2, 5), (7, 8)])
        return Problem(
            rf"\frac{{{p}}}{{{q}}}",
            [f"{p / q:g}", rf"\frac{{{p}}}{{{q}}}"],
            [f"{p / q + 0.1:g}", f"{q / p:g}"],
        )
    if kind == "radical":
        return Problem(
            rf"{a}\sqrt{{{b}}}" if b not in (4, 9) else f"{a * int(b**0.5)}",
            [rf"{a}\sqrt{{{b}}}", rf"\sqrt{{{a * a * b}}}"],
            [rf"\sqrt{{{b}}}", rf"{a}\sqrt{{{b + 1}}}"]
            if b not in (3, 8)
            else [rf"\sqrt{{{b}}}", rf"{a + 1}\sqrt{{{b}}}"],
        )
    if kind == "pi":
        return Problem(
            rf"{a}\pi", [rf"{a}\pi", rf"{a} \pi", rf"\pi \cdot {a}"], [rf"{a + 1}\pi", f"{a * 3.14:g}"]
        )
    if kind == "interval":
        return Problem(
            f"({-a}, {b}]", [f"({-a}, {b}]", rf"\left({-a},{b}\right]"], [f"[{-a}, {b}]", f"({-a}, {b})"]
        )
    if kind == "point":
        return Problem(f"({a}, {-b})", [f"({a}, {-b})", f"({a},{-b})"], [f"({-b}, {a})", f"({a}, {b})"])
    if kind == "expression":
        return Problem(
            f"{a}x+{a * b}",
            [f"{a}(x+{b})", f"{a}x + {a * b}", f"{a * b} + {a}x"],
            [f"{a}x+{b}", f"{a}(x-{b})"],
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
    seed: int, prompts: int, generations: int
) -> tuple[list[str], list[str], list[str], list[bool]]:
    rng = random.Random(seed)
    rows_prompt, rows_completion, rows_gold, expected = [], [], [], []
    for p in range(prompts):
        problem = make_problem(rng)
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
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    from trl.rewards import accuracy_reward

    import rewardhub

    def chat(completions: list[str]) -> list[list[dict]]:
        return [[{"role": "assistant", "content": c}] for c in completions]

    prompts, completions, golds, _ = make_batch(1000, 8, args.generations)  # warm-up batch
    math_reward = rewardhub.get("math")
    start = time.perf_counter()
    math_reward(prompts=prompts, completions=chat(completions), solution=golds)
    cold = time.perf_counter() - start
    accuracy_reward(chat(completions), golds)

    trl_times, ours_times, trl_agree, ours_agree, misses = [], [], [], [], []
    for seed in range(args.repeat):  # a new batch each time: no cache has seen it
        prompts, completions, golds, expected = make_batch(seed, args.prompts, args.generations)
        start = time.perf_counter()
        trl_values = accuracy_reward(chat(completions), golds)
        trl_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        ours_values = math_reward(prompts=prompts, completions=chat(completions), solution=golds)
        ours_times.append(time.perf_counter() - start)
        trl_agree.append(agreement(trl_values, expected))
        ours_agree.append(agreement(ours_values, expected))
        misses += [(c[-70:], g, v) for c, g, v, e in zip(completions, golds, ours_values, expected, strict=True)
                   if (v == 1.0) != e]  # fmt: skip

    n = args.prompts * args.generations
    trl_seconds, ours_seconds = statistics.median(trl_times), statistics.median(ours_times)
    print(
        f"batch: {args.prompts} prompts x {args.generations} completions = {n}, {args.repeat} batches (median)"
    )
    print(f"{'reward':<24}{'completions/s':>14}{'agreement':>11}")
    print(f"{'trl accuracy_reward':<24}{n / trl_seconds:>14.0f}{statistics.mean(trl_agree):>11.1%}")
    print(f"{'rewardhub math':<24}{n / ours_seconds:>14.0f}{statistics.mean(ours_agree):>11.1%}")
    print(f"throughput ratio (math / accuracy_reward): {trl_seconds / ours_seconds:.1f}x "
          f"with {math_reward.checker.pool.size} worker(s)")  # fmt: skip
    print(f"rewardhub math cold first call (worker start-up, imports): {cold:.2f} s")
    for completion, gold, value in misses[:5]:
        print(f"  math disagrees: gold {gold!r}, got {value}, completion ...{completion!r}")


if __name__ == "__main__":
    main()
