"""A seccomp filter for runs: a small kernel surface, and socket families by allowlist.

Defence in depth under the namespaces and the unprivileged uid. Refused (EPERM): new namespaces,
mounts, ptrace, kernel keyrings, bpf, perf, io_uring, kexec and module loading, inotify/fanotify
(a bind-mounted host ``/usr`` would show what the host runs), making the process dumpable
again (a crash must never reach the host's core-dump helper). ``socket``/``socketpair`` accept
only ``AF_UNIX``, ``AF_INET`` and ``AF_INET6`` (EAFNOSUPPORT otherwise: no vsock shared with a
hypervisor, no netlink, so no host uevents). ``clone3`` answers ENOSYS so that libc falls back to
``clone``, whose flags the filter can inspect. x86_64 only; elsewhere ``prepare`` returns ``None``.

``SIGKILL`` may not reach the run's main program (pid 2, a session and process-group leader for
good), so a SIGKILL that none of the run's limits explains came from outside (the host's OOM
killer) and abstains instead of scoring 0. Refused: ``kill``/``rt_sigqueueinfo`` to 2, 0, -1 and
-2, ``tgkill``/``rt_tgsigqueueinfo`` to thread group 2, ``tkill`` and ``pidfd_send_signal`` (their
target cannot be told apart), a ``clone`` whose exit signal is SIGKILL (it goes to the parent),
``fcntl(F_SETSIG, SIGKILL)`` (I/O signals to an owner) and ``timer_create`` with a ``sigevent``
(a timer may signal its own process). ``kill(pid > 2, SIGKILL)`` (``Popen.kill()``) is handed to
the zygote (``SECCOMP_RET_USER_NOTIF``), which refuses it only when ``pid`` is a thread of pid 2:
``kill`` of any thread's id kills its whole process. Where the kernel has no user notification
(before 5.5), those calls are refused too. Stdlib only (the zygote imports it).
"""

from __future__ import annotations

import ctypes
import errno
import platform
import socket

from _isolate import PR_SET_DUMPABLE, PR_SET_MM, prctl, syscall

