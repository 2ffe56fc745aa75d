"""When ``rewardhub score --ray`` pays, and what its driver holds: the two commands, run one after the other.

For each size (rows of a CPU-bound set: repetition_penalty over long completions + majority_vote per
group, JSONL in and out): ``rewardhub score`` (one process) against ``rewardhub score --ray --actors 2``
(a local Ray started by the command: its start-up is part of the figure), wall seconds end to end,
and each command's own peak resident memory (``ru_maxrss`` of that process alone, from ``wait4``: the
driver, not Ray's processes). The ratio is the one-process time over the ``--ray`` time (above 1: Ray
pays). The load average is printed before and after (the machine is shared).

Run: python -m bench.ray_command [--sizes 1000 10000] [--words 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.scale import CPU_SET, cpu_rows, load_note


def run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of ``command``'s own process."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {proc.stderr.read().decode()[-2000:]}")
    proc.stderr.close()
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--words", type=int, default=2000, help="words per completion")
    args = parser.parse_args()
    load_note("before")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "cpu.json"
        config.write_text(json.dumps(CPU_SET))
        print(f"{'rows':>7} {'input MB':>9} | {'score s':>8} {'RSS MB':>7} | {'--ray s':>8} {'RSS MB':>7} | ratio")
        for rows in args.sizes:
            source = Path(folder) / f"rows-{rows}.jsonl"
            with open(source, "w") as handle:
                for row in cpu_rows(rows, args.words):
                    handle.write(json.dumps(row) + "\n")
            base = [sys.executable, "-m", "rewardhub.cli", "score", "--config", str(config), str(source), "-q",
                    "-o", str(Path(folder) / "out.jsonl")]
            one, one_rss = run(base, env)
            ray, ray_rss = run([*base, "--ray", "--actors", "2"], env)
            print(f"{rows:>7} {source.stat().st_size / 2**20:>9.1f} | {one:>8.1f} {one_rss:>7.0f} | {ray:>8.1f} "
                  f"{ray_rss:>7.0f} | {one / ray:.2f}x", flush=True)
    load_note("after")


if __name__ == "__main__":
    main()
