"""LLM judge throughput: rewardhub's judge vs the raw async SDK and a sequential loop, same server, same run.

A local OpenAI-compatible server (tests/judge_server.py) runs in its own process, like a real
endpoint, and answers every request after ``--latency``; in the second scenario it also answers
every ``--limit-every``-th request 429 with ``Retry-After``. Each client runs in a fresh process
of its own (so "cold" is real: nothing imported, no connection open) and scores ``--batches``
batches of ``--n`` distinct completions (no cache, nothing to deduplicate), sending the
pointwise rubric:

- raw SDK: ``openai.AsyncOpenAI`` + ``asyncio.gather`` under a semaphore of ``--concurrency``, the
  fastest hand-written async judge (SDK retries on, so it survives the 429s too);
- judge: ``rewardhub.get("judge").evaluate(...)`` from synchronous code, and ``await
  judge.aevaluate(...)`` from the caller's own event loop (as TRL calls async rewards);
- sequential: one blocking ``openai.OpenAI`` call per completion (the usual hand-written reward).

cold = the first batch, timed from the client's creation (``import openai`` included for the raw
SDK); after set-up = the first batch, 1 s after the client was made (a trainer loads its model in
between); warm = the median of the later batches. Rounds alternate the clients; the table shows
medians over rounds, and judge/raw is the judge's throughput as a share of the raw SDK's.
``--local DIR``: instead, the judge's local work per request alone (render a pointwise request with its
completion defused, parse a score and a winner: ``bench.catalog``'s workload), this tree against the
``rewards/`` of the checkout in ``DIR`` loaded in the same process, in alternating passes (CPU time, best
pass).
Run: python -m bench.judge [--n 128] [--latency 0.1] [--concurrency 32] [--rounds 3]
     python -m bench.judge --local /path/to/other/checkout --n 300 --rounds 15
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "judge_server.py"
TEMPLATE = ROOT / "rewards" / "judge" / "templates" / "pointwise.txt"
KEY_ENV = "REWARDHUB_BENCH_JUDGE_KEY"
SETUP_S = 1.0


def batch(index: int, n: int) -> tuple[list[str], list[str], list[float]]:
    """``n`` distinct rows (per batch too) scripted to score ``(i % 11) / 10``."""
    completions = [f"batch {index} answer {i} [[{i % 11}]]" for i in range(n)]
    return [f"question {i}" for i in range(n)], completions, [(i % 11) / 10 for i in range(n)]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ----- the clients, each run in its own process ----------------------------------------------------
def run_raw(args: argparse.Namespace, setup: float) -> list[tuple[float, float]]:
    async def main() -> list[tuple[float, float]]:
        start = time.perf_counter()
        import openai

        client = openai.AsyncOpenAI(base_url=args.url, api_key="bench", max_retries=4)
        template = TEMPLATE.read_text(encoding="utf-8")
        semaphore = asyncio.Semaphore(args.concurrency)

        async def one(prompt: str, completion: str) -> float:
            async with semaphore:
                response = await client.chat.completions.create(
                    model="judge", messages=[{"role": "user", "content": template.format(prompt=prompt, completion=completion)}],
                    temperature=0.0, max_tokens=256,
                )  # fmt: skip
                return float(response.choices[0].message.content) / 10

        if setup:
            await asyncio.sleep(setup)
            start = time.perf_counter()
        times = []
        for index in range(args.batches):
            prompts, completions, expected = batch(index, args.n)
            used = cpu_seconds()
            values = await asyncio.gather(*(one(p, c) for p, c in zip(prompts, completions, strict=True)))
            times.append((time.perf_counter() - start, cpu_seconds() - used))
            assert list(values) == expected, "raw SDK scores differ from the scripted answers"
            start = time.perf_counter()
        await client.close()
        return times

    return asyncio.run(main())


def run_judge(args: argparse.Namespace, setup: float, own_loop: bool) -> list[tuple[float, float]]:
    import rewardhub

    start = time.perf_counter()
    judge = rewardhub.get("judge", base_url=args.url, model="judge", api_key_env=KEY_ENV, concurrency=args.concurrency)
    if setup:
        time.sleep(setup)
        start = time.perf_counter()
    times = []
    used = cpu_seconds()

    def timed(values: list[float | None], expected: list[float]) -> None:
        nonlocal start, used
        times.append((time.perf_counter() - start, cpu_seconds() - used))
        assert values == expected, "judge scores differ from the scripted answers"
        start, used = time.perf_counter(), cpu_seconds()

    if own_loop:

        async def main() -> None:
            for index in range(args.batches):
                prompts, completions, expected = batch(index, args.n)
                timed((await judge.aevaluate(prompts, completions)).values, expected)

        asyncio.run(main())
    else:
        for index in range(args.batches):
            prompts, completions, expected = batch(index, args.n)
            timed(judge.evaluate(prompts, completions).values, expected)
    judge.close()
    return times


def run_sequential(args: argparse.Namespace) -> list[tuple[float, float]]:
    import openai

    client = openai.OpenAI(base_url=args.url, api_key="bench", max_retries=4)
    template = TEMPLATE.read_text(encoding="utf-8")
    client.chat.completions.create(model="judge", messages=[{"role": "user", "content": "[[1]]"}])  # connect first
    prompts, completions, expected = batch(0, args.n)
    start, used = time.perf_counter(), cpu_seconds()
    scores = []
    for prompt, completion in zip(prompts, completions, strict=True):
        response = client.chat.completions.create(
            model="judge", messages=[{"role": "user", "content": template.format(prompt=prompt, completion=completion)}],
            temperature=0.0, max_tokens=256,
        )  # fmt: skip
        scores.append(float(response.choices[0].message.content) / 10)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - used
    assert scores == expected, "sequential scores differ from the scripted answers"
    client.close()
    return [(seconds, cpu)]


def worker(args: argparse.Namespace) -> None:
    """One client in this process: print its batch times, CPU per request and the server's peak in flight."""
    reset = urllib.request.Request(args.url.removesuffix("/v1") + "/reset", method="POST")
    urllib.request.urlopen(reset).close()
    setup = SETUP_S if args.setup else 0.0
    if args.worker == "raw":
        times = run_raw(args, setup)
    elif args.worker == "sequential":
        times = run_sequential(args)
    else:
        times = run_judge(args, setup, own_loop=args.worker == "judge-await")
    warm = times[1:] or times  # CPU per request once warm: imports and connections not counted
    cpu_ms = sum(cpu for _, cpu in warm) * 1000 / (args.n * len(warm))
    with urllib.request.urlopen(args.url.removesuffix("/v1") + "/stats") as response:
        in_flight = json.load(response)["max_in_flight"]
    print(json.dumps({"times": [seconds for seconds, _ in times], "cpu_ms": cpu_ms, "in_flight": in_flight}))


