"""A seccomp filter for runs: a small kernel surface, and socket families by allowlist.

Defence in depth under the namespaces and the unprivileged uid. Refused (EPERM): new namespaces,
mounts, ptrace, kernel keyrings, bpf, perf, io_uring, kexec and module loading, inotify/fanotify
(a bind-mounted host ``/usr`` would show what the host runs), making the process dumpable
again (a crash must never reach the host's core-dump helper), and sending ``SIGKILL`` (so a run
killed by ``SIGKILL`` that none of its limits explains was killed from outside: the host's OOM
killer; it abstains instead of scoring 0). ``socket``/``socketpair`` accept
only ``AF_UNIX``, ``AF_INET`` and ``AF_INET6`` (EAFNOSUPPORT otherwise: no vsock shared with a
hypervisor, no netlink, so no host uevents). ``clone3`` answers ENOSYS so that libc falls back to
``clone``, whose flags the filter can inspect. x86_64 only; elsewhere ``prepare`` returns ``None``.
Stdlib only (the zygote imports it).
"""

from __future__ import annotations

import ctypes
import errno
import platform
import socket

from _isolate import PR_SET_DUMPABLE, PR_SET_MM, prctl

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW, RET_ERRNO, RET_KILL = 0x7FFF0000, 0x00050000, 0x80000000
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
ARCH, NR, ARG0, ARG1, ARG2 = 4, 0, 16, 24, 32  # offsets in struct seccomp_data (ARGn: low 32 bits of argument n)
SIGKILL = 9
AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
SOCKET_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)
X86_64 = {
    "clone": 56, "clone3": 435, "unshare": 272, "socket": 41, "socketpair": 53, "prctl": 157,
    # signal senders, by the argument that holds the signal: kill tkill rt_sigqueueinfo pidfd_send_signal
    # (second), tgkill rt_tgsigqueueinfo (third)
    "signal_second": (62, 200, 129, 424), "signal_third": (234, 297),
    "denied": (
        308, 165, 166, 155, 161, 101, 250, 248, 249, 321, 298, 323, 246, 320, 175, 313, 176, 169,
        167, 168, 304, 303, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442, 253, 254, 294, 300, 301,
    ),  # setns mount umount2 pivot_root chroot ptrace keyctl add_key request_key bpf perf_event_open
    # userfaultfd kexec_load kexec_file_load init_module finit_module delete_module reboot swapon
    # swapoff open_by_handle_at name_to_handle_at io_uring_* open_tree move_mount fs* mount_setattr
    # inotify_init inotify_add_watch inotify_init1 fanotify_init fanotify_mark
}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def program() -> list[tuple[int, int, int, int]]:
    """The BPF instructions (code, jump-if-true, jump-if-false, k) for x86_64.

    Written with labels (strings) as jump targets; ``assemble`` turns them into the forward offsets
    classic BPF needs.
    """
    syscalls = X86_64
    code: list[tuple] = [
        (LD_ABS, 0, 0, ARCH),
        (JEQ, 0, "kill", AUDIT_ARCH_X86_64),
        (LD_ABS, 0, 0, NR),
        (JGE, "kill", 0, X32_BIT),
        (JEQ, "enosys", 0, syscalls["clone3"]),
        (JEQ, "flags", 0, syscalls["clone"]),
        (JEQ, "flags", 0, syscalls["unshare"]),
        (JEQ, "family", 0, syscalls["socket"]),
        (JEQ, "family", 0, syscalls["socketpair"]),
        (JEQ, "prctl", 0, syscalls["prctl"]),
        *[(JEQ, "signal_second", 0, number) for number in syscalls["signal_second"]],
        *[(JEQ, "signal_third", 0, number) for number in syscalls["signal_third"]],
        *[(JEQ, "eperm", 0, number) for number in syscalls["denied"]],
        (RET, 0, 0, RET_ALLOW),
        "flags", (LD_ABS, 0, 0, ARG0),
        (JSET, "eperm", "allow", NAMESPACE_FLAGS),
        "family", (LD_ABS, 0, 0, ARG0),
        *[(JEQ, "allow", 0, family) for family in SOCKET_FAMILIES],
        (RET, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT),
        "signal_second", (LD_ABS, 0, 0, ARG1),
        (JEQ, "eperm", "allow", SIGKILL),
        "signal_third", (LD_ABS, 0, 0, ARG2),
        (JEQ, "eperm", "allow", SIGKILL),
        "prctl", (LD_ABS, 0, 0, ARG0),
        (JEQ, "eperm", 0, PR_SET_DUMPABLE),
        (JEQ, "eperm", 0, PR_SET_MM),
        "allow", (RET, 0, 0, RET_ALLOW),
        "eperm", (RET, 0, 0, RET_ERRNO | errno.EPERM),
        "enosys", (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
        "kill", (RET, 0, 0, RET_KILL),
    ]
    return assemble(code)


def assemble(code: list) -> list[tuple[int, int, int, int]]:
    """Resolve label jump targets: a string in ``code`` names the instruction that follows it."""
    labels: dict[str, int] = {}
    instructions = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(target, at: int) -> int:
        if isinstance(target, int):
            return target
        distance = labels[target] - at - 1
        if not 0 <= distance <= 255:
            raise ValueError(f"seccomp jump to {target!r} out of range ({distance})")
        return distance

    return [(op, offset(jt, at), offset(jf, at), k) for at, (op, jt, jf, k) in enumerate(instructions)]


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
