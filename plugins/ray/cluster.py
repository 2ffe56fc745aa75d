"""Ray itself for rewardhub: importing it (with a message saying how to install it), joining or starting a
cluster, quietly when asked, and stopping what a local start left running if the driver dies first.

A local Ray (no address, no ``RAY_ADDRESS``) is started by ``ray.init`` as processes of their own
(GCS, raylet, agents, workers) that outlive a driver killed with SIGKILL; a small watcher process,
holding the read end of a pipe the driver never closes, stops them when the pipe breaks.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Any

from .._set.compose import RewardSet
from .._set.config import RewardEntry, read_config
from ..errors import RewardhubError

__all__ = ["RayUnavailableError", "connect", "entries_of", "quiet_ray", "require_ray", "stop_with_driver"]


class RayUnavailableError(RewardhubError, ImportError):
    """``ray`` (with Ray Data) is not installed."""


def require_ray():
    """The ``ray`` module, or :class:`RayUnavailableError` saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data is an extra of ray)
    except ImportError as exc:
        raise RayUnavailableError(f"rewardhub.ray needs Ray Data: pip install 'rewardhub[ray]' ({exc})") from None
    return ray


def entries_of(config: Any) -> list[RewardEntry]:
    """The config read once on the driver: actors on other machines get entries, not a local path."""
    if isinstance(config, RewardSet):
        return list(config.entries)
    if isinstance(config, list) and config and all(isinstance(e, RewardEntry) for e in config):
        return config
    return read_config(config)


def connect(address: str | None = None, *, quiet: bool = False, **init_options: Any):
    """``ray.init`` once: ``address`` as Ray takes it (``auto``, ``HOST:PORT``, ``ray://...``); ``None``
    joins the cluster ``RAY_ADDRESS`` names, or starts a local one (``init_options`` go to ``ray.init``),
    stopped with this process even when it is killed (:func:`stop_with_driver`). ``quiet``: Ray's and Ray
    Data's INFO logs and progress bars off (:func:`quiet_ray`).

    Ray gives a local node's raylet a fixed 30 s to come up; on a loaded machine that start is tried
    again, twice, before the error is raised."""
    ray = require_ray()
    if quiet:
        quiet_ray()
    if ray.is_initialized():
        return ray
    options = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False, **init_options}
    if quiet:
        options.setdefault("logging_level", logging.WARNING)
    for attempt in range(3):
        try:
            ray.init(address=address, **options)
            break
        except Exception as exc:
            ray.shutdown()
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise
    if address is None and not os.environ.get("RAY_ADDRESS"):
        stop_with_driver(_started_processes(ray))
    return ray


def quiet_ray() -> None:
    """Ray's and Ray Data's INFO logs (cluster start, execution plans) and progress bars off: warnings stay."""
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.WARNING)
    from ray.data import DataContext

    context = DataContext.get_current()
    context.enable_progress_bars = False
    if hasattr(context, "print_on_execution_start"):
        context.print_on_execution_start = False


def _started_processes(ray: Any) -> list[int]:
    """The pids of the processes a local ``ray.init`` started (GCS, raylet, agents, log monitor...)."""
    node = getattr(getattr(ray, "_private", None) and ray._private.worker, "_global_node", None)
    if node is None:
        return []
    return [info.process.pid for infos in node.all_processes.values() for info in infos
            if getattr(info, "process", None) is not None]


def _start_time(pid: int) -> str | None:
    """A process's start time (``/proc/PID/stat`` field 22): with its pid, it names that process only."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


_watchers: list[subprocess.Popen] = []  # held for the process's life: their pipes close when it ends

# Reads until the driver's end of the pipe closes (it exited or was killed), then stops the listed
# processes and everything they started: SIGTERM, then SIGKILL to what is left after 5 s.
_WATCHER = """
import os, signal, sys, time
sys.stdin.buffer.read()
def started(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None
# A pid whose start time changed is another process now: never touched.
roots = {int(p) for p, when in (arg.split(":") for arg in sys.argv[1:]) if started(p) == when}
def children():
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    found[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return found
parents, doomed = children(), set(roots)
while True:
    more = {pid for pid, parent in parents.items() if parent in doomed} - doomed
    if not more:
        break
    doomed |= more
def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False
for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
    for pid in [p for p in doomed if alive(p)]:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    end = time.monotonic() + wait
    while time.monotonic() < end and any(alive(p) for p in doomed):
        time.sleep(0.1)
"""


def stop_with_driver(pids: list[int]) -> None:
    """Have ``pids`` (and their descendants) stopped when this process ends, however it ends: a watcher
    process waits on a pipe only this process holds open (a SIGKILL closes it too)."""
    if not pids or sys.platform != "linux":
        return
    marked = [f"{pid}:{when}" for pid in pids if (when := _start_time(pid)) is not None]
    watcher = subprocess.Popen([sys.executable, "-c", _WATCHER, *marked], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # a terminal's Ctrl-C goes to the driver, not to it
    _watchers.append(watcher)
