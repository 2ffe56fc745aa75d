"""The two calls most users need: ``run`` one program, ``run_many`` programs concurrently."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .backends import get_backend
from .program import Program, SandboxResult, collect_executable


def run(code: str, *, stdin: str = "", timeout: float = 5.0, memory_mb: int = 512, backend: str = "auto",
        files: dict[str, str] | None = None, language: str = "python", **limits: Any) -> SandboxResult:
    """Run one untrusted program in isolation and return its output, exit code and limits hit.

    ``limits`` are further :class:`Program` fields (``output_limit``, ``disk_mb``, ``max_processes``,
    ...). Raises ``SandboxUnavailableError`` when no isolated backend works here.
    """
    program = Program(code, stdin=stdin, files=dict(files or {}), language=language, timeout=timeout,
                      memory_mb=memory_mb, **limits)
    return run_many([program], backend=backend)[0]


def run_many(programs: Iterable[Program | str], *, backend: str = "auto", **backend_options: Any) -> list[SandboxResult]:
    """Run many programs concurrently (strings are Python code with default limits); results in order."""
    batch = [p if isinstance(p, Program) else Program(p) for p in programs]
    if not batch:
        return []
    results = get_backend(backend, **backend_options).run_many(batch)
    return [collect_executable(p, r) for p, r in zip(batch, results, strict=True)]