__all__ = [
    "AUDIT_ARCH_X86_64",
    "HIGH",
    "MAIN_PROGRAM",
    "NAMESPACE_FLAGS",
    "SECCOMP",
    "SOCKET_FAMILIES",
    "SockFilter",
    "SockFprog",
    "X32_BIT",
    "X86_64",
    "assemble",
    "install",
    "prepare",
    "program",
]

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 8
RET_ALLOW, RET_ERRNO, RET_KILL, RET_USER_NOTIF = 0x7FFF0000, 0x00050000, 0x80000000, 0x7FC00000
LD_ABS, JEQ, JGE, JSET, RET, AND = 0x20, 0x15, 0x35, 0x45, 0x06, 0x54
ARCH, NR, ARG0, ARG1, ARG2 = 4, 0, 16, 24, 32  # offsets in struct seccomp_data (ARGn: low 32 bits of argument n)
HIGH = 4  # the high 32 bits of an argument, past its low ones
SIGKILL, F_SETSIG = 9, 10
MAIN_PROGRAM = 2  # the run's main program: pid 2, and its process group (it leads a session of its own)
AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
SOCKET_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)
SECCOMP = 317  # the seccomp system call on x86_64
X86_64 = {
    "clone": 56, "clone3": 435, "unshare": 272, "socket": 41, "socketpair": 53, "prctl": 157,
    "fcntl": 72, "timer_create": 222,
    # signal senders: to a process (kill rt_sigqueueinfo), to a thread group's thread (tgkill rt_tgsigqueueinfo),
    # to a target the filter cannot see (tkill: any thread's id; pidfd_send_signal: a descriptor)
    "signal_process": (62, 129), "signal_group": (234, 297), "signal_unseen": (200, 424),
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


def program(listener: bool = True) -> list[tuple[int, int, int, int]]:
    """The BPF instructions (code, jump-if-true, jump-if-false, k) for x86_64.

    ``listener``: ``kill(pid > 2, SIGKILL)`` waits for the zygote's answer (else it is refused).
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
        (JEQ, "namespaces", 0, syscalls["unshare"]),
        (JEQ, "family", 0, syscalls["socket"]),
        (JEQ, "family", 0, syscalls["socketpair"]),
        (JEQ, "prctl", 0, syscalls["prctl"]),
        (JEQ, "fcntl", 0, syscalls["fcntl"]),
        (JEQ, "sigevent", 0, syscalls["timer_create"]),
        *[(JEQ, "signal_process", 0, number) for number in syscalls["signal_process"]],
        *[(JEQ, "signal_group", 0, number) for number in syscalls["signal_group"]],
        *[(JEQ, "signal_unseen", 0, number) for number in syscalls["signal_unseen"]],
        *[(JEQ, "eperm", 0, number) for number in syscalls["denied"]],
        (RET, 0, 0, RET_ALLOW),
        "flags", (LD_ABS, 0, 0, ARG0),  # clone: no new namespace, and an exit signal other than SIGKILL
        (JSET, "eperm", 0, NAMESPACE_FLAGS),
        (AND, 0, 0, 0xFF),
        (JEQ, "eperm", "allow", SIGKILL),
        "namespaces", (LD_ABS, 0, 0, ARG0),
        (JSET, "eperm", "allow", NAMESPACE_FLAGS),
        "family", (LD_ABS, 0, 0, ARG0),
        *[(JEQ, "allow", 0, family) for family in SOCKET_FAMILIES],
        (RET, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT),
        "fcntl", (LD_ABS, 0, 0, ARG1),
        (JEQ, 0, "allow", F_SETSIG),
        (LD_ABS, 0, 0, ARG2),
        (JEQ, "eperm", "allow", SIGKILL),
        "sigevent", (LD_ABS, 0, 0, ARG1),  # timer_create(clock, NULL, ...) only: a sigevent may name SIGKILL
        (JEQ, 0, "eperm", 0),
        (LD_ABS, 0, 0, ARG1 + HIGH),
        (JEQ, "allow", "eperm", 0),
        "signal_process", (LD_ABS, 0, 0, ARG1),
        (JEQ, 0, "allow", SIGKILL),
        (LD_ABS, 0, 0, ARG0),
        (JEQ, "eperm", 0, MAIN_PROGRAM),
        (JEQ, "eperm", 0, 0),  # the caller's process group
        (JEQ, "eperm", 0, 0xFFFFFFFF),  # -1: every process it may signal
        (JEQ, "eperm", 0, (-MAIN_PROGRAM) & 0xFFFFFFFF),  # the main program's process group
        (JSET, "allow", 0, 0x80000000),  # another process group: never the main program's
        (JEQ, "allow", 0, 1),  # the namespace's pid 1 ignores it
        (RET, 0, 0, RET_USER_NOTIF if listener else RET_ERRNO | errno.EPERM),  # a thread of pid 2?
        "signal_group", (LD_ABS, 0, 0, ARG2),
        (JEQ, 0, "allow", SIGKILL),
        (LD_ABS, 0, 0, ARG0),
        (JEQ, "eperm", "allow", MAIN_PROGRAM),
        "signal_unseen", (LD_ABS, 0, 0, ARG1),
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


def prepare() -> dict[bool, SockFprog] | None:
    """The filters, with and without a listener, built once (the zygote does it at start); ``None``
    where unsupported."""
    if platform.machine() != "x86_64":
        return None
    return {listener: _fprog(program(listener)) for listener in (True, False)}


def _fprog(instructions: list[tuple[int, int, int, int]]) -> SockFprog:
    array = (SockFilter * len(instructions))(*(SockFilter(*i) for i in instructions))
    fprog = SockFprog(len(instructions), array)
    fprog.keep = array  # the struct points into the array: keep it alive with it
    return fprog


def install(filters: dict[bool, SockFprog] | None) -> int | None:
    """Install the filter on this process and its future children; returns the listener's descriptor
    (the caller hands it to the zygote and closes it), or ``None`` without one (kernels before 5.5,
    no filter: ``filters`` is ``None``)."""
    if filters is None:
        return None
    listener = syscall(SECCOMP, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                       ctypes.addressof(filters[True]))
    if listener >= 0:
        return listener
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(filters[False]))
    return None
