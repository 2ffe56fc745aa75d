"""Parquet output: rows/s and peak memory of the streamed writer against the in-memory one it replaced.

Each writer runs in its own process on the same generated scored rows (a prompt, a ~2 KB completion,
a solution, the reward columns), so peak RSS is that writer's alone. The baseline is the previous
code: every row made JSON-safe into one list, ``pa.Table.from_pylist``, ``pq.write_table``.
Run from the repository root: python -m bench.output [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def scored_rows(count: int) -> Iterator[dict[str, Any]]:
    for i in range(count):
        yield {"prompt": f"Question {i // 8}: what is {i} + {i}? " * 3, "completion": f"step {i} " * 250,
               "solution": str(2 * i), "rewards": {"math": float(i % 2), "format": 1.0}, "reward": float(i % 2) + 1.0,
               "reasons": {"math": "equal" if i % 2 else "not equal", "format": ""},
               "outcomes": {"math": "ok", "format": "ok"}, "seconds": {"math": 0.001, "format": 0.0001}}


def in_memory(rows: Iterator[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rewardhub._files.jsonl import jsonable

    pq.write_table(pa.Table.from_pylist([jsonable(r) for r in rows]), path)


def streamed(rows: Iterator[dict[str, Any]], path: Path) -> None:
    from rewardhub._files.tables import write_table

    write_table(rows, path, "parquet")


def child(writer: str, count: int, path: Path) -> None:
    """Run one writer, print its seconds and peak RSS (MB above what the imports took) as JSON."""
    import pyarrow.parquet  # noqa: F401  (imported before the baseline RSS is read)

    import rewardhub._files.tables  # noqa: F401

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    {"in_memory": in_memory, "streamed": streamed}[writer](scored_rows(count), path)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_mb": (peak - before) / 1024, "bytes": path.stat().st_size}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--child", choices=["in_memory", "streamed"])
    parser.add_argument("--path")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, Path(args.path))
        return
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for writer in ("in_memory", "streamed"):
            path = Path(folder) / f"{writer}.parquet"
            out = subprocess.run([sys.executable, "-m", "bench.output", "--child", writer, "--rows", str(args.rows),
                                  "--path", str(path)], capture_output=True, text=True, check=True)
            results[writer] = json.loads(out.stdout)
    load = os.getloadavg()
    print(f"{args.rows} scored rows to Parquet (load averages {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    for writer, r in results.items():
        print(f"  {writer:9}  {args.rows / r['seconds']:9.0f} rows/s  peak +{r['peak_mb']:7.1f} MB  "
              f"file {r['bytes'] / 1e6:.1f} MB")
    base, new = results["in_memory"], results["streamed"]
    print(f"  streamed / in-memory: speed x{base['seconds'] / new['seconds']:.2f}, "
          f"peak memory x{new['peak_mb'] / max(base['peak_mb'], 1e-9):.3f}")


if __name__ == "__main__":
    main()
