"""False positives and misses of `math`, `exact_match` and Math-Verify on held-out-style cases, per class.

The cases come from ``bench/math_cases.py`` (a seeded generator: wrong values by small perturbations,
distractors beside the gold, the gold re-spelled; see its docstring), never from ``tests/``. Per class: the
cases, how many are wrong answers, and per verifier the false positives (1.0 on a wrong answer: the worst
outcome, it pays the policy) and the misses (no 1.0 on a right answer).

How each verifier is called: `math` and `exact_match` with default params (the completion as written, the
gold in ``solution``); Math-Verify with its defaults (``parse`` of the completion, ``parse`` of the gold in
``\\boxed{}``, ``verify``).

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.math_heldout [--per-class 200] [--seed 20]
[--show N] [--class NAME]
"""

from __future__ import annotations

import argparse
import logging
import time
from collections import defaultdict

from bench.math_cases import CLASSES, Case, generate

VERIFIERS = ("math", "exact_match", "math_verify")


def run_rewardhub(name: str, cases: list[Case]) -> list[float | None]:
    import rewardhub

    reward = rewardhub.get(name)
    texts = [case.completion for case in cases]
    return reward(prompts=["q"] * len(texts), completions=texts, solution=[case.gold for case in cases])


def run_math_verify(cases: list[Case]) -> list[float | None]:
    from math_verify import parse, verify

    values: list[float | None] = []
    for case in cases:
        try:
            gold = parse("\\boxed{" + case.gold + "}")
            values.append(float(verify(gold, parse(case.completion))))
        except Exception:  # a crash is no verdict
            values.append(None)
    return values


RUNNERS = {
    "math": lambda cases: run_rewardhub("math", cases),
    "exact_match": lambda cases: run_rewardhub("exact_match", cases),
    "math_verify": run_math_verify,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-class", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--class", dest="classes", action="append", choices=list(CLASSES), help="only these (repeatable)")
    parser.add_argument("--verifier", action="append", choices=VERIFIERS, help="only these verifiers (repeatable)")
    parser.add_argument("--show", type=int, default=0, help="print up to N false positives and misses of `math` per class")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    verifiers = args.verifier or list(VERIFIERS)
    cases = list(generate(args.per_class, args.seed, tuple(args.classes or CLASSES)))
    values, seconds = {}, {}
    for verifier in verifiers:
        start = time.perf_counter()
        values[verifier] = RUNNERS[verifier](cases)
        seconds[verifier] = time.perf_counter() - start

    by_class: dict[str, list[int]] = defaultdict(list)
    for i, case in enumerate(cases):
        by_class[case.kind].append(i)
    print(f"{'class':<22}{'cases':>6}{'wrong':>6}" + "".join(f"{v:>20}" for v in verifiers))
    print(" " * 34 + "".join(f"{'FP':>10}{'missed':>10}" for _ in verifiers))
    totals = {v: [0, 0] for v in verifiers}
    for kind, rows in by_class.items():
        wrong = sum(not cases[i].truth for i in rows)
        line = f"{kind:<22}{len(rows):>6}{wrong:>6}"
        for v in verifiers:
            fp = sum(values[v][i] == 1.0 and not cases[i].truth for i in rows)
            missed = sum(values[v][i] != 1.0 and cases[i].truth for i in rows)
            totals[v][0] += fp
            totals[v][1] += missed
            line += f"{fp:>10}{missed:>10}"
        print(line)
        if args.show and "math" in values:
            shown = [i for i in rows if (values["math"][i] == 1.0) != cases[i].truth][: args.show]
            for i in shown:
                print(f"    math {values['math'][i]} truth {cases[i].truth}: gold {cases[i].gold!r} "
                      f"completion ...{cases[i].completion[-110:]!r}")  # fmt: skip
    wrong = sum(not case.truth for case in cases)
    print(f"{'total':<22}{len(cases):>6}{wrong:>6}" + "".join(f"{totals[v][0]:>10}{totals[v][1]:>10}" for v in verifiers))
    print("agreement: " + ", ".join(
        f"{v} {1 - sum(totals[v]) / len(cases):.1%}" for v in verifiers) + " | seconds: " + ", ".join(
        f"{v} {s:.1f}" for v, s in seconds.items()))  # fmt: skip


if __name__ == "__main__":
    main()
