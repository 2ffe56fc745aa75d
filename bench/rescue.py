"""The rescue cascade (issue 37): rescued share and added cost on a generated recall suite.

The recall suite is right answers that ``math`` scores 0, in forms a rule does not read but a verifier
model accepts (Roman numerals, degrees for a multiple of pi, the number in binary, "a dozen" / "a quarter" /
"2.5 thousand"), each after a few lines of working, with
the gold in ``solution`` (a third state it without a box or "the answer is": ``math`` marks those 0s final
and they are never sent); ``wrong`` is the same forms with a wrong value (the gold off by one). Generated
from a seed, never from a table. Batches of ``--batch`` rows mix them into answers ``math`` passes (a
share ``--miss-share`` of misses, half of them right), scored by ``math`` alone and by ``math`` with
``rescue: {name: judge, params: {mode: verify}}`` against the scripted OpenAI-compatible server of
tests/judge_server.py in this process, answering after ``--latency`` seconds as two verifiers would:

- oracle: grades A exactly the right answers (an ideal verifier: what the guards let through);
- yes-man: grades A everything (the damage a credulous verifier can do: bounded by what is sent).

Reported: the share of the suite's right answers rescued, wrong answers rescued (false rescues), rows
sent per batch (requests), prompt tokens sent (the server's count, ~characters / 4), and the batch time
with the rescue over the time without (same process, same batches, each scored once untimed first so that
``math`` is warm in both, then timed in alternating order; medians over batches).
Run from the repository root: OMP_NUM_THREADS=1 python -m bench.rescue [--batches 8] [--batch 64]
[--miss-share 0.125] [--latency 0.2] [--max-share 0.25] [--seed 37]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "REWARDHUB_BENCH_JUDGE_KEY"
UNMARKED_SHARE = 1 / 3  # suite rows stating the answer without a box or "the answer is"
ROMAN = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
         (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


@dataclass(frozen=True)
class Row:
    form: str
    gold: str
    completion: str
    right: bool


def roman(n: int) -> str:
    out = ""
    for value, letters in ROMAN:
        while n >= value:
            out, n = out + letters, n - value
    return out


def _forms(rng: random.Random, right: bool) -> dict[str, Callable[[], tuple[str, str]]]:
    """Each form: () -> (gold, boxed answer); the answer is the gold's value when ``right``, else off by one."""
    off = 0 if right else 1

    def roman_form():
        n = rng.randint(11, 399)
        return str(n), roman(n + off)

    def degrees():
        k = rng.choice([2, 3, 4, 6, 12])
        return f"\\frac{{\\pi}}{{{k}}}", f"{180 // k + off}^\\circ"

    def binary():
        n = rng.randint(5, 200)
        return str(n), f"{bin(n + off)[2:]}_2"

    def words():
        word, value = rng.choice([("a dozen", 12), ("a quarter", 0.25), ("a score", 20), ("a gross", 144)])
        return (str(value) if right else str(value + 1)), f"\\text{{{word}}}"

    def thousands():
        n = rng.randint(11, 99)
        return str(n * 100), f"{n / 10 + off:g} \\text{{ thousand}}"

    return {"roman": roman_form, "degrees": degrees, "binary": binary, "words": words, "thousands": thousands}


def suite(rng: random.Random, n: int, right: bool) -> list[Row]:
    """``n`` rows in the forms above (right answers, or wrong ones), with a few lines of working first."""
    rows = []
    for _ in range(n):
        form, make = rng.choice(sorted(_forms(rng, right).items()))
        gold, answer = make()
        working = rng.choice(["Let me work through it step by step.", "We set up the equation and simplify.",
                              "Counting carefully gives the result below."])
        if rng.random() < UNMARKED_SHARE:  # no box, no "the answer is": math guesses, and its 0 is final
            rows.append(Row(f"{form} (unmarked)", gold, f"{working}\nThat makes ${answer}$ in the end.", right))
        else:
            rows.append(Row(form, gold, f"{working}\nSo the final answer is $\\boxed{{{answer}}}$.", right))
    return rows


