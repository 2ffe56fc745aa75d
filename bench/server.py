"""Reward server throughput: ``rewardhub serve`` vs a bare Starlette endpoint, and group assembly.

All servers run as real uvicorn processes on 127.0.0.1 and receive OpenRLHF requests from
``--clients`` concurrent httpx clients in this process.

1. Batched requests (``--batch`` queries each): the baseline answers a constant without scoring,
   so the ratio is what scoring a cheap reward set (exact_match + format_regex + tag_count) costs
   on top of the HTTP stack.
2. One query per request, as OpenRLHF 0.11.2 and verl 0.9.1 send them: the same set served as is,
   vs the set plus ``majority_vote`` with ``--group-size`` (every request waits for the other
   completions of its prompt, which arrive from other clients). The ratio is what group assembly
   and voting cost; the latency includes the wait for the group.
Run: python -m bench.server [--requests 3000] [--clients 32] [--batch 8] [--group-size 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

CONFIG = {
    "rewards": [
        {"name": "exact_match", "alias": "accuracy", "weight": 1.0},
        {"name": "format_regex", "alias": "format", "weight": 0.2, "params": {"preset": "think_answer"}},
        {"name": "tag_count", "alias": "tags", "weight": 0.2},
    ]
}
VOTE = {"name": "majority_vote", "alias": "vote", "weight": 0.5, "params": {"equivalence": "string"}}

BASELINE_APP = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

async def get_reward(request):
    body = await request.json()
    n = len(body["query"])
    return JSONResponse({"rewards": [0.0] * n, "scores": [0.0] * n, "extra_logs": {}})

app = Starlette(routes=[Route("/get_reward", get_reward, methods=["POST"]),
                        Route("/health", lambda r: JSONResponse({"status": "ok"}))])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(args: list[str], port: int) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                return proc
        except httpx.TransportError:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode()) from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def request_body(i: int, batch: int) -> dict:
    prompts = [f"<|im_start|>user\nWhat is {i} + {j}?<|im_end|>\n<|im_start|>assistant\n" for j in range(batch)]
    answers = [f"<think>{i} plus {j}</think><answer>{i + j}</answer>" if j % 2 else f"it is {i + j + 1}"
               for j in range(batch)]
    return {"query": [p + a for p, a in zip(prompts, answers, strict=True)], "prompts": prompts,
            "labels": [str(i + j) for j in range(batch)]}


def sample_body(i: int, group_size: int) -> dict:
    """Request ``i``: one completion, the ``i % group_size``-th of prompt ``i // group_size``."""
    p, k = divmod(i, group_size)
    prompt = f"<|im_start|>user\nWhat is {p} + {p}?<|im_end|>\n<|im_start|>assistant\n"
    answer = f"<think>{p} plus {p}</think><answer>{2 * p + (k % 3 == 0)}</answer>"
    return {"query": [prompt + answer], "prompts": [prompt], "labels": [str(2 * p)]}


async def load(url: str, bodies: list[dict], clients: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    queue: asyncio.Queue[dict] = asyncio.Queue()

    async def client(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            body = queue.get_nowait()
            start = time.perf_counter()
            reply = await http.post(url, json=body)
            reply.raise_for_status()
            assert len(reply.json()["rewards"]) == len(body["query"])
            latencies.append(time.perf_counter() - start)

    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=clients), timeout=120) as http:
        for body in bodies[-clients * 2:]:  # warm up: open the connections, first requests (whole groups)
            queue.put_nowait(body)
        await asyncio.gather(*(client(http) for _ in range(clients)))
        latencies.clear()
        for body in bodies:
            queue.put_nowait(body)
        start = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        return time.perf_counter() - start, latencies


def measure(name: str, args: list[str], port: int, bodies: list[dict], clients: int) -> dict:
    proc = start(args, port)
    try:
        seconds, latencies = asyncio.run(load(f"http://127.0.0.1:{port}/get_reward", bodies, clients))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    latencies.sort()
    per_request = len(bodies[0]["query"])
    result = {
        "name": name, "requests": len(latencies), "seconds": seconds, "rps": len(latencies) / seconds,
        "p50_ms": 1000 * statistics.median(latencies), "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
    }
    print(f"{name:>14}: {result['rps']:7.0f} req/s ({result['rps'] * per_request:7.0f} samples/s)  "
          f"p50 {result['p50_ms']:6.1f} ms  p99 {result['p99_ms']:6.1f} ms  ({result['requests']} requests)")
    return result


def serve_args(config: Path, port: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "rewardhub.cli", "serve", "--config", str(config), "--port", str(port),
            "--log-level", "warning", "--no-access-log", *extra]


def ratios(served: dict, baseline: dict, what: str) -> None:
    print(f"{what}: throughput {served['rps'] / baseline['rps']:.2f}x; "
          f"p50 latency {served['p50_ms'] / baseline['p50_ms']:.2f}x, p99 {served['p99_ms'] / baseline['p99_ms']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--batch", type=int, default=8, help="queries per request")
    parser.add_argument("--group-size", type=int, default=8, help="completions per prompt for group assembly")
    cli = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config, vote_config = Path(tmp) / "rewards.json", Path(tmp) / "vote.json"
        config.write_text(json.dumps(CONFIG))
        vote_config.write_text(json.dumps({"rewards": [*CONFIG["rewards"], VOTE]}))
        batched = [request_body(i, cli.batch) for i in range(cli.requests)]
        print(f"1. {cli.requests} OpenRLHF requests x {cli.batch} queries, {cli.clients} concurrent clients")
        port = free_port()
        baseline = measure("baseline", [sys.executable, "-c", BASELINE_APP, str(port)], port, batched, cli.clients)
        port = free_port()
        served = measure("rewardhub", serve_args(config, port), port, batched, cli.clients)
        ratios(served, baseline, "rewardhub / baseline")
        singles = [sample_body(i, cli.group_size) for i in range(cli.requests - cli.requests % cli.group_size)]
        print(f"2. {len(singles)} one-query requests ({len(singles) // cli.group_size} prompts x {cli.group_size}), "
              f"{cli.clients} concurrent clients")
        port = free_port()
        alone = measure("one by one", serve_args(config, port), port, singles, cli.clients)
        port = free_port()
        grouped = measure("groups of " + str(cli.group_size),
                          serve_args(vote_config, port, "--group-size", str(cli.group_size)), port, singles, cli.clients)
        ratios(grouped, alone, "group assembly + majority_vote / one by one")


if __name__ == "__main__":
    main()
