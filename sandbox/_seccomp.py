"""A seccomp filter for runs: no new namespaces, mounts, ptrace, kernel keyrings, bpf or io_uring.

Defence in depth under the namespaces and the unprivileged uid: it shrinks the kernel surface a
program can reach (user namespaces are a common first step of kernel exploits) and costs nothing
a normal program uses. ``clone3`` answers ENOSYS so that libc falls back to ``clone``, whose flags
the filter can inspect. x86_64 only; elsewhere ``prepare`` returns ``None``.
Stdlib only (the zygote imports it).
"""

from __future__ import annotations

import ctypes
import errno
import platform

from _isolate import prctl

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW, RET_ERRNO, RET_KILL = 0x7FFF0000, 0x00050000, 0x80000000
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
X86_64 = {
    "clone": 56, "clone3": 435, "unshare": 272,
    "denied": (
        308, 165, 166, 155, 161, 101, 250, 248, 249, 321, 298, 323, 246, 320, 175, 313, 176, 169,
        167, 168, 304, 303, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442,
    ),  # setns mount umount2 pivot_root chroot ptrace keyctl add_key request_key bpf perf_event_open
    # userfaultfd kexec_load kexec_file_load init_module finit_module delete_module reboot swapon
    # swapoff open_by_handle_at name_to_handle_at io_uring_* open_tree move_mount fs* mount_setattr
}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def program() -> list[tuple[int, int, int, int]]:
    """The BPF instructions (code, jump-if-true, jump-if-false, k) for x86_64 (jumps go forward only)."""
    denied = X86_64["denied"]
    allow = 7 + len(denied)  # after the 7 fixed checks and one check per denied syscall
    flags = allow + 1  # clone/unshare: load their flags, then allow or refuse
    eperm, enosys, kill = flags + 3, flags + 4, flags + 5

    def to(target: int, at: int) -> int:
        return target - at - 1

    code = [
        (LD_ABS, 0, 0, 4),  # arch
        (JEQ, 0, to(kill, 1), AUDIT_ARCH_X86_64),
        (LD_ABS, 0, 0, 0),  # syscall number
        (JGE, to(kill, 3), 0, X32_BIT),
        (JEQ, to(enosys, 4), 0, X86_64["clone3"]),
        (JEQ, to(flags, 5), 0, X86_64["clone"]),
        (JEQ, to(flags, 6), 0, X86_64["unshare"]),
    ]
    for number in denied:
        code.append((JEQ, to(eperm, len(code)), 0, number))
    code += [
        (RET, 0, 0, RET_ALLOW),
        (LD_ABS, 0, 0, 16),  # low 32 bits of args[0]: the flags of clone and unshare
        (JSET, to(eperm, flags + 1), 0, NAMESPACE_FLAGS),
        (RET, 0, 0, RET_ALLOW),
        (RET, 0, 0, RET_ERRNO | errno.EPERM),
        (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
        (RET, 0, 0, RET_KILL),
    ]
    return code


def prepare() -> SockFprog | None:
    """The filter, built once (the zygote does it at start); ``None`` where unsupported."""
    if platform.machine() != "x86_64":
        return None
    instructions = program()
    array = (SockFilter * len(instructions))(*(SockFilter(*i) for i in instructions))
    fprog = SockFprog(len(instructions), array)
    fprog.keep = array  # the struct points into the array: keep it alive with it
    return fprog


def install(fprog: SockFprog | None) -> None:
    """Install a prepared filter on this process and its future children (no-op for ``None``)."""
    if fprog is not None:
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))
