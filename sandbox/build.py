"""A compiled program held once, outside the Python heap: a sealed, execute-only memfd.

A ``compile_only`` run returns a :class:`Build`; programs that run it (``Program(executable=build)``)
share it. The local backend hands the descriptor itself to each run (the kernel executes it; nothing
is copied), other backends read the bytes when they send a run. Sealed, so no run can change what
later runs execute; mode ``0111``, so a run can execute it but not read it.
"""

from __future__ import annotations

import fcntl
import os

__all__ = ["Build", "BuildWriter", "CHUNK", "MFD_EXEC", "SEALS"]

MFD_EXEC = 0x0010  # Linux >= 6.3: say explicitly that the memfd may be executed
SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
CHUNK = 1 << 20


def _memfd(name: str) -> int:
    try:
        return os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING | MFD_EXEC)
    except OSError:  # kernels before 6.3 know no MFD_EXEC (their memfds are executable anyway)
        return os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)


class Build:
    """An executable in a sealed memfd; ``len(build)`` is its size, ``read()`` its bytes."""

    def __init__(self, fd: int):
        self._fd = fd
        self.size = os.fstat(fd).st_size

    @classmethod
    def from_bytes(cls, data: bytes) -> Build:
        writer = BuildWriter()
        writer.write(data)
        return writer.finish()

    def fileno(self) -> int:
        if self._fd < 0:
            raise ValueError("the build was closed")
        return self._fd

    def read(self) -> bytes:
        """The executable's bytes (a copy in the Python heap: for backends that must send them)."""
        chunks, at = [], 0
        while at < self.size:
            chunk = os.pread(self.fileno(), min(CHUNK, self.size - at), at)
            if not chunk:
                break
            chunks.append(chunk)
            at += len(chunk)
        return b"".join(chunks)

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<Build {self.size} bytes>"

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()


class BuildWriter:
    """Collects an executable as it arrives (e.g. chunk by chunk from a sandbox run), then seals it."""

    def __init__(self) -> None:
        self._fd = _memfd("rewardhub-build")
        self.size = 0

    def write(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            self.size += written
            view = view[written:]

    def finish(self) -> Build:
        fd, self._fd = self._fd, -1
        os.fchmod(fd, 0o111)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        return Build(fd)

    def discard(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.discard()
