"""The hub adapters' costs (issue 38): each against its baseline, measured in one process.

1. ``reasoning_gym``: rewardhub's reward on rows read back from JSONL against reasoning-gym's own
   ``extract_answer`` + ``score_answer`` on the generated entries (same answers), over every task family.
2. The judge's ``ruler`` mode: the characters of one group request with the shared prefix sent once, against
   the same request with every trajectory shown whole (what sending each conversation in full costs).
3. The ``pass_at_k`` entry option: a set with ``pass_at_k: 4`` against the same set without it (GRPO groups of 8).

reasoning-gym must be importable (``tests/hubs.py`` installs it: ``python -c "import sys; sys.path.insert(0,
'tests'); import hubs; print(hubs.reasoning_gym())"`` prints the folder to put on PYTHONPATH).

Run from the repository root: OMP_NUM_THREADS=1 PYTHONPATH=<that folder> python -m bench.hubs [--items 20]
"""

from __future__ import annotations

import argparse
import json
import random
import time

import rewardhub


def reasoning_gym(items: int) -> tuple[float, float, int]:
    import reasoning_gym as gym
    import reasoning_gym.utils

    from rewardhub.trainers.hubs.reasoning_gym import dataset_rows, tasks

    entries, rows, texts = [], [], []
    for number, task in enumerate(tasks()):
        dataset = gym.create_dataset(task, size=items, seed=number)
        generated = list(dataset)
        for entry, row in zip(generated, (json.loads(json.dumps(r, default=str)) for r in dataset_rows(task, items, seed=number)),
                              strict=True):
            text = f"<think>...</think><answer>{entry['answer']}</answer>"
            entries.append((dataset, entry))
            rows.append(row)
            texts.append(text)
    reward = rewardhub.get("reasoning_gym")
    first = list(range(0, len(rows), items))  # warm-up: one row per task builds each task's scorer
    reward.evaluate([rows[i]["prompt"] for i in first], [texts[i] for i in first],
                    answer=[rows[i]["answer"] for i in first], metadata=[rows[i]["metadata"] for i in first])
    def direct() -> float:
        start = time.perf_counter()
        for (dataset, entry), text in zip(entries, texts, strict=True):
            try:
                dataset.score_answer(gym.utils.extract_answer(text), entry)
            except Exception:
                pass
        return time.perf_counter() - start

    def ours() -> float:
        start = time.perf_counter()
        reward.evaluate([r["prompt"] for r in rows], texts, answer=[r["answer"] for r in rows],
                        metadata=[r["metadata"] for r in rows])
        return time.perf_counter() - start

    runs = [(direct(), ours()) for _ in range(3)]  # the first run of each warms the scorers' own caches
    return min(d for d, _ in runs[1:]), min(o for _, o in runs[1:]), len(rows)


def ruler_request(group: int, turns: int) -> tuple[int, int]:
    from rewardhub.rewards.judge.ruler import RulerJudge

    rng = random.Random(38)
    system = {"role": "system", "content": "You are a support agent. " + "Policy text. " * 200}
    task = {"role": "user", "content": "My order 1234 never arrived; please sort it out. " * 5}
    conversations = []
    for g in range(group):
        turns_of = []
        for t in range(turns):
            turns_of += [{"role": "assistant", "content": "", "tool_calls": [{"id": f"c{t}", "type": "function", "function": {
                "name": "lookup", "arguments": json.dumps({"order": 1234, "try": rng.randint(0, 9)})}}]},
                {"role": "tool", "tool_call_id": f"c{t}", "content": "status: lost in transit " * 10}]
        conversations.append([system, task, *turns_of, {"role": "assistant", "content": f"Refund issued ({g})."}])
    judge = RulerJudge.__new__(RulerJudge)  # only the request builder is measured: no endpoint, no client
    from rewardhub.rewards.judge.prompt import JudgeTemplate

    judge.template, judge.standards, judge.tools_column = JudgeTemplate.load("ruler", "completions"), "standards", "tools"
    judge.system_prompt, judge.reference_column = None, "solution"
    batch = rewardhub.Batch.from_rows([{"prompt": c[:2], "completion": c[2:]} for c in conversations])
    shared = judge._ruler_request(batch, list(range(group)), conversations)[-1]["content"]
    whole = [[{"role": "system", "content": "(no shared prefix) " + m["content"]} if m is system else m for m in c]
             for c in conversations]  # a prefix that differs per trajectory defeats the sharing: every one shown whole
    for i, c in enumerate(whole):
        c[0] = {**c[0], "content": f"{i} " + c[0]["content"]}
    unshared = judge._ruler_request(batch, list(range(group)), whole)[-1]["content"]
    return len(shared), len(unshared)


def pass_at_k(prompts: int) -> tuple[float, float]:
    from serving import ensure_registered

    ensure_registered()
    rows = [{"prompt": f"p{p}", "completion": f"answer {random.Random(p * 8 + i).randint(0, 3)}", "solution": "answer 1"}
            for p in range(prompts) for i in range(8)]
    plain = rewardhub.load({"rewards": [{"name": "th_contains"}]})
    transformed = rewardhub.load({"rewards": [{"name": "th_contains", "pass_at_k": 4}]})
    times = []
    for reward_set in (plain, transformed, plain, transformed):
        start = time.perf_counter()
        reward_set.score(rows)
        times.append(time.perf_counter() - start)
    return min(times[0], times[2]), min(times[1], times[3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20, help="reasoning-gym items per task family")
    parser.add_argument("--prompts", type=int, default=500, help="GRPO prompts (x 8) for pass_at_k")
    args = parser.parse_args()
    direct, ours, count = reasoning_gym(args.items)
    print(f"reasoning_gym: {count} rows over every task: reasoning-gym's own scoring {direct:.2f} s, "
          f"rewardhub's reward {ours:.2f} s ({ours / direct:.2f}x)")
    for group, turns in ((4, 2), (8, 4)):
        shared, unshared = ruler_request(group, turns)
        print(f"ruler request, group of {group}, {turns} tool turns each: {shared} chars with the prefix once, "
              f"{unshared} with every trajectory whole ({shared / unshared:.2f}x)")
    plain, transformed = pass_at_k(args.prompts)
    print(f"pass_at_k: {args.prompts * 8} rows: {plain:.3f} s without, {transformed:.3f} s with "
          f"({transformed / plain:.2f}x)")


if __name__ == "__main__":
    main()
