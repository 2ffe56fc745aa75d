"""Throughput of ``instruction_following`` and ``similarity`` against plain-Python baselines, same run.

- instruction_following vs IFEval's reference code (lm-evaluation-harness ``tasks/ifeval``, installed
  into the test cache as the tests do), strict and loose, on IFEval's published rows with the
  responses of tests/ifeval_table.py plus generated ones; and one pathological response (50k blank
  lines, a bullet count) where the reference's regex backtracks quadratically.
- similarity vs calling each library directly in a plain loop (sacrebleu, rouge-score, rapidfuzz),
  and token F1 vs a plain SQuAD-script implementation.

Run from the repository root: python -m bench.catalog [--responses 600] [--pairs 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import re
import string
import sys
import time
from collections import Counter
from pathlib import Path

import rewardhub

TESTS = Path(__file__).resolve().parents[1] / "tests"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def paired(ours, theirs, repeat: int) -> tuple[float, float]:
    """Best times of two functions run alternately (a busy machine slows both alike)."""
    a, b = [], []
    for _ in range(repeat):
        a.append(best(ours, 1))
        b.append(best(theirs, 1))
    return min(a), min(b)


def ifeval_workload(n: int) -> list[tuple[str, list[str], list[dict]]]:
    from ifeval_table import IFEVAL_ROWS, RESPONSES
    from test_instruction_following import INSTRUCTION_KWARGS, generated_response, reference_is_random

    rows = []
    for key, response in RESPONSES:
        ids, kwargs = IFEVAL_ROWS[key]
        kept = [(i, k) for i, k in zip(ids, kwargs, strict=True) if not reference_is_random(i, k)]
        rows.append((response, [i for i, _ in kept], [k for _, k in kept]))
    rng = random.Random(0)
    while len(rows) < n:
        ids = rng.sample(sorted(INSTRUCTION_KWARGS), 3)
        rows.append((generated_response(rng), ids, [INSTRUCTION_KWARGS[i](rng) for i in ids]))
    return rows[:n]


def bench_instructions(n: int, repeat: int) -> None:
    sys.path.insert(0, str(TESTS))  # the reference harness and the response tables live with the tests
    from ifeval_reference import reference

    utils = reference()
    rows = ifeval_workload(n)
    examples = [utils.InputExample(key=0, instruction_id_list=ids, prompt="", kwargs=kwargs) for _, ids, kwargs in rows]
    texts = [text for text, _, _ in rows]
    columns = {"instruction_id_list": [ids for _, ids, _ in rows], "kwargs": [kwargs for _, _, kwargs in rows]}
    instructions = sum(len(ids) for _, ids, _ in rows)
    print(f"instruction_following: {len(rows)} responses, {instructions} instructions")
    from rewardhub.rewards.instructions import text as measure

    def fresh(reward):  # new texts each time, as in training: nothing left in the per-text caches
        measure.sentences.cache_clear()
        measure.detect_language.cache_clear()
        return reward.evaluate([""] * len(texts), texts, **columns)

    for mode in ("strict", "loose"):
        check = getattr(utils, f"test_instruction_following_{mode}")
        reward = rewardhub.get("instruction_following", mode=mode)
        fresh(reward)  # warm: the Punkt model and langdetect's profiles load once per process
        ours, theirs = paired(lambda r=reward: fresh(r),
                              lambda c=check: [c(e, t) for e, t in zip(examples, texts, strict=True)], repeat)
        print(f"  {mode:6s} rewardhub {len(texts) / ours:8.0f} responses/s   reference {len(texts) / theirs:8.0f}/s   "
              f"ratio {theirs / ours:5.2f}x")
    pathological = "\n" * 50_000 + "* a bullet"
    example = utils.InputExample(key=0, instruction_id_list=["detectable_format:number_bullet_lists"], prompt="",
                                 kwargs=[{"num_bullets": 1}])
    reward = rewardhub.get("instruction_following")
    ours = best(lambda: reward.evaluate([""], [pathological], instruction_id_list=[example.instruction_id_list],
                                        kwargs=[example.kwargs]), 1)
    theirs = best(lambda: utils.test_instruction_following_strict(example, pathological), 1)
    print(f"  pathological (50k blank lines, bullets): rewardhub {ours * 1000:.1f} ms   reference {theirs * 1000:.0f} ms")


_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(s: str) -> str:
    """SQuAD's ``normalize_answer``, as its script writes it."""
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s.lower() if ch not in exclude)
    return " ".join(_ARTICLES.sub(" ", s).split())


def squad_f1(prediction: str, truth: str) -> float:
    """The SQuAD script's F1, written out as a user would (the plain baseline)."""
    p, t = normalize(prediction).split(), normalize(truth).split()
    common = sum((Counter(p) & Counter(t)).values())
    if not p or not t or not common:
        return float(p == t)
    precision, recall = common / len(p), common / len(t)
    return 2 * precision * recall / (precision + recall)


def bench_similarity(n: int, repeat: int) -> None:
    from rapidfuzz import fuzz
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu.metrics import BLEU, CHRF

    rng = random.Random(1)
    words = "the a cat dog sat ran on over mat hill quick slow brown red door near by".split()
    refs = [" ".join(rng.choices(words, k=rng.randint(8, 30))) for _ in range(n)]
    hyps = [" ".join(w if rng.random() < 0.7 else rng.choice(words) for w in r.split()) for r in refs]
    bleu, chrf, rouge = BLEU(effective_order=True), CHRF(), RougeScorer(["rougeL"])
    baselines = {
        "bleu": lambda: [bleu.sentence_score(h, [r]).score / 100 for h, r in zip(hyps, refs, strict=True)],
        "chrf": lambda: [chrf.sentence_score(h, [r]).score / 100 for h, r in zip(hyps, refs, strict=True)],
        "rougeL": lambda: [rouge.score(r, h)["rougeL"].fmeasure for h, r in zip(hyps, refs, strict=True)],
        "fuzzy": lambda: [fuzz.ratio(normalize(h), normalize(r)) / 100 for h, r in zip(hyps, refs, strict=True)],
        "token_f1": lambda: [squad_f1(h, r) for h, r in zip(hyps, refs, strict=True)],
    }
    print(f"similarity: {n} pairs (8-30 words)")
    for metric, baseline in baselines.items():
        reward = rewardhub.get("similarity", metric=metric)
        reward.evaluate([""] * n, hyps, solution=refs)
        ours, theirs = paired(lambda r=reward: r.evaluate([""] * n, hyps, solution=refs), baseline, repeat)
        print(f"  {metric:8s} rewardhub {n / ours:8.0f} pairs/s   plain loop {n / theirs:8.0f}/s   ratio {theirs / ours:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--responses", type=int, default=600)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bench_instructions(args.responses, args.repeat)
    bench_similarity(args.pairs, args.repeat)


if __name__ == "__main__":
    main()
