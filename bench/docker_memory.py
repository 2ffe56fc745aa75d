"""Docker backend: what the runner's memory baseline (issue 35) costs per run, against the earlier fixed limit.

Two one-container backends on the same engine, rounds interleaved: ``baseline`` (the runner reports
the container's memory baseline after each run and the limit is baseline + the run's ``memory_mb``)
and ``loose`` (the same backend with a tmpfs over ``/sys/fs/cgroup``: no counters, so the earlier
fixed limit ``memory_mb + disk_mb + 64 MB``, which is what every run got before). Workloads:
``same`` (every run ``memory_mb=256``: the limit is set once) and ``alternating`` (128 and 256 in
turn: a ``docker update`` before every run in both). Reports the median runs/s of each and the
median of the per-round ratios, and the largest allocation each lets through under ``memory_mb=256``.
Run: python -m bench.docker_memory --docker-url unix:///path/docker.sock --docker-image IMAGE [--n 150] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from rewardhub.sandbox import MemoryLimitWarning, Program
from rewardhub.sandbox.docker_backend import DockerBackend

__all__ = ["largest_held", "main", "throughput"]

HOLD = "x = b'\\x01' * ({} * 1024 * 1024)\nprint('held', len(x) >> 20)"
SMALL = "import json\nprint(json.dumps(sorted({}[::-1])))"


def throughput(backend: DockerBackend, memory: list[int], n: int) -> float:
    """Runs per second of ``n`` small programs, their ``memory_mb`` taken in turn from ``memory``."""
    programs = [Program(SMALL.format(list(range(i % 50))), memory_mb=memory[i % len(memory)]) for i in range(n)]
    start = time.perf_counter()
    results = backend.run_many(programs)
    elapsed = time.perf_counter() - start
    assert all(r.ok for r in results), [r.reason or r.error for r in results if not r.ok][:3]
    return n / elapsed


def largest_held(backend: DockerBackend, memory_mb: int, start: int, stop: int, step: int = 2) -> int:
    """The largest one-object allocation (MB, on a ``step`` grid) that passes under ``memory_mb``."""
    held = 0
    for size in range(start, stop, step):
        if not backend.run(Program(HOLD.format(size), memory_mb=memory_mb)).ok:
            break
        held = size
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docker-url", required=True)
    parser.add_argument("--docker-image", default="python:3.11-slim")
    parser.add_argument("--n", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    backends = {name: DockerBackend(image=args.docker_image, base_url=args.docker_url, workers=1)
                for name in ("baseline", "loose")}
    backends["loose"].container_options["tmpfs"]["/sys/fs/cgroup"] = "size=1m"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MemoryLimitWarning)
            for backend in backends.values():
                backend.run(Program("pass"))  # container and runner up, outside the measure
            for name, backend in backends.items():
                print(f"{name}: {backend.memory_limit}; under memory_mb=256 the largest allocation held: "
                      f"{largest_held(backend, 256, 240, 400)} MB")
            for label, memory in (("same", [256]), ("alternating", [128, 256])):
                rates: dict[str, list[float]] = {name: [] for name in backends}
                for _ in range(args.rounds):
                    for name, backend in backends.items():
                        rates[name].append(throughput(backend, memory, args.n))
                ratios = [b / loose for b, loose in zip(rates["baseline"], rates["loose"], strict=True)]
                print(f"{label}: baseline {statistics.median(rates['baseline']):.1f} runs/s, loose "
                      f"{statistics.median(rates['loose']):.1f} runs/s, ratio {statistics.median(ratios):.2f} "
                      f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")
    finally:
        for backend in backends.values():
            backend.close()


if __name__ == "__main__":
    main()
