"""Where framework shims (OpenRLHF reward files, verl ``compute_score``) find their rewardhub config.

A shim is imported by the framework, not by the user, so the config comes from an argument
(verl's ``reward_kwargs``) or from ``$REWARDHUB_CONFIG``; each config is loaded once per process,
and so is its :class:`~rewardhub.trainers.groups.CallScorer` (one group assembler per process).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from rewardhub import RewardSet
from rewardhub.hacking import HackingMonitor

from .errors import ShimConfigError
from .groups import DEFAULT_GROUP_TIMEOUT, CallScorer

__all__ = ["CONFIG_ENV", "as_list", "call_scorer", "monitor_of", "resolve_config", "reward_set"]

CONFIG_ENV = "REWARDHUB_CONFIG"

_sets: dict[str, RewardSet] = {}
_scorers: dict[tuple[str, int | None, float, int | None], CallScorer] = {}
_monitors: dict[str, HackingMonitor] = {}
_lock = threading.RLock()


def resolve_config(config: Any = None) -> Any:
    """``config`` if given, else the path in ``$REWARDHUB_CONFIG``; a clear error when neither is set."""
    if config is not None:
        return config
    value = os.environ.get(CONFIG_ENV)
    if not value:
        raise ShimConfigError(
            f"no rewardhub config: set {CONFIG_ENV}=/path/to/rewards.yaml in the environment of the training "
            f"processes, or pass the config explicitly (verl: reward_kwargs.rewardhub_config)"
        )
    return value


def reward_set(config: Any = None) -> RewardSet:
    """The reward set for ``config`` (see :func:`resolve_config`), built once per process and config."""
    import rewardhub

    config = resolve_config(config)
    key = _config_key(config)
    with _lock:
        if key not in _sets:
            _sets[key] = rewardhub.load(config)
        return _sets[key]


def call_scorer(config: Any = None, *, group_size: int | None = None, group_timeout: float = DEFAULT_GROUP_TIMEOUT,
                samples_per_step: int | None = None, monitor: bool = True) -> CallScorer:
    """The scorer for ``config`` in this process: assembles groups when the set needs them, counts steps
    from samples when ``samples_per_step`` is given, and (``monitor``) has the set watched for reward
    hacking over windows of steps (alarms are warnings in this process's log)."""
    config = resolve_config(config)
    key = (_config_key(config), group_size, float(group_timeout), samples_per_step)
    with _lock:
        if key not in _scorers:
            rewards = reward_set(config)
            _scorers[key] = CallScorer(rewards, group_size=group_size, group_timeout=group_timeout,
                                       samples_per_step=samples_per_step)
            if monitor and key[0] not in _monitors:
                _monitors[key[0]] = HackingMonitor.for_set(rewards, eager=False)
        return _scorers[key]


def monitor_of(config: Any = None) -> HackingMonitor | None:
    """The hacking monitor watching ``config``'s set in this process (None before its first call)."""
    return _monitors.get(_config_key(resolve_config(config)))


def _config_key(config: Any) -> str:
    return str(Path(config).resolve()) if isinstance(config, str | Path) else json.dumps(config, sort_keys=True)


def as_list(value: Any) -> Any:
    """Frameworks hand tuples or numpy object arrays; the protocol code takes lists."""
    if value is None or isinstance(value, list):
        return value
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return value
