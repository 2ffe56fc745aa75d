"""Agreement and false positives of `math`, `exact_match`, Math-Verify and TRL's `accuracy_reward` on the
public regression corpus (tests/math_corpus/: other graders' own test suites and real model completions).

Per suite: how often each verifier's verdict (1.0 = correct) agrees with the expected verdict, and how
many false positives it gives (1.0 on a wrong answer: the worst outcome, it pays the policy for it).
The expected verdict is the suite's own, except on rows marked ``disputed`` (see tests/math_corpus/README.md).

How each verifier is called:
- `math`, `exact_match`: rewardhub's rewards with default params; the model text as the completion.
- Math-Verify: its defaults (LaTeX + expression extraction); gold boxed (``\\boxed{gold}`` unless it holds a
  box), and on answer-pair suites the answer boxed too; a completion is parsed as written.
- TRL `accuracy_reward` (``trl.rewards``): the gold as written; on answer-pair suites the answer boxed,
  since it only reads LaTeX-delimited answers.

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.math_agreement [--suite NAME] [--show N]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "math_corpus"
VERIFIERS = ("math", "exact_match", "math_verify", "trl")


@dataclass(frozen=True)
class Case:
    gold: str
    answer: str
    truth: bool  # the verdict scored against: the suite's, or ours on a disputed row
    expected: bool  # the suite's own verdict
    disputed: bool
    where: str


@dataclass(frozen=True)
class Suite:
    name: str
    kind: str  # "answers" (both sides are final answers) or "completions"
    cases: list[Case]


def load_suites(directory: Path = CORPUS) -> list[Suite]:
    suites = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text())
        cases = [
            Case(row["gold"], row["answer"], row.get("verdict", row["expected"]), row["expected"], "disputed" in row,
                 row.get("case", f"{data['suite']}[{i}]"))
            for i, row in enumerate(data["cases"])
        ]  # fmt: skip
        suites.append(Suite(data["suite"], data["kind"], cases))
    return suites


def boxed(text: str) -> str:
    return text if "\\boxed" in text else "\\boxed{" + text + "}"


def run_rewardhub(name: str, suite: Suite, **params) -> list[float | None]:
    import rewardhub

    reward = rewardhub.get(name, **params)
    texts = [case.answer for case in suite.cases]
    return reward(prompts=["q"] * len(texts), completions=texts, solution=[case.gold for case in suite.cases])


def run_math_verify(suite: Suite) -> list[float | None]:
    from math_verify import parse, verify

    values: list[float | None] = []
    for case in suite.cases:
        try:
            gold = parse(boxed(case.gold))
            answer = parse(boxed(case.answer) if suite.kind == "answers" else case.answer)
            values.append(float(verify(gold, answer)))
        except Exception:  # a crash is no verdict
            values.append(None)
    return values


def run_trl(suite: Suite) -> list[float | None]:
    from trl.rewards import accuracy_reward

    texts = [boxed(c.answer) if suite.kind == "answers" else c.answer for c in suite.cases]
    return accuracy_reward([[{"role": "assistant", "content": t}] for t in texts], [c.gold for c in suite.cases])


RUNNERS = {
    "math": lambda suite: run_rewardhub("math", suite),
    "exact_match": lambda suite: run_rewardhub("exact_match", suite),
    "math_verify": run_math_verify,
    "trl": run_trl,
}


@dataclass(frozen=True)
class Tally:
    agreement: float
    false_positives: int
    misses: list[tuple[Case, float | None]]
    as_written: float  # agreement with the suite's own verdicts, disputed rows included as its authors meant them


def tally(suite: Suite, values: list[float | None]) -> Tally:
    misses = [(case, value) for case, value in zip(suite.cases, values, strict=True) if (value == 1.0) != case.truth]
    false_positives = sum(1 for case, value in misses if value == 1.0)
    as_written = sum((value == 1.0) == case.expected for case, value in zip(suite.cases, values, strict=True))
    return Tally(1 - len(misses) / len(suite.cases), false_positives, misses, as_written / len(suite.cases))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", help="only these suites (repeatable)")
    parser.add_argument("--verifier", action="append", choices=VERIFIERS, help="only these verifiers (repeatable)")
    parser.add_argument("--show", type=int, default=0, help="print up to N disagreements of `math` per suite")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    verifiers = args.verifier or list(VERIFIERS)
    suites = [s for s in load_suites() if not args.suite or s.name in args.suite]

    header = f"{'suite':<18}{'cases':>6}{'disputed':>9}" + "".join(f"{v:>22}" for v in verifiers)
    print(header + "\n" + " " * 33 + "".join(f"{'agree':>14}{'FP':>8}" for _ in verifiers))
    seconds = dict.fromkeys(verifiers, 0.0)
    as_written = []
    for suite in suites:
        results = {}
        for verifier in verifiers:
            start = time.perf_counter()
            results[verifier] = tally(suite, RUNNERS[verifier](suite))
            seconds[verifier] += time.perf_counter() - start
        disputed = sum(case.disputed for case in suite.cases)
        row = f"{suite.name:<18}{len(suite.cases):>6}{disputed:>9}"
        print(row + "".join(f"{results[v].agreement:>14.1%}{results[v].false_positives:>8}" for v in verifiers))
        as_written.append(f"{suite.name:<33}" + "".join(f"{results[v].as_written:>14.1%}{'':>8}" for v in verifiers))
        if "math" in results:
            for case, value in results["math"].misses[: args.show]:
                print(f"    math {value} (expected {case.truth}) {case.where}: gold {case.gold[:60]!r} "
                      f"answer ...{case.answer[-120:]!r}")  # fmt: skip
    print("agreement with the suites' own verdicts (disputed rows as their authors expected):")
    print("\n".join(as_written))
    print("seconds: " + ", ".join(f"{v} {s:.1f}" for v, s in seconds.items()))


if __name__ == "__main__":
    main()
