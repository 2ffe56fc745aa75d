"""CPU cost per completion of the format, shaping, vote and tool rewards (issue 33), for a before/after.

Each family scores the same generated batch: reasoning completions with ``<think>``/``<answer>`` blocks
and a boxed answer in prompt groups of 8, and tool episodes with results and errors. ``--mix realistic``:
80% ASCII, 15% with typographic non-ASCII text (curly quotes, dashes, ``×``, ``≤``, accents, CJK) that the
canonical reading leaves as it is, 5% with text it must rewrite (Cyrillic, a zero-width space, a full-width
digit); ``--mix rewritten``: 20% ASCII, 80% needing the rewrite (the worst case). Times are the
process's CPU seconds (``time.process_time``: other load disturbs them less than the wall clock), the
best of ``--repeat`` rounds, in microseconds per completion. Run it with two checkouts' interpreters
(the same file) to compare them, e.g. ``cd /work/main && .venv/bin/python /path/to/bench/shaping.py``.
Run from the repository root: python -m bench.shaping [--n 4096] [--repeat 5] [--mix realistic|rewritten]
"""

from __future__ import annotations

import argparse
import json
import random
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


def measure(name: str, params: dict, prompts: list, completions: list, repeat: int) -> float:
    reward = rewardhub.get(name, **params)
    reward(prompts[:8], completions[:8])  # warm-up
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        reward(prompts, completions)
        best = min(best, time.process_time() - start)
    return best / len(completions) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mix", choices=list(MIXES), default="realistic")
    args = parser.parse_args()
    rng = random.Random(0)
    prompts = [f"question {i // 8}" for i in range(args.n)]
    texts = [completion(rng, args.mix) for _ in range(args.n)]
    episodes = [episode(rng) for _ in range(args.n)]
    out = {}
    for family, (name, params) in FAMILIES.items():
        completions = episodes if family == "tool_error_penalty" else texts
        out[family] = round(measure(name, params, prompts, completions, args.repeat), 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
