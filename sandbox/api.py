"""The calls most users need: ``run`` one program, ``run_many`` programs concurrently, ``run_each`` to
stream the results of a large batch as they finish (``precompile``, for code many runs share, is in
:mod:`~rewardhub.sandbox.precompiled`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from itertools import islice
from typing import Any

from .backends import get_backend
from .program import Program, SandboxResult

__all__ = ["CHUNK", "run", "run_each", "run_many"]

CHUNK = 64  # programs per run_many call for backends that cannot take one program at a time
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
    return get_backend(backend, **backend_options).run_many(batch)


def run_each(programs: Iterable[Program], *, backend: str = "auto",
             **backend_options: Any) -> Iterator[tuple[int, SandboxResult]]:
    """Run programs concurrently and yield ``(index, result)`` as each one finishes.

    Programs are taken from the iterable only as slots free up and each result is handed over as
    soon as it exists, so a caller that reduces results as they come (a verdict instead of the
    output) holds a few runs' output at a time, not the whole batch's.
    """
    chosen = get_backend(backend, **backend_options)
    submit = getattr(chosen, "submit", None)
    numbered = enumerate(programs)
    if submit is None:  # a plugin backend with run_many only: bounded chunks
        while chunk := list(islice(numbered, CHUNK)):
            results = chosen.run_many([program for _, program in chunk])
            yield from zip((i for i, _ in chunk), results, strict=True)
        return
    window = 2 * max(1, getattr(chosen, "workers", 1))  # enough to keep every slot busy
    running: dict[Future, int] = {}
    for i, program in islice(numbered, window):
        running[submit(program)] = i
    while running:
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            index = running.pop(future)
            for i, program in islice(numbered, 1):
                running[submit(program)] = i
            yield index, future.result()