# ----- the driver ---------------------------------------------------------------------------------------
def measure(url: str, args: argparse.Namespace, client: str, setup: bool) -> dict:
    command = [sys.executable, "-m", "bench.judge", "--worker", client, "--url", url, "--n", str(args.n),
               "--concurrency", str(args.concurrency), "--batches", str(args.batches)]  # fmt: skip
    if setup:
        command.append("--setup")
    env = {**os.environ, KEY_ENV: "bench", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{client} worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def scenario(args: argparse.Namespace, limit_every: int) -> dict[str, dict[str, float]]:
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--latency", str(args.latency), "--limit-every", str(limit_every),
         "--retry-after", str(args.retry_after)], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    clients = ("raw", "judge", "judge-await")
    runs: dict[str, list[dict]] = {f"{c}{s}": [] for c in clients for s in ("", "+setup")}
    try:
        url = server.stdout.readline().strip()
        for _ in range(args.rounds):
            for client in clients:
                for setup in (False, True):
                    runs[client + ("+setup" if setup else "")].append(measure(url, args, client, setup))
        sequential = measure(url, args, "sequential", False)
    finally:
        server.terminate()
        server.wait(10)
    table = {"sequential": {"warm": sequential["times"][0], "cpu_ms": sequential["cpu_ms"]}}
    for client in clients:
        plain, setup = runs[client], runs[client + "+setup"]
        table[client] = {
            "cold": statistics.median(r["times"][0] for r in plain),
            "setup": statistics.median(r["times"][0] for r in setup),
            "warm": statistics.median(statistics.median(r["times"][1:]) for r in plain + setup),
            "cpu_ms": statistics.median(r["cpu_ms"] for r in plain + setup),
            "in_flight": max(r["in_flight"] for r in plain + setup),
        }
    return table


