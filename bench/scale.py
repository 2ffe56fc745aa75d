"""Beyond one machine, measured on this one: Ray Data scoring, the router, the sandbox service.

1. ``ray``: rows/s of ``rewardhub.ray.score_dataset`` with 1 and 2 actors on a 2-CPU local Ray
   (``ray.init(num_cpus=2)``) against ``rewardhub score``'s own loop (``score_file``) in this process,
   on a CPU-bound set (repetition_penalty over long completions + majority_vote per group), and against
   the machine's ceiling (the same scoring in 1 and 2 forked processes, rows in memory, no Ray): rows
   the driver holds, grouped there (what ``score --ray`` does with JSONL), and, with 2 actors, Parquet
   inputs Ray reads itself (a file with each group's rows together, as ``rewardhub score`` writes it:
   no shuffle; 4 blocks with every group spread over them: a hash shuffle). Each Ray run is given end to
   end (actor start-up and grouping included) and steady (first scoring call to the last), with the
   CPU seconds each kind of process used (from /proc); then the cost of the Ray path on a small file:
   ``rewardhub score`` vs ``rewardhub score --ray`` as commands.
2. ``router``: OpenRLHF-style one-sample requests with group assembly (``--group-size``): one
   ``rewardhub serve`` vs ``rewardhub route`` over 3 replicas (throughput, p50/p99), then the same
   with one replica SIGKILLed mid-run while clients retry as OpenRLHF does: answered / lost / wrong.
3. ``sandbox``: programs/s through ``rewardhub sandbox serve``'s ``/run_code`` (and through the
   ``remote`` backend) against the same local sandbox in-process, same worker count.

Every comparison runs both sides in the same run, one after the other, with the same load; the
load average before and after is printed (the machine is shared).
Run: python -m bench.scale [ray|router|sandbox ...] [--rows 1200] [--requests 2400]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from bench.server import free_port, sample_body, serve_args, start

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
CPU_SET = {"rewards": [
    {"name": "repetition_penalty", "alias": "repetition", "params": {"ngram_size": 3}},
    {"name": "majority_vote", "alias": "vote", "weight": 0.5, "params": {"equivalence": "string"}},
]}
ROUTER_SET = {"rewards": [
    {"name": "exact_match", "alias": "accuracy", "weight": 1.0},
    {"name": "format_regex", "alias": "format", "weight": 0.2, "params": {"preset": "think_answer"}},
    {"name": "majority_vote", "alias": "vote", "weight": 0.5, "params": {"equivalence": "string"}},
]}


def load_note(when: str) -> None:
    one, five, _ = os.getloadavg()
    print(f"[load average {when}: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs]")


# 1. Ray Data ------------------------------------------------------------------------------------

def cpu_rows(count: int, words: int, group: int = 8) -> list[dict]:
    rng = random.Random(0)
    return [{"prompt": f"Write about topic {i // group}", "solution": "x",
             "completion": " ".join(rng.choice(WORDS) for _ in range(words)) + f" answer {rng.randint(0, 2)}"}
            for i in range(count)]


def scoring_only(data: list[dict], processes: int) -> float:
    """Seconds to score ``data`` (in memory, no files) in ``processes`` forked processes, whole groups
    each, after each process built its reward set: the CPU ceiling of this machine, no Ray involved."""
    import multiprocessing

    per = -(-len(data) // (8 * 2 * processes)) * 8  # groups of 8, two chunks per process
    chunks = [data[i:i + per] for i in range(0, len(data), per)]
    with multiprocessing.get_context("fork").Pool(processes, initializer=_load_cpu_set) as pool:
        pool.map(_score_chunk, [data[:8]] * processes)
        start_time = time.perf_counter()
        pool.map(_score_chunk, chunks, chunksize=1)
        return time.perf_counter() - start_time


_CPU_SET_LOADED: list = []


def _load_cpu_set() -> None:
    import rewardhub

    _CPU_SET_LOADED.append(rewardhub.load(CPU_SET))


def _score_chunk(chunk: list[dict]) -> int:
    return len(_CPU_SET_LOADED[0].score(chunk))


class ProcessCPU:
    """CPU seconds of every process on the machine while it runs, sampled from /proc every 0.1 s (an
    actor that exits at the end keeps its last sample), summed by kind (Ray's own processes by name)."""

    KINDS = (("scoring actors", "ray::MapWorker"),
             ("Ray Data's actors (stats, autoscaling, locations)", "ray::_StatsActor"),
             ("Ray Data's actors (stats, autoscaling, locations)", "ray::_Autoscaling"),
             ("Ray Data's actors (stats, autoscaling, locations)", "ray::ActorLocationTracker"),
             ("Ray workers (idle, or running tasks: reads, shuffles, key checks)", "ray::"),
             ("raylet", "raylet/raylet"), ("GCS server", "gcs_server"), ("Ray agents and monitors", "/ray/"),
             ("Ray agents and monitors", "ray/_private"), ("Ray agents and monitors", "ray/dashboard"))

    def __init__(self):
        import threading

        self.tick = os.sysconf("SC_CLK_TCK")
        self.first = self._sample()
        self.last = dict(self.first)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _sample(self) -> dict[int, tuple[str, float]]:
        seen = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as stat, open(f"/proc/{pid}/cmdline", "rb") as cmd:
                    fields, name = stat.read().rsplit(")", 1)[1].split(), cmd.read().replace(b"\0", b" ").decode()
            except OSError:
                continue
            seen[int(pid)] = (name, (int(fields[11]) + int(fields[12])) / self.tick)
        return seen

    def _run(self) -> None:
        while not self.stop.wait(0.1):
            self.last.update(self._sample())

    def finish(self) -> dict[str, float]:
        self.stop.set()
        self.thread.join()
        self.last.update(self._sample())
        kinds: Counter[str] = Counter()
        for pid, (name, cpu) in self.last.items():
            used = cpu - self.first.get(pid, (name, 0.0))[1]
            if used <= 0:
                continue
            kind = "the driver (this process)" if pid == os.getpid() else next(
                (k for k, mark in self.KINDS if mark in name), "other processes (not Ray)")
            kinds[kind] += used
        return dict(kinds)


def timed_scorer(log: Path):
    """``RewardScorer`` writing each call's start and end to ``log`` (a class made here is pickled by
    value, so the actors need not import this bench)."""
    from rewardhub.ray import RewardScorer

    class TimedScorer(RewardScorer):
        def __call__(self, table):
            started = time.time()
            scored = super().__call__(table)
            with open(log, "a") as handle:
                handle.write(f"{started} {time.time()} {len(table)} {os.getpid()}\n")
            return scored

    return TimedScorer


def ray_run(label: str, rows: int, baseline: float, make, log: Path) -> dict:
    """One Ray Data scoring of ``rows`` rows: end to end (actor start-up and grouping included) and
    steady (first scoring call's start to the last one's end), with the CPU each kind of process used."""
    log.unlink(missing_ok=True)
    cpu = ProcessCPU()
    start_time = time.perf_counter()
    started_at = time.time()
    count = make().materialize().count()
    seconds = time.perf_counter() - start_time
    used = cpu.finish()
    assert count == rows, (count, rows)
    calls = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    first, last = min(c[0] for c in calls), max(c[1] for c in calls)
    ends: dict[float, float] = {}
    for _start, end, _rows, pid in calls:
        ends[pid] = max(ends.get(pid, 0.0), end)
    tail = last - min(ends.values())
    print(f"Ray Data, {label}: end to end {rows / seconds:6.1f} rows/s ({seconds:.1f} s) = {baseline / seconds:.2f}x "
          f"one process; steady {rows / (last - first):6.1f} rows/s ({last - first:.1f} s from the first scoring call, "
          f"{first - started_at:.1f} s after the start) = {baseline / (last - first):.2f}x; {len(calls)} blocks, "
          f"the last actor finished {tail:.1f} s after the first")
    total = sum(used.values())
    print("    CPU s: " + ", ".join(f"{kind} {value:.2f}" for kind, value in sorted(used.items(), key=lambda kv: -kv[1]))
          + f"; total {total:.2f} in {seconds:.1f} s on {os.cpu_count()} CPUs")
    return {"seconds": seconds, "steady": last - first, "cpu": used}


def bench_ray(rows: int, words: int) -> None:
    import ray

    import rewardhub
    import rewardhub.ray as rray
    from rewardhub._files.score_file import score_file
    from rewardhub._files.tables import write_table

    data = cpu_rows(rows, words)
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "rows.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in data))
        start_time = time.perf_counter()
        score_file(CPU_SET, source, Path(folder) / "out.jsonl")
        baseline = time.perf_counter() - start_time
        print(f"rewardhub score (one process, score_file: JSONL in and out): {rows / baseline:7.1f} rows/s ({baseline:.1f} s)")
        in_memory = rewardhub.load(CPU_SET)
        start_time = time.perf_counter()
        in_memory.score(data[:8])
        list(in_memory.iter_scores(data))
        alone = time.perf_counter() - start_time
        one, two = scoring_only(data, 1), scoring_only(data, 2)
        print(f"scoring only, rows in memory: this process {rows / alone:7.1f} rows/s; 1 forked process "
              f"{rows / one:7.1f}; 2 forked processes {rows / two:7.1f} = {one / two:.2f}x one (the machine's ceiling: "
              f"{baseline / two:.2f}x score_file)")
        os.environ.update({"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"})
        ray_dir = tempfile.mkdtemp(prefix="rh-bench-ray-", dir="/tmp")
        started = time.perf_counter()
        rray.connect(None, num_cpus=2, _temp_dir=ray_dir)
        print(f"ray.init(num_cpus=2): {time.perf_counter() - started:.1f} s (not counted below)")
        import pyarrow as pa

        spread = [pa.Table.from_pylist(data[part::4]) for part in range(4)]  # every group in all 4
        written = Path(folder) / "written.parquet"  # as `rewardhub score -o` writes it: a group's rows together
        write_table(data, written, "parquet")
        log = Path(folder) / "calls.log"
        plain, rray.scoring.RewardScorer = rray.scoring.RewardScorer, timed_scorer(log)  # score_dataset maps this name
        try:
            first = ray_run("first run, 16 rows, 1 actor (starts Ray Data's own actors)", 16, baseline * 16 / rows,
                            lambda: rray.score_dataset(rray.grouped_dataset(data[:16], 2), CPU_SET, grouped=True), log)
            print(f"    (the first Dataset run on a new Ray: {first['seconds']:.1f} s for 16 rows)")
            results = {}
            for label, actors in (("grouped on the driver", 1), ("grouped on the driver", 2),
                                  ("Parquet, groups together", 2), ("4 blocks, groups spread", 2)):
                if label.startswith("grouped"):
                    def make(actors=actors):
                        return rray.score_dataset(rray.grouped_dataset(data, 2 * actors), CPU_SET, concurrency=actors,
                                                  grouped=True)
                else:
                    together = label.endswith("together")

                    def make(actors=actors, together=together):
                        # Ray reads the 4 small spread parts as one block (which holds whole groups): given as
                        # 4 blocks (the parts' tables), every group is in all of them and a shuffle is needed
                        ds = ray.data.read_parquet(str(written)) if together else ray.data.from_arrow(spread)
                        return rray.score_dataset(ds, CPU_SET, concurrency=actors)
                results[label, actors] = ray_run(f"{actors} actor(s), {label}", rows, baseline, make, log)
            for label, path in (("JSONL", source), ("Parquet", written)):  # the command's own path, files in and out
                start_time = time.perf_counter()
                rray.score_file(CPU_SET, path, Path(folder) / "ray-out.jsonl", concurrency=2)
                seconds = time.perf_counter() - start_time
                print(f"score --ray's path (rewardhub.ray.score_file, local Ray, 2 actors), {label} in, JSONL out: "
                      f"{rows / seconds:6.1f} rows/s ({seconds:.1f} s) = {baseline / seconds:.2f}x one process")
            one, two = results["grouped on the driver", 1], results["grouped on the driver", 2]
            print(f"2 actors vs one process: end to end {baseline / two['seconds']:.2f}x, steady "
                  f"{baseline / two['steady']:.2f}x; vs 1 actor: {one['seconds'] / two['seconds']:.2f}x, steady "
                  f"{one['steady'] / two['steady']:.2f}x; Parquet vs grouped on the driver: groups together "
                  f"{two['seconds'] / results['Parquet, groups together', 2]['seconds']:.2f}x, spread (a shuffle) "
                  f"{two['seconds'] / results['4 blocks, groups spread', 2]['seconds']:.2f}x")
        finally:
            rray.scoring.RewardScorer = plain
            ray.shutdown()
        small = Path(folder) / "small.jsonl"
        small.write_text("".join(json.dumps(r) + "\n" for r in data[:64]))
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        for label, extra in (("rewardhub score", []), ("rewardhub score --ray", ["--ray"])):
            config = Path(folder) / "cpu.json"
            config.write_text(json.dumps(CPU_SET))
            start_time = time.perf_counter()
            subprocess.run([sys.executable, "-m", "rewardhub.cli", "score", "--config", str(config), str(small),
                            "-o", str(Path(folder) / "small-out.jsonl"), "-q", *extra], check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"small file (64 rows), {label:>22}: {time.perf_counter() - start_time:6.1f} s end to end")


# 2. Router ---------------------------------------------------------------------------------------

async def one_sample_load(url: str, bodies: list[dict], clients: int, during=None) -> dict:
    """Send ``bodies`` from ``clients`` concurrent clients; a failed request is retried after 0.5 s as
    OpenRLHF's _post_request does (up to 30 times here: a dead replica takes a moment to notice)."""
    latencies: list[float] = []
    answers: dict[int, dict] = {}
    retries = lost = 0
    errors: Counter[str] = Counter()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(bodies)):
        queue.put_nowait(i)

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal retries, lost
        while not queue.empty():
            i = queue.get_nowait()
            start_time = time.perf_counter()
            for _ in range(30):
                try:
                    reply = await http.post(url, json=bodies[i])
                    reply.raise_for_status()
                    answers[i] = reply.json()
                    break
                except httpx.HTTPError as exc:
                    retries += 1
                    status = getattr(getattr(exc, "response", None), "status_code", None)
                    errors[f"{type(exc).__name__}{f' {status}' if status else ''}"] += 1
                    await asyncio.sleep(0.5)
            else:
                lost += 1
            latencies.append(time.perf_counter() - start_time)

    # Idle connections dropped well before uvicorn's 5 s keep-alive closes them (OpenRLHF opens a new
    # session per request; a reused connection the server is closing would fail and be retried).
    limits = httpx.Limits(max_connections=clients, keepalive_expiry=1.0)
    async with httpx.AsyncClient(limits=limits, timeout=200) as http:
        tasks = [asyncio.create_task(client(http)) for _ in range(clients)]
        start_time = time.perf_counter()
        if during is not None:
            await during()
        await asyncio.gather(*tasks)
        seconds = time.perf_counter() - start_time
    latencies.sort()
    return {"seconds": seconds, "rps": len(latencies) / seconds, "answers": answers, "retries": retries,
            "lost": lost, "errors": dict(errors), "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))]}


def vote_check(bodies: list[dict], answers: dict[int, dict], group_size: int) -> str:
    """How many answers carry the vote the whole group gives (sample_body: k % 3 == 0 is the wrong
    answer), how many abstained (a group scored incomplete) and how many carry another vote."""
    wrong = abstained = 0
    for i, answer in answers.items():
        vote = answer["extra_logs"]["vote"][0]
        expected = 0.0 if (i % group_size) % 3 == 0 else 1.0
        abstained += vote != vote  # NaN: the vote abstained
        wrong += vote == vote and vote != expected
    return f"{wrong} wrong votes, {abstained} abstained"


def bench_router(requests: int, clients: int, group_size: int) -> None:
    bodies = [sample_body(i, group_size) for i in range(requests)]
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "set.json"
        config.write_text(json.dumps(ROUTER_SET))
        group = ["--group-size", str(group_size)]

        def replicas(count: int) -> tuple[list[subprocess.Popen], list[str]]:
            ports = [free_port() for _ in range(count)]
            procs = [start(serve_args(config, port, *group), port) for port in ports]
            return procs, [f"http://127.0.0.1:{port}" for port in ports]

        def stop(procs: list[subprocess.Popen]) -> None:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(30)

        def router(urls: list[str]) -> tuple[subprocess.Popen, str]:
            port = free_port()
            proc = start([sys.executable, "-m", "rewardhub.cli", "route", "--port", str(port), "--replicas",
                          ",".join(urls), "--log-level", "warning", "--check-interval", "0.5"], port)
            return proc, f"http://127.0.0.1:{port}"

        procs, urls = replicas(1)
        try:
            one = asyncio.run(one_sample_load(urls[0] + "/get_reward", bodies, clients))
        finally:
            stop(procs)
        procs, urls = replicas(3)
        front, base = router(urls)
        try:
            routed = asyncio.run(one_sample_load(base + "/get_reward", bodies, clients))
        finally:
            stop([front, *procs])
        for name, result in (("one server", one), ("router + 3", routed)):
            print(f"{name:>12}: {result['rps']:7.0f} samples/s  p50 {result['p50_ms']:7.1f} ms  "
                  f"p99 {result['p99_ms']:7.1f} ms  retried {result['retries']} {result['errors'] or ''}, lost {result['lost']}, "
                  f"{vote_check(bodies, result['answers'], group_size)}")
        print(f"router + 3 replicas vs one server: throughput {routed['rps'] / one['rps']:.2f}x, "
              f"p99 {routed['p99_ms'] / one['p99_ms']:.2f}x")

        procs, urls = replicas(3)
        front, base = router(urls)

        async def kill_one():
            await asyncio.sleep(max(1.0, 0.3 * one["seconds"]))
            procs[1].send_signal(signal.SIGKILL)

        try:
            killed = asyncio.run(one_sample_load(base + "/get_reward", bodies, clients, during=kill_one))
        finally:
            stop([front, *procs])
        print(f"replica killed mid-run: {len(killed['answers'])}/{requests} answered, {killed['lost']} lost, "
              f"{killed['retries']} retried requests {killed['errors']}, {vote_check(bodies, killed['answers'], group_size)}, "
              f"{killed['rps']:.0f} samples/s, p99 {killed['p99_ms']:.0f} ms")


# 3. Sandbox service ------------------------------------------------------------------------------

def bench_sandbox(programs: int, workers: int, clients: int) -> None:
    from rewardhub.sandbox import Program
    from rewardhub.sandbox.local import LocalBackend
    from rewardhub.sandbox.remote import RemoteBackend

    batch = [Program(f"print(sum(i * i for i in range({20000 + i})))", timeout=10) for i in range(programs)]
    local = LocalBackend(workers=workers)
    local.run(Program("pass"))
    start_time = time.perf_counter()
    results = local.run_many(batch)
    in_process = time.perf_counter() - start_time
    assert all(r.ok for r in results)
    local.close()

    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "rewardhub.cli", "sandbox", "serve", "--port", str(port),
                             "--backend", "local", "--workers", str(workers), "--log-level", "warning"], env=env,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/ready").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)

        async def through_http() -> float:
            queue: asyncio.Queue[Program] = asyncio.Queue()
            for program in batch:
                queue.put_nowait(program)

            async def client(http: httpx.AsyncClient) -> None:
                while not queue.empty():
                    program = queue.get_nowait()
                    reply = await http.post(url + "/run_code", json={"code": program.code, "language": "python"})
                    assert reply.json()["status"] == "Success"

            async with httpx.AsyncClient(timeout=60) as http:
                start_time = time.perf_counter()
                await asyncio.gather(*(client(http) for _ in range(clients)))
                return time.perf_counter() - start_time

        service = asyncio.run(through_http())
        remote = RemoteBackend(urls=[url], concurrency=clients)
        start_time = time.perf_counter()
        assert all(r.ok for r in remote.run_many(batch))
        via_backend = time.perf_counter() - start_time
        remote.close()
    finally:
        proc.terminate()
        proc.wait(30)
    for name, seconds in (("in-process local sandbox", in_process), ("/run_code (httpx clients)", service),
                          ("remote backend -> /run_code", via_backend)):
        print(f"{name:>28}: {programs / seconds:7.1f} programs/s ({seconds:.2f} s)")
    print(f"service vs in-process: {in_process / service:.2f}x; remote backend vs in-process: "
          f"{in_process / via_backend:.2f}x ({workers} sandbox workers, {clients} concurrent requests)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=["ray", "router", "sandbox"])
    parser.add_argument("--rows", type=int, default=800)
    parser.add_argument("--words", type=int, default=8000, help="words per completion in the Ray rows")
    parser.add_argument("--requests", type=int, default=2400)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--programs", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    load_note("before")
    if "ray" in args.parts:
        bench_ray(args.rows, args.words)
    if "router" in args.parts:
        bench_router(args.requests, args.clients, args.group_size)
    if "sandbox" in args.parts:
        bench_sandbox(args.programs, args.workers, clients=8)
    load_note("after")


if __name__ == "__main__":
    main()