def batches(seed: int, count: int, size: int, miss_share: float) -> list[list[Row]]:
    """Batches of passing answers with ``miss_share`` of the rows from the suite (half right, half wrong)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        misses = max(2, round(size * miss_share))
        rows = suite(rng, misses // 2, True) + suite(rng, misses - misses // 2, False)
        for _ in range(size - misses):
            n = rng.randint(2, 999)
            rows.append(Row("passed", str(n), f"Adding up gives {n}.\nSo the answer is $\\boxed{{{n}}}$.", True))
        rng.shuffle(rows)
        out.append(rows)
    return out


def run(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from judge_server import JudgeServer

    import rewardhub

    data = batches(args.seed, args.batches, args.batch, args.miss_share)
    truth = {(row.completion, row.gold): row.right for batch in data for row in batch}

    def oracle(body):
        text = body["messages"][-1]["content"]
        candidate = text.split("[Candidate's answer]\n", 1)[1].split("\n[End of candidate's answer]", 1)[0]
        reference = text.split("[Standard answer]\n", 1)[1].split("\n\n[Candidate's answer]", 1)[0]
        return "\\boxed{A}" if truth.get((candidate, reference)) else "\\boxed{B}"

    os.environ[KEY_ENV] = "bench"
    with JudgeServer(latency=args.latency) as server:
        params = {"mode": "verify", "base_url": server.base_url, "model": "verifier", "api_key_env": KEY_ENV,
                  "max_tokens": 16}
        plain = rewardhub.load([{"name": "math"}])
        rescued = rewardhub.load([{"name": "math", "rescue": {"name": "judge", "params": params,
                                                              "max_share": args.max_share}}])
        print(f"recall suite: {args.batches} batches of {args.batch} rows, {args.miss_share:g} of them from the suite "
              f"(half right, half wrong), verifier latency {args.latency:g} s, max_share {args.max_share:g}\n")
        rule_misses = 0
        for verifier, answer in (("oracle", oracle), ("yes-man", lambda body: "\\boxed{A}")):
            server.answer = answer
            server.reset()
            for batch in data:  # warm: math's workers and caches, the verifier's connection; timed below warm
                for reward_set in (plain, rescued):
                    reward_set.evaluate(["q"] * len(batch), [r.completion for r in batch], solution=[r.gold for r in batch])
            server.reset()
            times: dict[str, list[float]] = {"rule": [], "rescue": []}
            counts = dict.fromkeys(("right", "right_plain", "right_rescued", "wrong", "wrong_plain", "wrong_rescued",
                                    "sent"), 0)
            for index, batch in enumerate(data):
                prompts = ["Answer the question."] * len(batch)
                completions = [row.completion for row in batch]
                golds = [row.gold for row in batch]
                results = {}
                order = [("rule", plain), ("rescue", rescued)]
                for name, reward_set in order if index % 2 == 0 else order[::-1]:
                    start = time.perf_counter()
                    results[name] = reward_set.evaluate(prompts, completions, solution=golds)["math"]
                    times[name].append(time.perf_counter() - start)
                counts["sent"] += results["rescue"].rescue_sent
                for row, before, after in zip(batch, results["rule"].scores, results["rescue"].values, strict=True):
                    if row.form == "passed" or before.value != 0.0:  # the suite: what math scores 0
                        continue
                    key = "right" if row.right else "wrong"
                    counts[key] += 1
                    counts[f"{key}_plain"] += not before.final
                    rule_misses += verifier == "oracle" and row.right
                    counts[f"{key}_rescued"] += after == 1.0
            tokens = sum(len(b["messages"][-1]["content"]) for b in server.bodies) // 4
            ratio = statistics.median(r / p for r, p in zip(times["rescue"], times["rule"], strict=True))
            added = statistics.median(r - p for r, p in zip(times["rescue"], times["rule"], strict=True))
            print(f"{verifier}: right answers rescued {counts['right_rescued']}/{counts['right']} "
                  f"(of them plain 0s: {counts['right_plain']}) "
                  f"({counts['right_rescued'] / max(counts['right'], 1):.0%}), wrong answers rescued "
                  f"{counts['wrong_rescued']}/{counts['wrong']}; sent {counts['sent'] / len(data):.1f} rows per batch "
                  f"({counts['sent'] / (len(data) * args.batch):.1%} of rows), ~{tokens / len(data):.0f} prompt tokens "
                  f"per batch; batch time with rescue / without: {ratio:.2f}x, +{added * 1000:.0f} ms per batch "
                  f"(median {statistics.median(times['rule']) * 1000:.0f} ms -> "
                  f"{statistics.median(times['rescue']) * 1000:.0f} ms)")
        right = sum(row.right and row.form != "passed" for batch in data for row in batch)
        print(f"\nright answers of the suite that math scored 0: {rule_misses} of {right}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--miss-share", type=float, default=0.125)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-share", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=37)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