def report(title: str, table: dict[str, dict[str, float]]) -> None:
    names = {"raw": "raw AsyncOpenAI + gather", "judge": "judge, evaluate()", "judge-await": "judge, await aevaluate()"}
    print(f"\n{title}")
    print(f"  {'client':<26}{'cold':>8}{'after set-up':>14}{'warm':>8}{'in flight':>11}{'CPU/request':>13}")
    for client, name in names.items():
        row = table[client]
        print(f"  {name:<26}{row['cold']:>7.2f}s{row['setup']:>13.2f}s{row['warm']:>7.2f}s"
              f"{row['in_flight']:>11}{row['cpu_ms']:>11.2f}ms")  # fmt: skip
    sequential = table["sequential"]
    print(f"  {'sequential openai.OpenAI':<26}{'':>22}{sequential['warm']:>7.2f}s{1:>11}{sequential['cpu_ms']:>11.2f}ms")
    raw = table["raw"]
    for client in ("judge", "judge-await"):
        shares = "  ".join(f"{phase} {raw[phase] / table[client][phase]:.0%}" for phase in ("cold", "setup", "warm"))
        print(f"  {names[client]} throughput / raw SDK's: {shares}")
    print(f"  judge warm vs sequential loop: {table['sequential']['warm'] / table['judge']['warm']:.1f}x faster")


def local_work(checkout: str, n: int, rounds: int) -> None:
    """Best CPU microseconds per request of the judge's local work, here and in ``checkout``."""
    import rewardhub.rewards
    from bench.catalog import judge_local_work, other_rewards

    works = {"this tree": judge_local_work(rewardhub.rewards, n), "other": judge_local_work(other_rewards(checkout), n)}
    best = dict.fromkeys(works, float("inf"))
    for _ in range(rounds):
        for label, work in works.items():
            start = time.process_time()
            work()
            best[label] = min(best[label], time.process_time() - start)
    ours, theirs = best["this tree"] / n * 1e6, best["other"] / n * 1e6
    print(f"judge local work (render + parse a score + read a winner), {n} requests, best of {rounds} alternating "
          f"passes: this tree {ours:.2f} us, {checkout} {theirs:.2f} us per request; speed {theirs / ours:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=128, help="completions per batch")
    parser.add_argument("--latency", type=float, default=0.1, help="the endpoint's seconds per request")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--batches", type=int, default=4, help="batches per client process (the first is cold)")
    parser.add_argument("--rounds", type=int, default=3, help="client processes per kind (medians are shown)")
    parser.add_argument("--limit-every", type=int, default=8, help="the 429 scenario: every n-th request is a 429")
    parser.add_argument("--retry-after", type=float, default=0.1, help="the 429s' Retry-After, in seconds")
    parser.add_argument("--local", metavar="DIR", help="the judge's local work only, against the checkout in DIR")
    parser.add_argument("--worker", choices=["raw", "judge", "judge-await", "sequential"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.local:
        local_work(args.local, args.n, args.rounds)
        return
    if args.worker:
        worker(args)
        return
    print(f"{args.n} completions per batch, {args.latency * 1000:.0f} ms per request, concurrency {args.concurrency}, "
          f"server in its own process; medians of {args.rounds} rounds")  # fmt: skip
    report("no rate limiting", scenario(args, 0))
    report(f"every {args.limit_every}th request answered 429 (Retry-After {args.retry_after:g} s)",
           scenario(args, args.limit_every))  # fmt: skip


if __name__ == "__main__":
    main()
