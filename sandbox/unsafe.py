"""The ``unsafe`` backend: a plain subprocess per program with rlimits and a deadline, NO isolation.

The program can read the host's files, reach the network and see other processes. It exists for
machines where no isolation is possible and must be chosen by name (``backend="unsafe"``);
``auto`` never picks it.
"""

from __future__ import annotations

import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from .build import BuildWriter
from .languages import LANGUAGES, SANDBOX_PATH, toolchain_problem
from .program import COMPILE_ERROR, Program, SandboxResult

__all__ = ["UnsafeBackend"]


class UnsafeBackend:
    """Runs each program as a child process of this one, limited by rlimits only."""

    name = "unsafe"

    def __init__(self, *, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="rewardhub-unsafe")

    def run_many(self, programs: Sequence[Program]) -> list[SandboxResult]:
        return list(self._executor.map(self.run, programs))

    def submit(self, program: Program) -> Future:
        return self._executor.submit(self.run, program)

    def run(self, program: Program) -> SandboxResult:
        workdir = tempfile.mkdtemp(prefix="rewardhub-unsafe-")
        try:
            for name, content in program.files.items():
                with open(os.path.join(workdir, name), "w") as f:
                    f.write(content)
            command = self._prepare(program, workdir)
            if isinstance(command, SandboxResult):
                return command
            return self._execute(program, command, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _prepare(self, program: Program, workdir: str) -> list[str] | SandboxResult:
        if program.language == "python":
            with open(os.path.join(workdir, "main.py"), "w") as f:
                f.write(program.code)
            return [sys.executable, "-I", "main.py"]
        spec = LANGUAGES[program.language]
        problem = toolchain_problem(program.language)
        if problem:
            return SandboxResult.failed(problem)
        binary = os.path.join(workdir, spec.build)
        command = program.run_command or [binary]
        if program.executable is not None:
            with open(binary, "wb") as f:
                os.sendfile(f.fileno(), program.executable.fileno(), 0, len(program.executable))
            os.chmod(binary, 0o755)
            return command
        with open(os.path.join(workdir, program.source_name), "w") as f:
            f.write(program.code)
        try:
            done = subprocess.run(program.compile_command, cwd=workdir, capture_output=True,
                                  timeout=program.compile_timeout, env=_env(workdir, spec.env))
        except subprocess.TimeoutExpired:
            return SandboxResult(exit_code=None, timed_out=True, reason=f"compile timeout after {program.compile_timeout:g} s")
        if done.returncode != 0:
            return SandboxResult(stderr=(done.stderr + done.stdout).decode(errors="replace"), exit_code=1,
                                 reason=COMPILE_ERROR)
        if spec.package_dir:
            os.replace(shutil.make_archive(binary, "zip", os.path.join(workdir, spec.package_dir)), binary)
        if program.compile_only:
            writer = BuildWriter()
            with open(binary, "rb") as f:
                while chunk := f.read(1 << 20):
                    writer.write(chunk)
            return SandboxResult(exit_code=0, executable=writer.finish())
        return command

    def _execute(self, program: Program, command: list[str], workdir: str) -> SandboxResult:
        start = time.monotonic()
        process = subprocess.Popen(command, cwd=workdir, env=_env(workdir, LANGUAGES[program.language].env), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                   preexec_fn=lambda: _limit(program))
        timed_out = False
        try:
            out, err = process.communicate(program.stdin.encode(), timeout=program.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind in its session
        except ProcessLookupError:
            pass
        limit = program.output_limit
        code = process.returncode
        reason = f"timeout after {program.timeout:g} s" if timed_out else (f"exit code {code}" if code else "")
        return SandboxResult(
            stdout=out[:limit].decode(errors="replace"), stderr=err[:limit].decode(errors="replace"),
            exit_code=None if timed_out else code, timed_out=timed_out, duration=time.monotonic() - start,
            reason=reason, stdout_truncated=len(out) > limit, stderr_truncated=len(err) > limit,
        )

    def close(self) -> None:
        self._executor.shutdown(wait=True)


def _env(workdir: str, language_env: dict[str, str] | None = None) -> dict[str, str]:
    return {"PATH": SANDBOX_PATH, **(language_env or {}), "HOME": workdir, "LANG": "C.UTF-8", "TMPDIR": workdir,
            "MALLOC_ARENA_MAX": "1"}  # one malloc arena: each further one reserves 64 MB of the address space


def _limit(program: Program) -> None:
    reserve = LANGUAGES[program.language].reserve_mb  # what a JVM, V8 or Go runtime reserves beyond its use
    for which, value in ((resource.RLIMIT_CPU, math.ceil(program.timeout) + 1),
                         (resource.RLIMIT_AS, (program.memory_mb + 256 + reserve) * 1024 * 1024),
                         (resource.RLIMIT_FSIZE, program.disk_mb * 1024 * 1024),
                         (resource.RLIMIT_CORE, 1)):
        resource.setrlimit(which, (value, value))
