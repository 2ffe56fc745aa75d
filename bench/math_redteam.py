"""False positives and misses of `math`, `exact_match`, `majority_vote` and Math-Verify on red-team cases.

The cases come from ``bench/math_redteam_cases.py`` (a seeded hostile policy: hedges, several boxes, answers
taken back, distractors, cut-off ends, the gold inside a larger value, shape changes, LaTeX tricks,
lookalike digits, towers and near misses, and faithful re-spellings), never from ``tests/``. Per family:
the cases, how many are wrong, and per verifier the false positives (1.0 on a wrong answer: it pays the
policy) and the misses (no 1.0 on a right answer).

How each verifier is called: `math` and `exact_match` with default params; `majority_vote` on a group of
two, a plain boxed gold beside the case's completion (the case is paid 1.0 exactly when its answer is
clustered with the gold: its false positives are the canonicalisation's); Math-Verify 0.9.0 with its
defaults (``parse`` of the completion, ``parse`` of the gold in ``\\boxed{}``, ``verify``).

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.math_redteam [--per-family 300] [--seed 2020]
[--show N] [--family NAME] [--verifier NAME]
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections import defaultdict

from bench.math_redteam_cases import FAMILIES, Case, generate

VERIFIERS = ("math", "exact_match", "majority_vote", "math_verify")


def run_reward(name: str, cases: list[Case]) -> list[float | None]:
    import rewardhub

    reward = rewardhub.get(name)
    return reward(prompts=["q"] * len(cases), completions=[c.completion for c in cases], solution=[c.gold for c in cases])


def run_majority_vote(cases: list[Case]) -> list[float | None]:
    import rewardhub

    reward = rewardhub.get("majority_vote", group_size=2)
    prompts, completions = [], []
    for i, case in enumerate(cases):
        prompts += [f"p{i}", f"p{i}"]
        completions += [f"The answer is $\\boxed{{{case.gold}}}$.", case.completion]
    return reward(prompts=prompts, completions=completions)[1::2]


def run_math_verify(cases: list[Case]) -> list[float | None]:
    from math_verify import parse, verify

    values: list[float | None] = []
    for case in cases:
        try:
            values.append(float(verify(parse("\\boxed{" + case.gold + "}"), parse(case.completion))))
        except Exception:  # a crash is no verdict
            values.append(None)
    return values


RUNNERS = {
    "math": lambda cases: run_reward("math", cases),
    "exact_match": lambda cases: run_reward("exact_match", cases),
    "majority_vote": run_majority_vote,
    "math_verify": run_math_verify,
}


def tally(cases: list[Case], values: list[float | None]) -> dict[str, tuple[int, int]]:
    """Per family: (false positives, misses)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case, value in zip(cases, values, strict=True):
        out[case.family][0] += value == 1.0 and not case.truth
        out[case.family][1] += value != 1.0 and case.truth
    return {family: (fp, missed) for family, (fp, missed) in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-family", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2020)
    parser.add_argument("--family", action="append", choices=list(FAMILIES), help="only these (repeatable)")
    parser.add_argument("--verifier", action="append", choices=VERIFIERS, help="only these (repeatable)")
    parser.add_argument("--show", type=int, default=0, help="print up to N false positives and misses per family")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    verifiers = args.verifier or list(VERIFIERS)
    cases = list(generate(args.per_family, args.seed, tuple(args.family or FAMILIES)))
    print(f"{len(cases)} cases, seed {args.seed}, load average {os.getloadavg()[0]:.1f}")
    values, seconds = {}, {}
    for verifier in verifiers:
        start = time.perf_counter()
        values[verifier] = RUNNERS[verifier](cases)
        seconds[verifier] = time.perf_counter() - start
    tallies = {verifier: tally(cases, values[verifier]) for verifier in verifiers}
    families = list(dict.fromkeys(case.family for case in cases))
    print(f"{'family':<16}{'cases':>6}{'wrong':>6}" + "".join(f"{v:>18}" for v in verifiers))
    print(" " * 28 + "".join(f"{'FP':>9}{'missed':>9}" for _ in verifiers))
    totals = {verifier: [0, 0] for verifier in verifiers}
    for family in families:
        rows = [case for case in cases if case.family == family]
        line = f"{family:<16}{len(rows):>6}{sum(not case.truth for case in rows):>6}"
        for verifier in verifiers:
            fp, missed = tallies[verifier].get(family, (0, 0))
            totals[verifier][0] += fp
            totals[verifier][1] += missed
            line += f"{fp:>9}{missed:>9}"
        print(line)
    wrong = sum(not case.truth for case in cases)
    print(f"{'total':<16}{len(cases):>6}{wrong:>6}" + "".join(f"{fp:>9}{missed:>9}" for fp, missed in totals.values()))
    print("seconds: " + ", ".join(f"{v} {s:.1f}" for v, s in seconds.items()))
    if args.show:
        for verifier in [v for v in verifiers if v != "math_verify"]:
            for family in families:
                shown = [(case, value) for case, value in zip(cases, values[verifier], strict=True)
                         if case.family == family and (value == 1.0) != case.truth][: args.show]  # fmt: skip
                for case, value in shown:
                    print(f"  {verifier} {family} {value} truth={case.truth} gold={case.gold!r}: ...{case.completion[-140:]!r}")


if __name__ == "__main__":
    main()
