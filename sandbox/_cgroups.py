"""Cgroups for the local backend (v1 or v2): a fresh memory cgroup per run, a CPU share per slot.

``RLIMIT_AS`` caps each process, so a run of many processes could use ``max_processes x memory_mb``;
a memory cgroup counts all of a run's processes and files together. The host creates one directory
per slot under the cgroup it runs in; the zygote opens it before it hides ``/sys`` and creates a
*new* child cgroup for every run (``mkdirat`` through that descriptor), so memory a run leaves
charged behind (say memfds parked in a unix-socket cycle) never counts against the next run, and
any budget, however small, can be set on an empty cgroup. The run's program moves itself in before
the program starts; the zygote removes the run's cgroup when the run is over.

The CPU share: each slot's zygote joins its own ``cpu`` cgroup with the default weight, so a run
that forks many busy processes competes with another slot's run as one, not as many.

Stdlib only: the zygote imports it with ``python -I -S``.
"""

from __future__ import annotations

import errno
import itertools
import os
import time

__all__ = [
    "CGROUP_ROOT",
    "MEMORY_FILES",
    "PEAK_SLACK",
    "PREFIX",
    "ZYGOTE_LEAF",
    "create_slots",
    "enable",
    "end_run",
    "enter",
    "join",
    "make",
    "new_run",
    "open_slot",
    "own_cgroup",
    "remove",
    "remove_stale",
]

PREFIX = "rewardhub-"
CGROUP_ROOT = "/sys/fs/cgroup"
# Per version: the limit files (in the order that lowers them from "unlimited"), the file with an
# "oom_kill N" line (kills by any OOM killer, the host's included), and the file that says whether the
# run reached its own limit (v2: the "oom" line of memory.events; v1: its peak usage, as v1 counts no
# limit events reliably).
MEMORY_FILES = {
    1: (("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"), "memory.oom_control", "memory.max_usage_in_bytes"),
    2: (("memory.max", "memory.swap.max"), "memory.events", "memory.events"),
}
ZYGOTE_LEAF = "zygote"
PEAK_SLACK = 2 << 20  # v1: a run whose peak usage came this close to its budget reached its limit  # v2: a cgroup with children cannot hold processes, so the zygote sits in a leaf
_pools = itertools.count()


# ----- host side: find a controller, create and remove the slots' cgroups --------------------------------
def own_cgroup(controller: str) -> tuple[str, int]:
    """The directory of this process's cgroup for ``controller`` and the cgroup version; OSError if none."""
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    if os.path.exists(f"{CGROUP_ROOT}/cgroup.controllers"):
        path = next((p for hid, _, p in lines if hid == "0"), None)
        if path is None:
            raise OSError("this process is in no cgroup v2 cgroup")
        directory = os.path.normpath(f"{CGROUP_ROOT}/{path}")
        with open(f"{directory}/cgroup.controllers") as f:
            if controller not in f.read().split():
                raise OSError(f"the {controller} controller is not enabled for {directory}")
        return directory, 2
    path = next((p for _, names, p in lines if controller in names.split(",")), None)
    if path is None:
        raise OSError(f"this process is in no {controller} cgroup (no cgroup v1 {controller} controller)")
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            if fields[dash + 1] == "cgroup" and controller in fields[dash + 3].split(","):
                root, mountpoint = fields[3], fields[4]
                relative = os.path.relpath(path, root)
                if not relative.startswith(".."):
                    return os.path.normpath(f"{mountpoint}/{relative}"), 1
    raise OSError(f"the cgroup v1 {controller} hierarchy holding {path} is not mounted here")


def create_slots(controller: str, count: int) -> tuple[list[str], int]:
    """Make one cgroup per slot under this process's ``controller`` cgroup; OSError when it cannot.

    Cgroups left by a crashed earlier pool (their owner pid is gone) are removed first.
    """
    parent, version = own_cgroup(controller)
    if not os.path.exists(f"{parent}/cgroup.procs"):
        raise FileNotFoundError(f"{parent} is not a cgroup directory here")
    remove_stale(parent)
    if version == 2:
        enable(parent, controller)
    pool = f"{PREFIX}{os.getpid()}-{next(_pools)}"
    paths = [f"{parent}/{pool}-{i}" for i in range(count)]
    try:
        for path in paths:
            make(path, controller, version)
            if not os.access(f"{path}/cgroup.procs", os.W_OK):
                raise PermissionError(f"{path}/cgroup.procs is not writable")
    except OSError:
        remove(paths, wait=0)
        raise
    return paths, version


def enable(parent: str, controller: str) -> None:
    """cgroup v2: let the children of ``parent`` use ``controller``."""
    try:
        with open(f"{parent}/cgroup.subtree_control", "w") as f:
            f.write(f"+{controller}")
    except OSError as exc:
        raise OSError(exc.errno, f"cannot enable the {controller} controller for children of {parent} "
                                 f"({exc.strerror}; cgroup v2 allows it only in a cgroup without processes "
                                 "of its own)") from None


def make(path: str, controller: str, version: int) -> None:
    """Create a slot's cgroup (one already there, from a restart or a reused pid, is kept).

    cgroup v2: the slot's runs are its children, so it passes the memory controller down and the
    zygote waits in a leaf of its own.
    """
    try:
        os.mkdir(path)
    except FileExistsError:  # runs of a killed zygote may have left their cgroups: remove the empty ones
        for entry in os.scandir(path):
            if entry.is_dir() and entry.name.startswith("run-"):
                remove([entry.path], wait=0)
    if version == 2 and controller == "memory":
        enable(path, "memory")
        os.makedirs(f"{path}/{ZYGOTE_LEAF}", exist_ok=True)


