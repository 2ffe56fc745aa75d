"""Each run's pid 1: a 26-byte static x86_64 program, so starting it costs an ``exec`` and no more.

A pid namespace lives as long as its pid 1; killing it kills every process of the run. The program
the zygote forks must not be pid 1 itself (pid 1 ignores the signals it has no handler for), and a
Python pid 1 would cost a copy of the zygote. So pid 1 is this: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``
(it ends with the zygote), then ``pause()`` forever. Elsewhere than x86_64, ``executable`` returns
``None`` and the zygote uses coreutils' ``sleep`` instead (~0.5 ms more per run: dynamic loading).

Stdlib only (the zygote imports it).
"""

from __future__ import annotations

import platform
import struct

__all__ = ["BASE", "CODE", "executable"]

BASE = 0x400000  # where the single segment is loaded
CODE = bytes([
    0xB8, 157, 0, 0, 0,  # mov eax, 157         prctl(
    0xBF, 1, 0, 0, 0,    # mov edi, 1             PR_SET_PDEATHSIG,
    0xBE, 9, 0, 0, 0,    # mov esi, 9             SIGKILL)
    0x0F, 0x05,          # syscall
    0xB8, 34, 0, 0, 0,   # mov eax, 34          pause()
    0x0F, 0x05,          # syscall
    0xEB, 0xF7,          # jmp -9               ... and again, forever
])


def executable() -> bytes | None:
    """The program as an ELF file (one read+execute segment holding headers and code), or ``None``."""
    if platform.machine() != "x86_64":
        return None
    header_size, segment_header_size = 64, 56
    entry = BASE + header_size + segment_header_size
    size = header_size + segment_header_size + len(CODE)
    elf_header = struct.pack(
        "<4sBBBBB7xHHIQQQIHHHHHH",
        b"\x7fELF", 2, 1, 1, 0, 0,  # 64-bit, little-endian, version 1, System V ABI
        2, 62, 1, entry,  # executable, x86_64, version 1, entry point
        header_size, 0, 0, header_size, segment_header_size, 1, 0, 0, 0,  # one program header, no sections
    )
    segment_header = struct.pack("<IIQQQQQQ", 1, 5, 0, BASE, BASE, size, size, 0x1000)  # PT_LOAD, R+X
    return elf_header + segment_header + CODE
