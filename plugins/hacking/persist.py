"""The monitor's state as a JSON file, so a restarted server or trainer resumes where the run was.

What is saved: the step summaries, the change trackers (baselines and sums), the alarms raised (they are not
raised again), the findings of the last steps (for persistence), and the batch and sample counts that number
steps when the caller gives none. What is not: a step still open (its rows are scored again after a restart)
and batches waiting for the rest of their rewards. The file is replaced atomically, so a crash mid-write
leaves the previous state.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RewardhubError
from .alarms import Alarm
from .changes import Change
from .steps import StepSummary

if TYPE_CHECKING:
    from .monitor import HackingMonitor

__all__ = ["MonitorStateError", "STATE_VERSION", "load_state", "save_state", "state_of"]

STATE_VERSION = 1


class MonitorStateError(RewardhubError):
    """The monitor's state file cannot be read back: names the file and what is wrong with it."""


def state_of(monitor: HackingMonitor) -> dict[str, Any]:
    """The monitor's resumable state as JSON-ready data."""
    return {
        "version": STATE_VERSION,
        "aliases": monitor.aliases,
        "history": [asdict(s) for s in monitor.history],
        "changes": {name: change.state() for name, change in monitor.changes.items()},
        "coupling": monitor.coupling,
        "alarms": [a.as_dict() for a in monitor.alarms],
        "raised": sorted(monitor._raised),
        "recent": [sorted(keys) for keys in monitor._recent],
        "batches": monitor._batches,
        "samples": monitor._samples,
        "late_rows": monitor.late_rows,
    }


def save_state(monitor: HackingMonitor, path: str | os.PathLike) -> None:
    """Write the state to ``path`` (atomically: a temporary file renamed over it)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(state_of(monitor), allow_nan=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_state(monitor: HackingMonitor, path: str | os.PathLike) -> bool:
    """Resume ``monitor`` from ``path``; False (and nothing changed) when the file does not exist yet."""

    source = Path(path)
    if not source.exists():
        return False
    try:
        state = json.loads(source.read_text(encoding="utf-8"))
        if state.get("version") != STATE_VERSION:
            raise MonitorStateError(f"{source}: state version {state.get('version')!r}, this rewardhub reads "
                                    f"version {STATE_VERSION}; move the file away to start the monitor afresh")
        if state["aliases"] != monitor.aliases:
            raise MonitorStateError(f"{source}: saved for rewards {state['aliases']}, but the monitor watches "
                                    f"{monitor.aliases}; point 'monitor: {{state: ...}}' at a new file for this config")
        history = [StepSummary(**s) for s in state["history"]]
        changes = {name: Change.restore(c) for name, c in state["changes"].items()}
        alarms = [Alarm(a["signal"], a["subject"], a["step"], a["message"], a["figures"], a["since"],
                        tuple(a["examples"])) for a in state["alarms"]]
    except MonitorStateError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise MonitorStateError(f"{source}: not a hacking-monitor state file ({exc}); move it away or fix "
                                f"'monitor: {{state: ...}}'") from exc
    monitor.history, monitor.changes, monitor.alarms = history, changes, alarms
    monitor.coupling = {alias: list(m) for alias, m in state["coupling"].items()}
    monitor._raised = set(state["raised"])
    monitor._recent = [set(keys) for keys in state["recent"]]
    monitor._batches, monitor._samples = state["batches"], state["samples"]
    monitor.late_rows = state["late_rows"]
    return True