def remove_stale(parent: str) -> None:
    """Remove rewardhub cgroups whose creating process no longer exists (best effort)."""
    for name in os.listdir(parent):
        owner = name[len(PREFIX):].split("-")[0] if name.startswith(PREFIX) else ""
        if owner.isdigit() and not _alive(int(owner)):
            remove([f"{parent}/{name}"], wait=0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def remove(paths: list[str], *, wait: float = 2.0) -> None:
    """Remove the cgroups (and their children), waiting up to ``wait`` s for the last killed runs to leave."""
    deadline = time.monotonic() + wait
    for path in paths:
        try:
            children = [entry.path for entry in os.scandir(path) if entry.is_dir()]
        except FileNotFoundError:
            continue
        for directory in [*children, path]:
            while True:
                try:
                    os.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        break
                    time.sleep(0.01)


# ----- zygote side: join the CPU slot; per run, a fresh memory cgroup -----------------------------------
def join(path: str, version: int) -> None:
    """Move the calling process into the cgroup at ``path`` (v2 memory slots: into their zygote leaf)."""
    leaf = f"{path}/{ZYGOTE_LEAF}" if version == 2 and os.path.isdir(f"{path}/{ZYGOTE_LEAF}") else path
    with open(f"{leaf}/cgroup.procs", "w") as f:
        f.write("0")


def open_slot(path: str, version: int) -> dict:
    """Open the slot's memory cgroup directory (before the zygote hides ``/sys``)."""
    return {"dir": os.open(path, os.O_RDONLY | os.O_DIRECTORY), "version": version, "runs": itertools.count()}


def new_run(slot: dict, budget_bytes: int) -> dict:
    """Create the run's own memory cgroup with the run's budget and no swap beyond it; OSError if not."""
    name = f"run-{os.getpid()}-{next(slot['runs'])}"
    limits, events, reached = MEMORY_FILES[slot["version"]]
    os.mkdir(name, dir_fd=slot["dir"])
    run = {"name": name, "procs": -1, "events": -1, "reached": -1, "version": slot["version"], "budget": budget_bytes}
    try:
        for limit in limits:
            try:
                fd = os.open(f"{name}/{limit}", os.O_WRONLY, dir_fd=slot["dir"])
            except FileNotFoundError:  # no swap accounting here: nothing to limit
                continue
            try:
                os.write(fd, b"0" if limit == "memory.swap.max" else str(budget_bytes).encode())
            finally:
                os.close(fd)
        run["procs"] = os.open(f"{name}/cgroup.procs", os.O_WRONLY, dir_fd=slot["dir"])
        run["events"] = os.open(f"{name}/{events}", os.O_RDONLY, dir_fd=slot["dir"])
        run["reached"] = os.open(f"{name}/{reached}", os.O_RDONLY, dir_fd=slot["dir"])
    except OSError:
        end_run(slot, run)
        raise
    return run


def enter(run: dict) -> None:
    """Move the calling process into the run's cgroup ("0" is the writer, whatever pid namespace it is in)."""
    os.write(run["procs"], b"0")


def end_run(slot: dict, run: dict) -> tuple[int, bool]:
    """Close the run's cgroup files and remove it: how many of its processes an OOM killer killed, and
    whether the run reached its own limit (if not, the kills were the host's, not the run's doing).

    Page cache the run was first to read stays charged to its cgroup, which would then linger as a
    dying cgroup after ``rmdir``: it is reclaimed first (v1 ``memory.force_empty``, v2 ``memory.reclaim``).
    """
    kills, reached = 0, False
    if run["events"] >= 0:
        kills = _counter(run["events"], "oom_kill")
    if run["reached"] >= 0:
        reached = _counter(run["reached"], "oom") > 0 if run["version"] == 2 else \
            _counter(run["reached"], "") >= run["budget"] - PEAK_SLACK
    for key in ("procs", "events", "reached"):
        if run[key] >= 0:
            os.close(run[key])
    _reclaim(slot, run)
    for _ in range(200):  # its last processes may still be leaving it
        try:
            os.rmdir(run["name"], dir_fd=slot["dir"])
            break
        except FileNotFoundError:
            break
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                break
            time.sleep(0.001)
    return kills, reached


def _counter(fd: int, key: str) -> int:
    """The number after ``key`` in a cgroup file of "key value" lines (``key`` "": a file holding one number)."""
    for line in os.pread(fd, 4096, 0).decode("ascii", "replace").splitlines():
        name, _, value = line.rpartition(" ") if key else ("", "", line)
        if name == key and value.strip().isascii() and value.strip().isdigit():
            return int(value)
    return 0


def _reclaim(slot: dict, run: dict) -> None:
    """Uncharge what the run left charged (page cache), so that removing its cgroup frees it at once."""
    name = "memory.force_empty" if run["version"] == 1 else "memory.reclaim"
    try:
        fd = os.open(f"{run['name']}/{name}", os.O_WRONLY, dir_fd=slot["dir"])
    except OSError:
        return
    try:
        os.write(fd, b"0" if run["version"] == 1 else b"1G")
    except OSError:  # nothing left to reclaim, or a kernel without it
        pass
    finally:
        os.close(fd)
