"""Builds kept per source: a program whose code was built before runs that build instead of compiling again.

A GRPO group often holds the same completion several times, and a row's tests run one program many
times: each distinct source compiles once per backend. Two runs of one new source at once compile it
once (the second waits for the first). Only what the source alone decides is kept: a build, or a
compile error; a compile that timed out or that the sandbox failed is not.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from ..program import COMPILE_ERROR, COMPILE_MEMORY_MB, Program, SandboxResult

__all__ = ["BUILD_OUTPUT_LIMIT", "BuildCache"]

BUILD_OUTPUT_LIMIT = 64 * 1024 * 1024  # bytes a build may have (it comes back as a compile_only run's output)


class BuildCache:
    """Least-recently-used builds (and compile errors) by source, up to ``max_bytes`` of builds."""

    def __init__(self, max_bytes: int = 512 * 1024 * 1024, max_entries: int = 4096):
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self._entries: OrderedDict[bytes, SandboxResult] = OrderedDict()
        self._building: dict[bytes, threading.Event] = {}
        self._lock = threading.Lock()
        self.size = 0
        self.hits = self.misses = 0

    def run(self, program: Program, execute: Callable[[Program], SandboxResult]) -> SandboxResult:
        """Run ``program`` with ``execute``; a source to compile is built once (or taken from the cache)."""
        if program.compile_command is None:
            return execute(program)
        built = self.build(program, execute)
        if program.compile_only or built.executable is None:
            return built
        result = execute(replace(program, executable=built.executable))
        return replace(result, compile_duration=built.compile_duration)

    def build(self, program: Program, execute: Callable[[Program], SandboxResult]) -> SandboxResult:
        key = _key(program)
        while True:
            with self._lock:
                cached = self._entries.get(key)
                if cached is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return cached
                waiting = self._building.get(key)
                if waiting is None:
                    self._building[key] = threading.Event()
                    self.misses += 1
                    break
            waiting.wait()  # the same source is being built: take its build (or build it if that one failed)
        try:
            built = execute(replace(program, compile_only=True, stdin="", output_limit=BUILD_OUTPUT_LIMIT))
            if _deterministic(built):
                self._keep(key, built)
            return built
        finally:
            with self._lock:
                self._building.pop(key).set()

    def _keep(self, key: bytes, built: SandboxResult) -> None:
        with self._lock:
            self._entries[key] = built
            self.size += len(built.executable) if built.executable is not None else 0
            while self._entries and (self.size > self.max_bytes or len(self._entries) > self.max_entries):
                _, dropped = self._entries.popitem(last=False)
                self.size -= len(dropped.executable) if dropped.executable is not None else 0

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.size = 0


def _deterministic(built: SandboxResult) -> bool:
    """A build, or a compile error the source caused (not a timeout, not a failure of the sandbox)."""
    if built.error is not None or built.timed_out:
        return False
    return built.executable is not None or built.reason == COMPILE_ERROR


def _key(program: Program) -> bytes:
    """Everything a build depends on: the language, the source, the files beside it, the compile's limits."""
    digest = hashlib.sha256()
    parts = [program.language, program.code, repr(sorted(program.files.items())), program.compile_timeout,
             max(program.memory_mb, COMPILE_MEMORY_MB), program.disk_mb, program.max_files, program.max_processes,
             program.max_open_files]
    for part in parts:
        data = str(part).encode()
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.digest()
