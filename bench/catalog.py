"""Throughput of ``instruction_following`` and ``similarity`` against plain-Python baselines, same run.

- instruction_following vs IFEval's reference code (lm-evaluation-harness ``tasks/ifeval``, installed
  into the test cache as the tests do), strict and loose, on IFEval's published rows with the
  responses of tests/ifeval_table.py plus generated ones; and one pathological response (50k blank
  lines, a bullet count) where the reference's regex backtracks quadratically.
- similarity vs calling each library directly in a plain loop (sacrebleu, rouge-score, rapidfuzz),
  and token F1 vs a plain SQuAD-script implementation.

- ``--compare DIR``: each family's own speed on fixed workloads (instruction_following with its guard,
  multiple_choice, json_schema, similarity's default and token_f1, and the judge's local work: rendering a
  request with its completion defused and parsing answers), this tree against the reward families of the
  checkout in ``DIR`` (its ``rewards/`` folder, e.g. ``git worktree add DIR main``), loaded in this same
  process beside this tree's (the core is this tree's). Passes alternate, round after round, so a busy
  machine slows both alike; the ratio is of the best passes (issue 33 measured main against its branch so).

Run from the repository root: python -m bench.catalog [--responses 600] [--pairs 2000] [--repeat 3]
                              python -m bench.catalog --compare /path/to/other/checkout [--rows 300] [--rounds 15]
"""

from __future__ import annotations

import argparse
import random
import re
import string
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    sys.path[:0] = [str(TESTS), str(TESTS / "rewards" / "instructions")]  # the tables and generators live there
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


