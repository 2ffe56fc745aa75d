"""Thin ctypes wrappers over the Linux calls the zygote needs (unshare, setns, mount, pivot_root, prctl).

Python 3.11 has no ``os.unshare``/``os.mount``; this module is stdlib-only because the zygote
imports it with ``python -I -S`` before it hides the host file system.
"""

from __future__ import annotations

import ctypes
import os
import platform

__all__ = [
    "CLONE_NEWIPC",
    "CLONE_NEWNET",
    "CLONE_NEWNS",
    "CLONE_NEWPID",
    "CLONE_NEWUTS",
    "MMMap",
    "MNT_DETACH",
    "MS_BIND",
    "MS_NODEV",
    "MS_NOEXEC",
    "MS_NOSUID",
    "MS_PRIVATE",
    "MS_RDONLY",
    "MS_REC",
    "MS_REMOUNT",
    "PR_SET_DUMPABLE",
    "PR_SET_MM",
    "PR_SET_MM_MAP",
    "PR_SET_NO_NEW_PRIVS",
    "PR_SET_PDEATHSIG",
    "bind_readonly",
    "memory_layout",
    "mount",
    "pivot_root",
    "prctl",
    "sethostname",
    "setns",
    "show_arguments",
    "syscall",
    "umount",
    "unshare",
]

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_MM = 35
PR_SET_MM_MAP = 14
PR_SET_NO_NEW_PRIVS = 38

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.syscall.restype = ctypes.c_long
_libc.sbrk.restype = ctypes.c_void_p
_libc.sbrk.argtypes = [ctypes.c_long]


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(value: str | None) -> bytes | None:
    return None if value is None else os.fsencode(value)


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), f"unshare({flags:#x})")


def setns(fd: int, kind: int) -> None:
    _check(_libc.setns(fd, kind), f"setns({kind:#x})")


def mount(source: str | None, target: str, fstype: str | None, flags: int = 0, data: str | None = None) -> None:
    _check(_libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {source} on {target}")


def umount(target: str, flags: int = MNT_DETACH) -> None:
    _check(_libc.umount2(_b(target), flags), f"umount {target}")


def bind_readonly(source: str, target: str, *, allow_devices: bool = False) -> None:
    """Bind ``source`` on ``target`` (non-recursive, so no host submount leaks) read-only and nosuid."""
    mount(source, target, None, MS_BIND)
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | (0 if allow_devices else MS_NODEV)
    mount(None, target, None, flags)


def pivot_root(new_root: str) -> None:
    """Make ``new_root`` the root and drop the old one (the ``pivot_root(".", ".")`` idiom)."""
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"pivot_root syscall number unknown for {platform.machine()}")
    os.chdir(new_root)
    _check(_libc.syscall(number, b".", b"."), "pivot_root")
    umount(".")
    os.chdir("/")


def sethostname(name: str) -> None:
    _check(_libc.sethostname(name.encode(), len(name)), "sethostname")


def prctl(option: int, arg: int = 0, arg3: int = 0, arg4: int = 0) -> None:
    _check(_libc.prctl(option, arg, arg3, arg4, 0), f"prctl({option})")


def syscall(number: int, *args: int) -> int:
    """A raw system call; its result (-1 on failure, the reason in ``ctypes.get_errno()``)."""
    return _libc.syscall(ctypes.c_long(number), *(ctypes.c_ulong(arg) for arg in args))


class MMMap(ctypes.Structure):
    """``struct prctl_mm_map``: a process's memory layout as ``PR_SET_MM_MAP`` takes it."""

    _fields_ = [(name, ctypes.c_uint64) for name in (
        "start_code", "end_code", "start_data", "end_data", "start_brk", "brk", "start_stack",
        "arg_start", "arg_end", "env_start", "env_end", "auxv")] + [("auxv_size", ctypes.c_uint32),
                                                                     ("exe_fd", ctypes.c_int32)]


# Fields of /proc/self/stat (numbered from 1, as in proc(5)) that PR_SET_MM_MAP must be given back.
_STAT_FIELDS = {"start_code": 26, "end_code": 27, "start_stack": 28, "start_data": 45, "end_data": 46,
                "start_brk": 47, "env_start": 50, "env_end": 51}


def memory_layout() -> dict[str, int]:
    """This process's fixed memory layout (read while ``/proc`` is there; forks share it)."""
    with open("/proc/self/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()  # fields from the 3rd on
    return {name: int(fields[number - 3]) for name, number in _STAT_FIELDS.items()}


def show_arguments(buffer: ctypes.Array, layout: dict[str, int]) -> None:
    """Make ``/proc/self/cmdline`` read ``buffer`` (NUL-separated arguments), via ``PR_SET_MM_MAP``.

    Inherited by forks (not by ``exec``), so a run's processes show what the buffer says instead of
    the zygote's command line, which holds host paths and the slot's configuration. ``PR_SET_MM_MAP``
    needs no capability (unlike the single ``PR_SET_MM`` fields): the rest of ``layout`` is given
    back as it is, with the current program break.
    """
    start = ctypes.addressof(buffer)
    mm = MMMap(**layout, brk=_libc.sbrk(0), arg_start=start, arg_end=start + len(buffer.raw.rstrip(b"\0")) + 1,
               auxv=0, auxv_size=0, exe_fd=-1)
    prctl(PR_SET_MM, PR_SET_MM_MAP, ctypes.addressof(mm), ctypes.sizeof(mm))
