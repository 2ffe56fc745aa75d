"""LLM judge throughput: rewardhub's async judge vs the usual sequential loop, same server, same run.

A local OpenAI-compatible server (tests/judge_server.py, in its own process like a real endpoint)
answers every request after a fixed latency. The baseline is what a hand-written judge reward
does: one synchronous ``openai.OpenAI`` call per completion, one after another, ``float()`` of the
answer. rewardhub's judge scores the same completions at ``--concurrency`` (no cache, every
completion distinct). Goal: >= 20x at concurrency 32.
Run: python -m bench.judge [--n 256] [--latency 0.1] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import openai

import rewardhub

SERVER = Path(__file__).resolve().parent.parent / "tests" / "judge_server.py"
KEY_ENV = "REWARDHUB_BENCH_JUDGE_KEY"


def sequential_judge(base_url: str, prompts: list[str], completions: list[str]) -> list[float]:
    """The baseline: one blocking request per completion."""
    client = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=0)
    scores = []
    for prompt, completion in zip(prompts, completions, strict=True):
        response = client.chat.completions.create(
            model="judge",
            messages=[{"role": "user", "content": f"Rate 0-10.\nQuestion: {prompt}\nAnswer: {completion}"}],
            temperature=0.0,
            max_tokens=256,
        )
        scores.append(float(response.choices[0].message.content) / 10)
    client.close()
    return scores


def server_stats(base_url: str) -> dict[str, int]:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/stats") as response:
        return json.load(response)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    prompts = [f"question {i}" for i in range(args.n)]
    completions = [f"answer {i} [[{i % 11}]]" for i in range(args.n)]
    expected = [(i % 11) / 10 for i in range(args.n)]
    os.environ[KEY_ENV] = "bench"
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--latency", str(args.latency)], stdout=subprocess.PIPE, text=True
    )
    try:
        base_url = server.stdout.readline().strip()
        judge = rewardhub.get("judge", base_url=base_url, model="judge", api_key_env=KEY_ENV, concurrency=args.concurrency)
        judge.evaluate(["warm-up"], ["[[5]]"])  # client set-up, as in a training run's first step

        start = time.perf_counter()
        values = judge.evaluate(prompts, completions).values
        judge_seconds = time.perf_counter() - start
        assert values == expected, "judge scores differ from the scripted answers"
        in_flight = server_stats(base_url)["max_in_flight"]
        judge.close()

        start = time.perf_counter()
        baseline = sequential_judge(base_url, prompts, completions)
        loop_seconds = time.perf_counter() - start
        assert baseline == expected, "baseline scores differ from the scripted answers"
    finally:
        server.terminate()
        server.wait(10)

    print(f"{args.n} completions, {args.latency * 1000:.0f} ms latency per request")
    print(f"sequential openai.OpenAI loop : {loop_seconds:8.2f} s")
    print(f"rewardhub judge (conc. {args.concurrency:>3}) : {judge_seconds:8.2f} s  (server saw {in_flight} in flight)")
    print(f"speed-up                      : {loop_seconds / judge_seconds:8.1f}x  (goal >= 20x)")


if __name__ == "__main__":
    main()
