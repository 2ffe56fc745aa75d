"""Whole-run memory limits through the cgroup memory controller (v1 or v2): one child cgroup per slot.

``RLIMIT_AS`` caps each process, so a run of many processes could use ``max_processes x memory_mb``.
The host creates one cgroup per slot under the memory cgroup it runs in; the zygote opens the
slot's files before it hides the host; each run's init sets the run's budget and moves itself in
before the program starts, so everything the run forks is counted together.

Stdlib only: the zygote imports it with ``python -I -S``.
"""

from __future__ import annotations

import errno
import itertools
import os
import time

PREFIX = "rewardhub-"
CGROUP_ROOT = "/sys/fs/cgroup"
# Per version: the file that moves a process in, the limit files (in the order that raises them), the
# file with an "oom_kill N" line.
FILES = {
    1: ("cgroup.procs", ("memory.memsw.limit_in_bytes", "memory.limit_in_bytes"), "memory.oom_control"),
    2: ("cgroup.procs", ("memory.swap.max", "memory.max"), "memory.events"),
}
_pools = itertools.count()


# ----- host side: find the controller, create and remove the slots' cgroups ----------------------------
def own_memory_cgroup() -> tuple[str, int]:
    """The directory of the memory cgroup this process is in and the cgroup version; OSError if none."""
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    if os.path.exists(f"{CGROUP_ROOT}/cgroup.controllers"):
        path = next((p for hid, _, p in lines if hid == "0"), None)
        if path is None:
            raise OSError("this process is in no cgroup v2 cgroup")
        directory = os.path.normpath(f"{CGROUP_ROOT}/{path}")
        with open(f"{directory}/cgroup.controllers") as f:
            if "memory" not in f.read().split():
                raise OSError(f"the memory controller is not enabled for {directory}")
        return directory, 2
    path = next((p for _, names, p in lines if "memory" in names.split(",")), None)
    if path is None:
        raise OSError("this process is in no memory cgroup (no cgroup v1 memory controller)")
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            if fields[dash + 1] == "cgroup" and "memory" in fields[dash + 3].split(","):
                root, mountpoint = fields[3], fields[4]
                relative = os.path.relpath(path, root)
                if not relative.startswith(".."):
                    return os.path.normpath(f"{mountpoint}/{relative}"), 1
    raise OSError(f"the cgroup v1 memory hierarchy holding {path} is not mounted here")


def create_slots(count: int) -> tuple[list[str], int]:
    """Make one child cgroup per slot under this process's memory cgroup; OSError when it cannot.

    Cgroups left by a crashed earlier pool (their owner pid is gone) are removed first.
    """
    parent, version = own_memory_cgroup()
    if not os.path.exists(f"{parent}/cgroup.procs"):
        raise FileNotFoundError(f"{parent} is not a cgroup directory here")
    remove_stale(parent)
    if version == 2:
        try:
            with open(f"{parent}/cgroup.subtree_control", "w") as f:
                f.write("+memory")
        except OSError as exc:
            raise OSError(exc.errno, f"cannot enable the memory controller for children of {parent} "
                                     f"({exc.strerror}; cgroup v2 allows it only in a cgroup without processes "
                                     "of its own)") from None
    pool = f"{PREFIX}{os.getpid()}-{next(_pools)}"
    paths = [f"{parent}/{pool}-{i}" for i in range(count)]
    try:
        for path in paths:
            make(path)
            if not os.access(f"{path}/{FILES[version][0]}", os.W_OK):
                raise PermissionError(f"{path}/{FILES[version][0]} is not writable")
    except OSError:
        remove(paths, wait=0)
        raise
    return paths, version


def make(path: str) -> None:
    """Create a slot's cgroup; one already there (an earlier process with this pid, a restart) is reused."""
    try:
        os.mkdir(path)
    except FileExistsError:
        pass


def remove_stale(parent: str) -> None:
    """Remove rewardhub cgroups whose creating process no longer exists (best effort)."""
    for name in os.listdir(parent):
        owner = name[len(PREFIX):].split("-")[0] if name.startswith(PREFIX) else ""
        if not owner.isdigit() or _alive(int(owner)):
            continue
        try:
            os.rmdir(f"{parent}/{name}")
        except OSError:
            pass  # still holds a process of a run that is dying: the next pool retries


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def remove(paths: list[str], *, wait: float = 2.0) -> None:
    """Remove the cgroups, waiting up to ``wait`` seconds for the last killed runs to leave them."""
    deadline = time.monotonic() + wait
    for path in paths:
        while True:
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    break
                time.sleep(0.01)


# ----- zygote side: per-run budget, joining, and counting OOM kills --------------------------------------
def open_slot(path: str, version: int) -> dict:
    """Open the slot's cgroup files (before the zygote hides ``/sys``); missing limit files are skipped."""
    procs, limits, events = FILES[version]
    return {
        "procs": os.open(f"{path}/{procs}", os.O_WRONLY),
        "limits": [(os.open(f"{path}/{name}", os.O_WRONLY), name) for name in limits
                   if os.path.exists(f"{path}/{name}")],
        "events": os.open(f"{path}/{events}", os.O_RDONLY),
    }


def enter(slot: dict, budget_bytes: int) -> None:
    """Set the slot's limit to the run's budget (no swap beyond it), then move the calling process in."""
    values = [(fd, "0" if name == "memory.swap.max" else str(budget_bytes)) for fd, name in slot["limits"]]
    try:
        for fd, value in values:
            _write(fd, value)
    except OSError as exc:  # v1: memsw must stay >= memory, so lowering goes in the other order
        if exc.errno != errno.EINVAL:
            raise
        for fd, value in reversed(values):
            _write(fd, value)
    _write(slot["procs"], "0")  # "0" is the writer itself, whatever pid namespace it is in


def oom_kills(slot: dict) -> int:
    """How many processes the OOM killer has killed in the slot's cgroup so far (0 if not reported)."""
    for line in os.pread(slot["events"], 4096, 0).decode().splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    return 0


def _write(fd: int, value: str) -> None:
    os.pwrite(fd, value.encode(), 0)