def family_workloads(rewards: Any, n: int) -> dict[str, tuple[Any, list[str], dict[str, list[Any]]]]:
    """(reward, completions, columns) per family of the ``rewards`` package, each ``n`` rows of the forms
    models write."""
    import importlib

    def family(module: str) -> Any:
        return importlib.import_module(f"{rewards.__name__}.{module}")

    rng = random.Random(2)
    choices = ["Mercury", "Jupiter", "Mars", "Venus"]
    forms = ["Answer: {0}", "The answer is ({0}).", "**Answer: {0}) {1}**\n\nOption A is small; option D is hot.",
             "I'd go with {0}.", "\\boxed{{{0}}}", "Let me think. A is Mercury, C is Mars. So the answer is {0}.",
             "{0}", "It is either {0} or C.", "答案是{0}。", "Answer: {0}\n\nWhy not the others:\n- A: no\n- C: no"]
    mc = [rng.choice(forms).format(letter, choices["ABCD".index(letter)]) for letter in rng.choices("ABCD", k=n)]
    doc = '{"name": "Ada", "age": %d, "tags": ["a", "b"], "address": {"city": "Paris", "zip": "75001"}}'
    js_forms = ["{0}", "Here it is:\n```json\n{0}\n```\nAnything else?", "<answer>{0}</answer>", "```json\n{0}\n```"]
    js = [rng.choice(js_forms).format(doc % rng.randint(0, 99)) for _ in range(n)]
    schema = {"type": "object", "required": ["name", "age"],
              "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}}
    words = "the a cat dog sat ran on over mat hill quick slow brown red door near by".split()
    refs = [" ".join(rng.choices(words, k=rng.randint(8, 30))) for _ in range(n)]
    hyps = [" ".join(w if rng.random() < 0.7 else rng.choice(words) for w in r.split()) for r in refs]
    rows = ifeval_workload(n)
    similarity = family("similarity").Similarity
    return {
        "instruction_following": (family("instructions.reward").InstructionFollowing(), [t for t, _, _ in rows],
                                  {"instruction_id_list": [i for _, i, _ in rows], "kwargs": [k for _, _, k in rows]}),
        "multiple_choice": (family("multiple_choice").MultipleChoice(), mc,
                            {"solution": ["B"] * n, "choices": [choices] * n}),
        "json_schema": (family("json_schema").JsonSchema(schema=schema), js, {}),
        "similarity (default)": (similarity(), hyps, {"solution": refs}),
        "similarity token_f1": (similarity(metric="token_f1"), hyps, {"solution": refs}),
    }


def judge_local_work(rewards: Any, n: int) -> Callable[[], None]:
    """Render ``n`` pointwise requests (each completion defused) and parse ``n`` judge answers and winners."""
    import importlib

    from rewardhub import Batch

    parse = importlib.import_module(f"{rewards.__name__}.judge.parse")
    template = importlib.import_module(f"{rewards.__name__}.judge.prompt").JudgeTemplate.load("pointwise")
    read_winner = importlib.import_module(f"{rewards.__name__}.judge.ranking").read_winner
    rng = random.Random(3)
    texts = [" ".join(rng.choices("the answer is 42 so we add 7 and carry the one [note] - list".split(), k=120))
             + "\n\nThe answer is 42." for _ in range(n)]
    batch = Batch.from_rows([{"prompt": f"question {i}", "completion": text} for i, text in enumerate(texts)])
    answers = [rng.choice(["Score: 7", "The response is correct. I'd give it a 8/10.", '{"score": 6}',
                           'It says "Score: 10" but is wrong.\nScore: 2', "**Rating:** [[9]]"]) for _ in range(n)]
    winners = [rng.choice(["Winner: 1", "After comparing, response 2 is better.\nWinner: 2", "Winner: tie"])
               for _ in range(n)]
    scale = parse.ScoreScale()

    def work() -> None:
        for i in range(n):
            template.render(batch.row(i), "solution")
            parse.parse_answer(answers[i], "number", scale)
            read_winner(winners[i])

    return work


def family_passes(rewards: Any, n: int) -> dict[str, Callable[[], Any]]:
    """One pass of each family's workload (warmed once), by name."""
    passes: dict[str, Callable[[], Any]] = {}
    import importlib

    measure = importlib.import_module(f"{rewards.__name__}.instructions.text")

    def fresh() -> None:  # new texts each time, as in training: nothing left in the per-text caches
        measure.sentences.cache_clear()
        measure.detect_language.cache_clear()

    for name, (reward, texts, columns) in family_workloads(rewards, n).items():
        reward.evaluate([""] * len(texts), texts, **columns)  # warm: models, tables, validators
        passes[name] = lambda r=reward, t=texts, c=columns: fresh() or r.evaluate([""] * len(t), t, **c)
    passes["judge (render + parse)"] = judge_local_work(rewards, n)
    passes["judge (render + parse)"]()
    return passes


def other_rewards(checkout: str) -> Any:
    """The ``rewards`` package of another checkout, importable as ``other_rewards`` beside this tree's."""
    import importlib.util

    folder = Path(checkout) / "rewards"
    spec = importlib.util.spec_from_file_location("other_rewards", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    if spec is None or not (folder / "__init__.py").is_file():
        raise SystemExit(f"{checkout} holds no rewards/ package (give the root of a rewardhub checkout)")
    module = importlib.util.module_from_spec(spec)
    sys.modules["other_rewards"] = module
    spec.loader.exec_module(module)
    return module


def compare(checkout: str, n: int, rounds: int) -> None:
    import rewardhub.rewards

    versions = {"this tree": family_passes(rewardhub.rewards, n), "other": family_passes(other_rewards(checkout), n)}
    times: dict[tuple[str, str], list[float]] = {}
    for round_ in range(rounds):
        for name in versions["this tree"]:
            for label, passes in list(versions.items())[:: 1 if round_ % 2 else -1]:  # each goes first in turn
                start = time.perf_counter()
                passes[name]()
                times.setdefault((label, name), []).append(time.perf_counter() - start)
    print(f"families, {n} rows each, best of {rounds} alternating passes (this tree vs {checkout}), one process:")
    for name in versions["this tree"]:
        ours, theirs = min(times[("this tree", name)]), min(times[("other", name)])
        print(f"  {name:24s} this tree {n / ours:8.0f} rows/s   other {n / theirs:8.0f} rows/s   "
              f"speed {theirs / ours:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--responses", type=int, default=600)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", metavar="DIR", help="each family against the rewards/ of the checkout in DIR")
    parser.add_argument("--rows", type=int, default=300, help="rows per family with --compare")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved passes per family with --compare")
    args = parser.parse_args()
    if args.compare:
        compare(args.compare, args.rows, args.rounds)
        return
    bench_instructions(args.responses, args.repeat)
    bench_similarity(args.pairs, args.repeat)


if __name__ == "__main__":
    main()
