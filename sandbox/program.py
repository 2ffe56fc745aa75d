"""What to run (:class:`Program`) and what came of it (:class:`SandboxResult`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from .build import Build
from .errors import ProgramError
from .languages import LANGUAGES as SPECS

__all__ = ["COMPILE_ERROR", "COMPILE_MEMORY_MB", "LANGUAGES", "Program", "STARVED_SHARE", "SandboxResult"]

LANGUAGES = tuple(SPECS)
COMPILE_ERROR = "compile error"  # the reason of a run whose source did not compile, on every backend
COMPILE_MEMORY_MB = 2048  # compilers may use this much whatever the program's own memory_mb
_FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
# A run that timed out having used less CPU than this share of its time limit was starved by a busy machine
# (the local sandbox's set-up and a program's own I/O waits take wall time without CPU, hence not math's 0.9).
STARVED_SHARE = 0.5
_RESERVED = {"main", "classes"} | {s.source for s in SPECS.values()} | {s.build for s in SPECS.values() if s.build}


@dataclass(frozen=True)
class Program:
    """One untrusted program with its input and limits (defaults suit short test programs)."""

    code: str
    stdin: str = ""
    files: dict[str, str] = field(default_factory=dict)
    language: str = "python"
    timeout: float = 5.0  # wall-clock seconds of running (compilation has its own budget)
    memory_mb: int = 512  # address space the program may add on top of the interpreter
    output_limit: int = 1_000_000  # bytes kept per stream; more kills the run
    disk_mb: int = 64  # work dir, /tmp and /dev/shm together
    max_files: int = 4096
    max_processes: int = 16  # per run; with memory_mb, bounds the run's total memory
    max_open_files: int = 256
    compile_timeout: float = 30.0
    compile_only: bool = False  # compiled languages: build, and return the build instead of running it
    executable: Build | bytes | None = None  # compiled languages: run this build (from a compile_only run)

    def __post_init__(self) -> None:
        if not isinstance(self.code, str) or not isinstance(self.stdin, str):
            raise ProgramError("code and stdin must be strings")
        if isinstance(self.executable, bytes | bytearray | memoryview):
            object.__setattr__(self, "executable", Build.from_bytes(self.executable))
        if self.language not in LANGUAGES:
            raise ProgramError(f"unknown language {self.language!r}; supported: {', '.join(LANGUAGES)}")
        for name in self.files:
            if not _FILE_NAME.match(name) or name in _RESERVED:
                raise ProgramError(
                    f"bad file name {name!r}: use a plain name (letters, digits, '_', '-', '.'), "
                    f"not a path and not one of {sorted(_RESERVED)}"
                )
        if (self.compile_only or self.executable is not None) and self.language == "python":
            raise ProgramError("compile_only and executable are for compiled languages "
                               f"({', '.join(name for name, spec in SPECS.items() if spec.compile)})")
        if self.compile_only and self.executable is not None:
            raise ProgramError("a program is either compiled (compile_only) or given as an executable, not both")
        for name in ("timeout", "memory_mb", "output_limit", "disk_mb", "max_files", "max_processes",
                     "max_open_files", "compile_timeout"):
            if not getattr(self, name) > 0:
                raise ProgramError(f"{name} must be positive; got {getattr(self, name)!r}")

    @property
    def compile_budget(self) -> float:
        """Seconds allowed for compiling before the run's own ``timeout`` starts (0 when nothing compiles)."""
        return self.compile_timeout if self.language != "python" and self.executable is None else 0.0

    @property
    def source_name(self) -> str:
        """The file the code goes in: ``main.py``, or the compiler's source file."""
        return SPECS[self.language].source_name(self.code)

    @property
    def compile_command(self) -> list[str] | None:
        """How to build the program in its work folder (``None``: Python, or a given executable)."""
        if self.executable is not None:
            return None
        return SPECS[self.language].compile_command(self.code, COMPILE_MEMORY_MB // 2)

    @property
    def run_command(self) -> list[str] | None:
        """How the build runs (``None``: Python, or a native executable run from its descriptor)."""
        return SPECS[self.language].run_command(self.code, self.memory_mb)

    @property
    def process_memory_mb(self) -> int:
        """The memory of the run's processes: ``memory_mb`` and its runtime's own (JVM, V8); while
        compiling, at least 2 GB."""
        memory = max(self.memory_mb, COMPILE_MEMORY_MB) if self.compile_command else self.memory_mb
        return memory + SPECS[self.language].resident_mb

    @property
    def memory_budget_mb(self) -> int:
        """The run's whole memory on the local backend: its processes' and its tmpfs files'."""
        return self.process_memory_mb + self.disk_mb

    def request(self) -> dict:
        """The program as a JSON-able dict for a backend's worker, without the executable.

        ``source`` names the file the code goes in when it is compiled; ``compile`` is the command
        (``None`` when nothing compiles); ``executable`` says whether a build comes along (each
        backend sends it its own way); ``artefact`` is the build's file, ``package`` the folder zipped
        into it, ``run`` the command that runs it (``None``: it is executed itself); ``env``,
        ``reserve_mb`` and ``threads`` what the language's runtime needs; ``toolchain`` its Debian package.
        """
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "executable"}
        data["source"] = self.source_name
        data["compile"] = self.compile_command
        data["executable"] = self.executable is not None
        data["compile_memory_mb"] = max(self.memory_mb, COMPILE_MEMORY_MB)
        spec = SPECS[self.language]
        data.update(run=self.run_command, artefact=spec.build, package=spec.package_dir, env=spec.env,
                    reserve_mb=spec.reserve_mb, threads=spec.threads, toolchain=spec.package)
        return data


@dataclass(frozen=True)
class SandboxResult:
    """What a run produced. ``exit_code`` is ``None`` on timeout, ``-N`` when killed by signal N.

    ``reason`` says why a run did not end cleanly ("timeout after 2 s", "memory limit exceeded",
    "exit code 1", "compile error"); ``error`` is set instead when the sandbox itself failed,
    in which case the program's behaviour is unknown and must not be scored. ``killed_externally``
    says the run was killed by something other than its own limits (the host's OOM killer: runs
    carry ``oom_score_adj`` 1000); ``error`` is then set too. A kill of the run's own doing (its
    deadline, its memory cgroup, an rlimit, a signal it sent itself) is the program's failure.
    ``cpu_seconds`` is the user + system CPU time the run's program and the processes it waited for
    used (its threads included; a build made in the same run too), ``None`` where the backend cannot
    tell: a timeout with little CPU used says the machine was busy, not that the program ran away.
    """

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    duration: float = 0.0
    reason: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    error: str | None = None
    executable: Build | None = None  # what a successful compile_only run built
    killed_externally: bool = False
    compile_duration: float = 0.0  # seconds the build took (apart from ``duration``, the run's own)
    cpu_seconds: float | None = None

    @property
    def ok(self) -> bool:
        """The program ran to completion within its limits and exited 0."""
        return self.error is None and not self.timed_out and self.exit_code == 0 and not self.stdout_truncated

    def starved(self, timeout: float) -> bool:
        """A timeout the busy machine caused: the run got less than ``STARVED_SHARE`` of its ``timeout`` s
        as CPU. ``False`` when the CPU used is unknown (the timeout stays the program's failure)."""
        return self.timed_out and self.cpu_seconds is not None and self.cpu_seconds < STARVED_SHARE * timeout

    @classmethod
    def failed(cls, error: str) -> SandboxResult:
        """A result for a run the sandbox could not carry out."""
        return cls(error=error, reason=f"sandbox error: {error}")

