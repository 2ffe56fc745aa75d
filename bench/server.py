"""Reward server throughput: ``rewardhub serve`` vs a bare Starlette endpoint, 32 concurrent clients.

Both servers run as real uvicorn processes on 127.0.0.1 and receive the same OpenRLHF requests
(``--batch`` queries each) from ``--clients`` concurrent httpx clients in this process. The
baseline answers a constant without scoring, so the ratio is what scoring a cheap reward set
(exact_match + format_regex + tag_count) costs on top of the HTTP stack.
Run: python -m bench.server [--requests 3000] [--clients 32] [--batch 8]
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


async def load(url: str, requests: int, clients: int, batch: int) -> tuple[float, list[float]]:
    bodies = [request_body(i, batch) for i in range(requests)]
    latencies: list[float] = []
    queue: asyncio.Queue[dict] = asyncio.Queue()

    async def client(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            body = queue.get_nowait()
            start = time.perf_counter()
            reply = await http.post(url, json=body)
            reply.raise_for_status()
            assert len(reply.json()["rewards"]) == batch
            latencies.append(time.perf_counter() - start)

    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=clients), timeout=120) as http:
        for body in bodies[:clients * 2]:  # warm up: open the connections, first requests
            queue.put_nowait(body)
        await asyncio.gather(*(client(http) for _ in range(clients)))
        latencies.clear()
        for body in bodies:
            queue.put_nowait(body)
        start = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        return time.perf_counter() - start, latencies


def measure(name: str, args: list[str], port: int, cli: argparse.Namespace) -> dict:
    proc = start(args, port)
    try:
        seconds, latencies = asyncio.run(load(f"http://127.0.0.1:{port}/get_reward", cli.requests, cli.clients,
                                              cli.batch))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    latencies.sort()
    result = {
        "name": name, "requests": len(latencies), "seconds": seconds, "rps": len(latencies) / seconds,
        "p50_ms": 1000 * statistics.median(latencies), "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
    }
    print(f"{name:>10}: {result['rps']:7.0f} req/s ({result['rps'] * cli.batch:7.0f} samples/s)  "
          f"p50 {result['p50_ms']:6.1f} ms  p99 {result['p99_ms']:6.1f} ms  ({result['requests']} requests)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--batch", type=int, default=8, help="queries per request")
    cli = parser.parse_args()
    print(f"{cli.requests} OpenRLHF requests x {cli.batch} queries, {cli.clients} concurrent clients, 127.0.0.1")
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "rewards.json"
        config.write_text(json.dumps(CONFIG))
        port = free_port()
        baseline = measure("baseline", [sys.executable, "-c", BASELINE_APP, str(port)], port, cli)
        port = free_port()
        rewardhub_args = [sys.executable, "-m", "rewardhub.cli", "serve", "--config", str(config),
                          "--port", str(port), "--log-level", "warning"]
        served = measure("rewardhub", rewardhub_args, port, cli)
    print(f"rewardhub / baseline throughput: {served['rps'] / baseline['rps']:.2f}x; "
          f"p50 latency {served['p50_ms'] / baseline['p50_ms']:.2f}x, p99 {served['p99_ms'] / baseline['p99_ms']:.2f}x")


if __name__ == "__main__":
    main()
