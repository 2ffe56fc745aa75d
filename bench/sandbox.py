"""Code execution throughput: rewardhub's isolated local sandbox vs the classic unsafe executor, same run.

The baseline is written in the style of the HumanEval executor most code rewards reuse: per
program a ``multiprocessing.Manager`` for the result, a forked ``multiprocessing.Process`` that
``exec``s solution + tests in a temp dir with output swallowed and a SIGALRM time limit, a
``join`` with a backstop and ``kill``; programs spread over a thread pool of ``--workers``. It
isolates nothing. The sandbox runs the same programs through ``rewardhub.sandbox.run_many`` with
all isolation on (namespaces, own uid, rlimits, fresh work dir, deadline kills the whole tree),
on a warm pool of ``--workers`` zygotes (its one-time start is reported separately).
Two mixes: programs that finish (passing solutions, wrong answers, exceptions), then the same plus
``--loops`` infinite loops, which both executors must wait out until the timeout.
Goal: >= 3x the baseline's throughput on 2 cores.
Run: python -m bench.sandbox [--n 300] [--loops 6] [--timeout 1.0] [--workers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import random
import signal
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from rewardhub import sandbox

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


# ----- rewardhub's sandbox ---------------------------------------------------------------------------
def run_sandbox(backend, programs: list[str], timeout: float) -> list[bool]:
    results = backend.run_many([sandbox.Program(p, timeout=timeout) for p in programs])
    return [r.ok for r in results]


def timed(run, programs: list[str]) -> tuple[float, list[bool]]:
    start = time.perf_counter()
    verdicts = run(programs)
    return time.perf_counter() - start, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="programs that finish (pass or fail)")
    parser.add_argument("--loops", type=int, default=6, help="programs that never end (killed at the timeout)")
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    multiprocessing.set_start_method("fork")
    finishing, looping = make_programs(args.n, args.loops)

    start = time.perf_counter()
    backend = sandbox.get_backend("local", workers=args.workers)
    backend.run_many([sandbox.Program("pass")] * args.workers)
    print(f"sandbox pool start (once): {time.perf_counter() - start:.2f} s; workers: {args.workers}, "
          f"timeout {args.timeout:g} s")
    executors = {
        "unsafe baseline (multiprocessing, child per program)": lambda ps: run_baseline(ps, args.timeout, args.workers),
        "rewardhub sandbox (isolated, warm zygotes)": lambda ps: run_sandbox(backend, ps, args.timeout),
    }
    for label, programs in (("finishing programs", finishing), ("with the looping ones", finishing + looping)):
        (base_s, base_v), (box_s, box_v) = (timed(run, programs) for run in executors.values())
        agree = sum(a == b for a, b in zip(base_v, box_v, strict=True))
        print(f"\n{label}: {len(programs)} ({sum(box_v)} pass), verdicts agree {agree}/{len(programs)}")
        for name, seconds in zip(executors, (base_s, box_s), strict=True):
            print(f"  {name:<55} {seconds:6.2f} s  {len(programs) / seconds:7.1f} programs/s")
        print(f"  ratio: {base_s / box_s:.2f}x")
    sandbox.close_backends()


if __name__ == "__main__":
    main()
