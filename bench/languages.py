"""Java, Go, Rust and JavaScript runs: rewardhub's isolated sandbox vs the compiler and program run directly.

Each language gets ``--sources`` distinct programs (a constant differs, so no cache can share a build
between them), each run on ``--inputs`` stdins: programs/s counts runs (compiles included). The
baseline compiles each source in a fresh temp folder with the same compiler command and runs the build
directly in a subprocess (no namespaces, no uid, no limits), on a thread pool of ``--workers``. The
sandbox runs the same source programs through ``rewardhub.sandbox.run_many`` on a local pool of
``--workers`` warm zygotes, every isolation on; its build cache compiles each source once. In the
``group`` rows the baseline builds every program it runs (as an executor that takes each completion
on its own does: a GRPO group's duplicate completions), the sandbox still once per source. Rounds alternate executors;
medians are reported (the machine is shared and noisy).
Run: python -m bench.languages [--languages java,go,rust,javascript] [--sources 6] [--inputs 4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from rewardhub import sandbox
from rewardhub.sandbox.languages import LANGUAGES, SANDBOX_PATH, toolchain_problem
from rewardhub.sandbox.local import LocalBackend

PROGRAMS = {  # reads n, prints sum of i * K for i < n (K differs per source)
    "java": "import java.util.*;\npublic class Main { public static void main(String[] a) { long n = new Scanner(System.in)"
            ".nextLong(), t = 0; for (long i = 0; i < n; i++) t += i * K; System.out.println(t); } }",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n, t int64\n\tfmt.Scan(&n)\n\tfor i := int64(0); i < n; i++ {\n"
          "\t\tt += i * K\n\t}\n\tfmt.Println(t)\n}\n",
    "rust": "fn main() { let mut s = String::new(); std::io::stdin().read_line(&mut s).unwrap(); "
            "let n: i64 = s.trim().parse().unwrap(); let t: i64 = (0..n).map(|i| i * K).sum(); println!(\"{}\", t); }",
    "javascript": "const n = Number(require('fs').readFileSync(0, 'utf8')); let t = 0; for (let i = 0; i < n; i++) t += i * K;"
                  " console.log(t);",
}


def programs(language: str, sources: int, inputs: int) -> list[tuple[str, str]]:
    """(source, stdin) pairs: each of ``sources`` distinct sources with ``inputs`` stdins."""
    codes = [PROGRAMS[language].replace("K", str(k + 2)) for k in range(sources)]
    return [(code, f"{1000 * (j + 1)}\n") for code in codes for j in range(inputs)]


def run_directly(language: str, pairs: list[tuple[str, str]], workers: int, group: bool) -> int:
    """Compile (once per distinct source, or per program for a group) and run each program in a subprocess."""
    spec = LANGUAGES[language]
    env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", **spec.env}

    def build(code: str) -> str:
        folder = tempfile.mkdtemp(prefix="bench-languages-")
        with open(os.path.join(folder, spec.source_name(code)), "w") as f:
            f.write(code)
        subprocess.run(spec.compile_command(code, 1024), cwd=folder, env=dict(env, HOME=folder), check=True,
                       capture_output=True)
        if spec.package_dir:
            os.replace(shutil.make_archive(os.path.join(folder, "main"), "zip", os.path.join(folder, spec.package_dir)),
                       os.path.join(folder, spec.build))
        return folder

    def run(folder: str, code: str, stdin: str) -> bool:
        command = spec.run_command(code, 512) or ["./" + spec.build]
        done = subprocess.run(command, cwd=folder, env=dict(env, HOME=folder), input=stdin.encode(), capture_output=True)
        return done.returncode == 0

    with ThreadPoolExecutor(workers) as pool:
        if group:  # every program is built, as a per-program executor does
            folders = list(pool.map(lambda pair: build(pair[0]), pairs))
            passed = list(pool.map(lambda args: run(*args), [(f, c, s) for f, (c, s) in zip(folders, pairs, strict=True)]))
        else:
            distinct = list(dict.fromkeys(code for code, _ in pairs))
            built = dict(zip(distinct, pool.map(build, distinct), strict=True))
            folders = list(built.values())
            passed = list(pool.map(lambda pair: run(built[pair[0]], *pair), pairs))
    for folder in set(folders):
        shutil.rmtree(folder, ignore_errors=True)
    return sum(passed)


def run_sandboxed(backend: LocalBackend, language: str, pairs: list[tuple[str, str]]) -> int:
    backend.build_cache.clear()  # every round builds anew, as the baseline does
    results = backend.run_many([sandbox.Program(code, stdin=stdin, language=language, timeout=10) for code, stdin in pairs])
    return sum(result.ok for result in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--languages", default="java,go,rust,javascript")
    parser.add_argument("--sources", type=int, default=6)
    parser.add_argument("--inputs", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    backend = LocalBackend(workers=args.workers)
    backend.run(sandbox.Program("print(1)"))  # the pool's one-time start is not measured
    print("| language | workload | runs | direct (runs/s) | sandbox (runs/s) | sandbox / direct |")
    print("|---|---|---|---|---|---|")
    for language in args.languages.split(","):
        if toolchain_problem(language):
            print(f"| {language} | skipped: {toolchain_problem(language)} | | | | |")
            continue
        for group in (False, True):
            pairs = programs(language, args.sources, args.inputs)
            direct, boxed = [], []
            for _ in range(args.rounds):
                for name in ("direct", "sandbox"):
                    start = time.perf_counter()
                    passed = run_directly(language, pairs, args.workers, group) if name == "direct" else \
                        run_sandboxed(backend, language, pairs)
                    rate = len(pairs) / (time.perf_counter() - start)
                    assert passed == len(pairs), f"{name} {language}: {passed}/{len(pairs)} runs passed"
                    (direct if name == "direct" else boxed).append(rate)
            workload = (f"{args.sources} sources x {args.inputs} inputs" if not group
                        else f"{args.sources} groups of {args.inputs} identical programs")
            d, s = statistics.median(direct), statistics.median(boxed)
            print(f"| {language} | {workload} | {len(pairs)} | {d:.2f} | {s:.2f} | {s / d:.2f}x |", flush=True)
    backend.close()


if __name__ == "__main__":
    main()
