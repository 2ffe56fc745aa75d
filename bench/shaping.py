"""CPU cost per completion of the format, shaping, vote and tool rewards (issue 33), for a before/after.

Each family scores the same generated batch: reasoning completions with ``<think>``/``<answer>`` blocks
and a boxed answer in prompt groups of 8, and tool episodes with results and errors. ``--mix realistic``:
80% ASCII, 15% with typographic non-ASCII text (curly quotes, dashes, ``×``, ``≤``, accents, CJK) that the
canonical reading leaves as it is, 5% with text it must rewrite (Cyrillic, a zero-width space, a full-width
digit); ``--mix rewritten``: 20% ASCII, 80% needing the rewrite (the worst case). Times are the
process's CPU seconds (``time.process_time``: other load disturbs them less than the wall clock), the
best of ``--repeat`` rounds, in microseconds per completion. Each round scores the same batch again unless
``--fresh`` draws a new batch per round, as each training step brings new completions (then no text is read
twice, and no memo of canonical texts helps). ``--against PYTHON`` compares two checkouts: this file runs
under that interpreter (its own ``rewardhub``) and under this one, alternately, ``--rounds`` times each (the
alternation spreads the machine's load over both), and the best of each family and the ratios are printed.
Run from the repository root: python -m bench.shaping [--n 4096] [--repeat 5] [--mix realistic|rewritten]
[--fresh] [--against /path/to/base/.venv/bin/python --rounds 3]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time

import rewardhub

FAMILIES = {
    "format_regex": ("format_regex", {}),
    "tag_count": ("tag_count", {}),
    "repetition_penalty": ("repetition_penalty", {}),
    "heuristic": ("heuristic", {"min_len": 20, "max_len": 400, "forbidden_keywords": ["sorry"]}),
    "length_penalty": ("length_penalty", {"max_completion_len": 256, "cache_len": 64}),
    "majority_vote": ("majority_vote", {"equivalence": "string"}),
    "tool_error_penalty": ("tool_error_penalty", {}),
}
WORDS = "we add the two numbers then check the sum again carefully and write the final answer".split()
TYPOGRAPHIC = ["“so”", "—", "3 × 4", "x ≤ 2", "café", "答案是", "π", "°"]
REWRITTEN = ["Сложим числа", "９", "\u200b", "ｔｈｅ", "ѕum"]
MIXES = {"realistic": (0.15, 0.05), "rewritten": (0.0, 0.8)}  # share with typographic text, with rewritten text


def completion(rng: random.Random, mix: str) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
    typographic, rewritten = MIXES[mix]
    draw = rng.random()
    if draw < typographic:
        body += " " + " ".join(rng.choice(TYPOGRAPHIC) for _ in range(3))
    elif draw < typographic + rewritten:
        body += " " + " ".join(rng.choice(REWRITTEN) for _ in range(3))
    return f"<think>{body}</think>\n<answer>\\boxed{{{rng.randint(1, 4)}}}</answer>"


def episode(rng: random.Random) -> list[dict]:
    result = rng.choice([str({"error": ""}), '{"ok": true}', str({"stdout": "", "error": "x"}), "plain text 42",
                         str({"error": "Traceback\n" * rng.randint(1, 400)})])
    call = {"type": "function", "function": {"name": "f", "arguments": json.dumps({"x": 1})}}
    return [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "name": "f", "content": result},
            {"role": "assistant", "content": "done"}]


def measure(name: str, params: dict, prompts: list, batches: list[list], repeat: int) -> float:
    """Best CPU microseconds per completion over ``repeat`` rounds; round ``k`` scores ``batches[k % len]``."""
    reward = rewardhub.get(name, **params)
    reward(prompts[:8], batches[-1][:8])  # warm-up (the last batch: with --fresh, rounds read other texts)
    best = float("inf")
    for k in range(repeat):
        completions = batches[k % len(batches)]
        start = time.process_time()
        reward(prompts, completions)
        best = min(best, time.process_time() - start)
    return best / len(prompts) * 1e6


def run(n: int, repeat: int, mix: str, fresh: bool, only: list[str]) -> dict[str, float]:
    """Each family's CPU microseconds per completion in this process."""
    rng = random.Random(0)
    prompts = [f"question {i // 8}" for i in range(n)]
    texts = [[completion(rng, mix) for _ in range(n)] for _ in range(repeat + 1 if fresh else 1)]
    episodes = [[episode(rng) for _ in range(n)] for _ in range(repeat + 1 if fresh else 1)]
    return {family: round(measure(name, params, prompts, episodes if family == "tool_error_penalty" else texts,
                                  repeat), 2)
            for family, (name, params) in FAMILIES.items() if family in only}


def compare(against: str, rounds: int, args: list[str]) -> dict[str, dict[str, float]]:
    """The best of ``rounds`` alternating runs of this file under ``against`` (base) and this interpreter."""
    best: dict[str, dict[str, float]] = {"base": {}, "this": {}}
    for _ in range(rounds):
        for side, python in (("base", against), ("this", sys.executable)):
            out = subprocess.run([python, "-P", __file__, *args], capture_output=True, text=True, check=True).stdout
            for family, value in json.loads(out).items():
                best[side][family] = min(value, best[side].get(family, value))
    best["ratio"] = {family: round(best["this"][family] / best["base"][family], 2) for family in best["base"]}
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mix", choices=list(MIXES), default="realistic")
    parser.add_argument("--fresh", action="store_true", help="a new batch each round (no text read twice)")
    parser.add_argument("--against", metavar="PYTHON", help="another checkout's interpreter to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs per side with --against")
    parser.add_argument("--only", default=",".join(FAMILIES), help="comma-separated families (default: all)")
    args = parser.parse_args()
    only = args.only.split(",")
    unknown = [family for family in only if family not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {', '.join(unknown)}; known: {', '.join(FAMILIES)}")
    if args.against:
        forwarded = ["--n", str(args.n), "--repeat", str(args.repeat), "--mix", args.mix, "--only", args.only]
        forwarded += ["--fresh"] * args.fresh
        print(json.dumps(compare(args.against, args.rounds, forwarded)))
    else:
        print(json.dumps(run(args.n, args.repeat, args.mix, args.fresh, only)))


if __name__ == "__main__":
    main()
