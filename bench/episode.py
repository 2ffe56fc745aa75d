"""What the trajectory view costs: today's single-turn path against the code before it, same run.

The baseline is rewardhub as it was before the trajectory view (``--baseline``, a git revision),
exported from git and imported in a child process; the current tree runs in another child. Both
score the same rows: single-turn chat completions and 4-turn episodes with a trivial per-sample
reward (``equals``: the wrapper's cost shows) and with ``exact_match``; no reward asks for a
trajectory column, so the view must cost nothing measurable. On the current tree, episodes are
also scored with ``tool_call_match`` (the view is built).
Run from the repository root: python -m bench.episode [--n 4000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "2a6c66e"  # main just before issue 23's trajectory view landed (the same core otherwise)
PACKAGES = {"plugins": "rewardhub", "rewards": "rewardhub/rewards", "sandbox": "rewardhub/sandbox",
            "trainers": "rewardhub/trainers"}


def rows(n: int, kind: str) -> tuple[list, list, dict]:
    prompts = [[{"role": "user", "content": f"What is {i} + {i}? Use the calculator."}] for i in range(n)]
    if kind == "single":
        completions = [[{"role": "assistant", "content": f"It is \\boxed{{{2 * i}}}."}] for i in range(n)]
    else:
        completions = []
        for i in range(n):
            steps = []
            for turn in range(3):
                steps += [{"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": "add", "arguments": {"a": i, "b": turn}}}]},
                          {"role": "tool", "name": "add", "content": str(i + turn)}]
            completions.append([*steps, {"role": "assistant", "content": f"It is \\boxed{{{2 * i}}}."}])
    columns = {"solution": [str(2 * i) for i in range(n)],
               "expected_calls": [[{"name": "add", "arguments": {"a": i, "b": t}} for t in range(3)] for i in range(n)]}
    return prompts, completions, columns


def _equals(text, solution):
    """The cheapest per-sample reward: what the wrapper costs shows instead of the scorer's work."""
    return float(text.endswith(f"{{{solution}}}."))


def worker(n: int, repeat: int, cases: list[str]) -> dict[str, float]:
    """Best microseconds per row of each case (run in a child process)."""
    import rewardhub
    from rewardhub import Batch

    out = {}
    for case in cases:
        kind, reward_name = case.split(":")
        prompts, completions, columns = rows(n, kind)
        if reward_name == "equals":
            reward = rewardhub.sample_reward(name="bench_equals")(_equals)()
        else:
            reward = rewardhub.get(reward_name)
        reward.evaluate_batch(Batch(prompts[:10], completions[:10], {k: v[:10] for k, v in columns.items()}))
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            reward.evaluate_batch(Batch(prompts, completions, dict(columns)))
            best = min(best, time.perf_counter() - start)
        out[case] = best / n * 1e6
    return out


def export(revision: str, into: Path) -> Path:
    """The package tree of ``revision`` (plugins/ as rewardhub/, rewards/ as rewardhub/rewards/, ...)."""
    archive = into / "src.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), revision, *PACKAGES], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "src", filter="data")
    for folder, package in PACKAGES.items():
        shutil.copytree(into / "src" / folder, into / "pkg" / package, dirs_exist_ok=True)
    return into / "pkg"


def run_child(path: Path | None, n: int, repeat: int, cases: list[str]) -> dict[str, float]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), str(ROOT)])
    code = (f"import json, bench.episode as b; print(json.dumps(b.worker({n}, {repeat}, {cases!r})))"
            if path is None else
            f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); import bench.episode as b; "
            f"import rewardhub; assert rewardhub.__file__.startswith({str(path)!r}), rewardhub.__file__; "
            f"print(json.dumps(b.worker({n}, {repeat}, {cases!r})))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                            check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3, help="baseline/current alternations (medians printed)")
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    shared = ["single:equals", "single:exact_match", "episode:equals", "episode:exact_match"]
    ours = [*shared, "episode:tool_call_match"]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        package = export(args.baseline, Path(folder))
        before, after = [], []
        for _ in range(args.rounds):  # alternate, so that load changes hit both sides alike
            before.append(run_child(package, args.n, args.repeat, shared))
            after.append(run_child(None, args.n, args.repeat, ours))

    def median(runs: list[dict[str, float]], case: str) -> float:
        values = sorted(r[case] for r in runs)
        return values[len(values) // 2]

    print(f"{args.n} rows, best of {args.repeat}, median of {args.rounds} rounds; baseline {args.baseline}; "
          f"load average {load_before:.2f} -> {os.getloadavg()[0]:.2f}")
    print(f"{'case':<28}{'baseline µs/row':>16}{'now µs/row':>12}{'ratio':>8}")
    for case in shared:
        old, new = median(before, case), median(after, case)
        print(f"{case:<28}{old:>16.2f}{new:>12.2f}{new / old:>8.2f}")
    view = median(after, "episode:tool_call_match")
    print(f"{'episode:tool_call_match':<28}{'-':>16}{view:>12.2f}"
          f"{view / median(after, 'episode:equals'):>8.2f}  (vs episode:equals now)")


if __name__ == "__main__":
    main()
