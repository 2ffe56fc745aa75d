"""`math` under concurrent requests with one runaway answer per 8 rows: what the runaways cost the others.

Server-shaped load: ``--callers`` threads (a reward server's request threads) each score ``--batches``
batches of 8 rows through one shared `math` reward with a batch deadline (``--deadline``, as
`rewardhub serve --timeout`). Rows are expressions that need a worker (``\\boxed{n(x+1)}`` against
``nx+n``), half right, half wrong. Scored twice in one process after a warm-up: ordinary rows only (the
baseline), then the same batches with their first row replaced by a power tower
(``\\boxed{9^{9^{9^{9}}}}``: parses at once, never evaluates, its worker is killed at the deadline).
Printed: ordinary rows scored per second in each run, their ratio, and the ordinary rows left unscored.

Run from the repository root: OMP_NUM_THREADS=1 python -m bench.math_runaways [--callers 4] [--batches 2] [--timeout 5]
"""

from __future__ import annotations

import argparse
import threading
import time

TOWER = r"\boxed{9^{9^{9^{9}}}}"


def batch(tag: int, runaway: bool) -> tuple[list[str], list[str]]:
    """Eight rows; with ``runaway`` the first is a power tower."""
    texts = [rf"\boxed{{{10 * tag + i + 2}(x+1)}}" for i in range(8)]
    golds = [f"{10 * tag + i + 2}x+{10 * tag + i + 2 + i % 2}" for i in range(8)]
    if runaway:
        texts[0], golds[0] = TOWER, "5"
    return texts, golds


def run(reward, callers: int, batches: int, runaway: bool, offset: int) -> tuple[float, int, int]:
    """Seconds for every caller's batches, ordinary rows scored, ordinary rows left unscored."""
    counts = {"scored": 0, "unscored": 0}
    lock = threading.Lock()

    def caller(c: int) -> None:
        for b in range(batches):
            texts, golds = batch(offset + c * batches + b, runaway)
            result = reward.evaluate(["q"] * 8, texts, solution=golds)
            ordinary = result.outcomes[1:] if runaway else result.outcomes
            with lock:
                counts["scored"] += ordinary.count("ok")
                counts["unscored"] += len(ordinary) - ordinary.count("ok")

    threads = [threading.Thread(target=caller, args=(c,)) for c in range(callers)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start, counts["scored"], counts["unscored"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callers", type=int, default=4)
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0, help="math's timeout per answer")
    parser.add_argument("--deadline", type=float, default=60.0, help="the batch deadline (serve --timeout)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    import rewardhub

    math = rewardhub.get("math", timeout=args.timeout, workers=args.workers)
    math.batch_timeout = args.deadline
    run(math, 1, 1, False, offset=10_000)  # workers started and warm
    clean = run(math, args.callers, args.batches, False, offset=0)
    dirty = run(math, args.callers, args.batches, True, offset=1_000)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"math, {args.callers} callers x {args.batches} batches of 8 rows, {args.workers} workers, "
          f"timeout {args.timeout:g} s, batch deadline {args.deadline:g} s (load average {load})")
    for name, (seconds, scored, unscored) in (("ordinary only", clean), ("1 runaway per 8", dirty)):
        print(f"  {name:16s} {seconds:6.2f} s  {scored / seconds:7.1f} ordinary rows/s  unscored {unscored}")
    print(f"  runaway run / baseline: {dirty[1] / dirty[0] / (clean[1] / clean[0]):.2f}x the ordinary rows/s")


if __name__ == "__main__":
    main()
