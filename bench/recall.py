"""Both numbers of every answer verifier on the forms the world writes: false positives and false negatives per family.

The cases come from ``bench/forms.py`` (a seeded generator of 25 families in ten languages and several
scripts; each right answer with near misses). Per family and verifier: FP = wrong answers paid 1.0 (goal 0),
FN = right answers not paid, as a share of the family's right answers (goal at most 5%).

How each verifier is called: `math` and `exact_match` with default params (the completion as written, the
gold in ``solution``); Math-Verify with its defaults (``parse`` of the completion, ``parse`` of ``\\boxed{gold}``,
``verify``); TRL's ``accuracy_reward`` (``trl.rewards``) with the completion as a chat message and the gold as
written.

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.recall [--per-family 120] [--seed 34]
[--family NAME] [--verifier NAME] [--show N]
"""

from __future__ import annotations

import argparse
import logging
import time
from collections import defaultdict

from bench.forms import FAMILIES, Form, generate
from bench.math_heldout import run_math_verify, run_rewardhub

__all__ = ["RUNNERS", "VERIFIERS", "main", "tally"]

VERIFIERS = ("math", "exact_match", "math_verify", "trl")


def run_trl(forms: list[Form]) -> list[float | None]:
    from trl.rewards import accuracy_reward

    values: list[float | None] = []
    for form in forms:  # one at a time: a crash on one case is no verdict for the others
        try:
            values += accuracy_reward([[{"role": "assistant", "content": form.completion}]], [form.gold])
        except Exception:
            values.append(None)
    return values


RUNNERS = {
    "math": lambda forms: run_rewardhub("math", forms),
    "exact_match": lambda forms: run_rewardhub("exact_match", forms),
    "math_verify": run_math_verify,
    "trl": run_trl,
}


def tally(forms: list[Form], values: list[float | None]) -> dict[str, tuple[int, int, int, int]]:
    """Per family: (wrong answers, false positives, right answers, false negatives)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for form, value in zip(forms, values, strict=True):
        row = counts[form.family]
        if form.truth:
            row[2] += 1
            row[3] += value != 1.0
        else:
            row[0] += 1
            row[1] += value == 1.0
    return {family: tuple(row) for family, row in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-family", type=int, default=120)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--family", action="append", choices=list(FAMILIES), help="only these (repeatable)")
    parser.add_argument("--verifier", action="append", choices=VERIFIERS, help="only these (repeatable)")
    parser.add_argument("--show", type=int, default=0, help="print up to N misreadings of the first verifier per family")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    verifiers = args.verifier or list(VERIFIERS)
    forms = list(generate(args.per_family, args.seed, tuple(args.family or FAMILIES)))
    tallies, seconds, values = {}, {}, {}
    for verifier in verifiers:
        start = time.perf_counter()
        values[verifier] = RUNNERS[verifier](forms)
        seconds[verifier] = time.perf_counter() - start
        tallies[verifier] = tally(forms, values[verifier])
    families = list(dict.fromkeys(form.family for form in forms))
    print("| family | wrong / right | " + " | ".join(f"{v} FP | {v} FN" for v in verifiers) + " |")
    print("|---|---|" + "---|---|" * len(verifiers))
    totals = {v: [0, 0, 0, 0] for v in verifiers}
    for family in families:
        wrong, _, right, _ = tallies[verifiers[0]][family]
        cells = []
        for v in verifiers:
            row = tallies[v][family]
            totals[v] = [a + b for a, b in zip(totals[v], row, strict=True)]
            cells.append(f"{row[1]} | {row[3] / max(row[2], 1):.0%}")
        print(f"| {family} | {wrong} / {right} | " + " | ".join(cells) + " |")
        if args.show:
            shown = [i for i, form in enumerate(forms) if form.family == family
                     and (values[verifiers[0]][i] == 1.0) != form.truth][: args.show]  # fmt: skip
            for i in shown:
                print(f"    {verifiers[0]} {values[verifiers[0]][i]} truth {forms[i].truth}: gold {forms[i].gold!r} "
                      f"completion ...{forms[i].completion[-120:]!r}")  # fmt: skip
    wrong, right = totals[verifiers[0]][0], totals[verifiers[0]][2]
    print(f"| **total** | {wrong} / {right} | " + " | ".join(
        f"**{totals[v][1]}** | **{totals[v][3] / max(totals[v][2], 1):.1%}**" for v in verifiers) + " |")  # fmt: skip
    print("families at 0 FP and <= 5% FN: " + ", ".join(
        f"{v} {sum(t[1] == 0 and t[3] <= 0.05 * t[2] for t in tallies[v].values())}/{len(families)}" for v in verifiers)
        + " | seconds: " + ", ".join(f"{v} {s:.1f}" for v, s in seconds.items()))  # fmt: skip


if __name__ == "__main__":
    main()
