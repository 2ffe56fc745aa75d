"""The config's ``monitor`` section: which signals the reward-hacking monitor watches and over how many steps.

    monitor:
      window: 8                 # steps a trend is read over before a baseline exists, and the spikes' window
      warmup: 10                # steps each series' baseline is first taken over, once it holds still (at least 4)
      threshold: 10             # CUSUM sum (in noise units) at which a series has changed
      disable: [dominance]      # signals to leave out (names: see SIGNALS)
      state: runs/hacking.json  # where the monitor keeps its state, and resumes from after a restart

An entry's ``role`` (``correctness``, ``format``, ``audit``, ``shaping``) tells the monitor what a reward
measures; without one, a weight-0 entry is an audit and the built-in families say their own role.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError, key_hint, shown, unknown_keys_message

__all__ = [
    "DEFAULT_THRESHOLD",
    "DEFAULT_WARMUP",
    "DEFAULT_WINDOW",
    "MIN_WARMUP",
    "MIN_WINDOW",
    "MONITOR_KEYS",
    "MonitorSettings",
    "ROLES",
    "SIGNALS",
    "parse_monitor",
    "parse_role",
]

SIGNALS = ("audit", "divergence", "length", "format", "templated", "abstentions", "dominance", "signatures")
ROLES = ("correctness", "format", "audit", "shaping")
MONITOR_KEYS = ("window", "warmup", "threshold", "disable", "state")
DEFAULT_WINDOW = 8
DEFAULT_WARMUP = 10
DEFAULT_THRESHOLD = 10.0
MIN_WINDOW = 4
MIN_WARMUP = 4


@dataclass(frozen=True)
class MonitorSettings:
    """The trend window in steps, the baseline's length in steps, the change threshold, the signals left out and
    the state file (None: the state lives in memory only)."""

    window: int = DEFAULT_WINDOW
    warmup: int = DEFAULT_WARMUP
    disable: tuple[str, ...] = ()
    threshold: float = DEFAULT_THRESHOLD
    state: str | None = None

    def watches(self, signal: str) -> bool:
        return signal not in self.disable

    @property
    def baseline(self) -> int:
        """The steps a series' baseline is taken over (``warmup``, at least ``MIN_WARMUP``)."""
        return max(self.warmup, MIN_WARMUP)


def parse_monitor(raw: object) -> MonitorSettings:
    """:class:`MonitorSettings` from the config's ``monitor`` mapping (defaults when absent)."""
    if raw is None:
        return MonitorSettings()
    if not isinstance(raw, dict):
        raise ConfigError(f"'monitor' must be a mapping with {', '.join(MONITOR_KEYS)}, got {type(raw).__name__}")
    unknown = [k for k in raw if k not in MONITOR_KEYS]
    if unknown:
        raise ConfigError(unknown_keys_message("monitor", unknown, MONITOR_KEYS))
    window = raw.get("window", DEFAULT_WINDOW)
    if isinstance(window, bool) or not isinstance(window, int) or window < MIN_WINDOW:
        raise ConfigError(f"monitor: 'window' must be a whole number of steps >= {MIN_WINDOW}, got {shown(window)}")
    warmup = raw.get("warmup", DEFAULT_WARMUP)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ConfigError(f"monitor: 'warmup' must be a whole number of steps >= 0 (the steps a baseline is taken "
                          f"over; below {MIN_WARMUP}, {MIN_WARMUP}), got {shown(warmup)}")
    threshold = raw.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not threshold > 0:
        raise ConfigError(f"monitor: 'threshold' must be a number > 0 (default {DEFAULT_THRESHOLD:g}), "
                          f"got {shown(threshold)}")
    state = raw.get("state")
    if state is not None and not isinstance(state, str) or state == "":
        raise ConfigError(f"monitor: 'state' must be the path of a JSON file, got {shown(state)}")
    disable = raw.get("disable") or []
    if isinstance(disable, str):
        disable = [disable]
    if not isinstance(disable, list):
        raise ConfigError(f"monitor: 'disable' must be a list of signal names ({', '.join(SIGNALS)})")
    for name in disable:
        if name not in SIGNALS:
            raise ConfigError(f"monitor: 'disable' names unknown signal {shown(name)}{key_hint(name, SIGNALS)}; "
                              f"signals: {', '.join(SIGNALS)}")
    return MonitorSettings(window, warmup, tuple(disable), float(threshold), state)


def parse_role(where: str, raw: object) -> str | None:
    """An entry's ``role`` (``None`` when absent)."""
    if raw is None:
        return None
    if raw not in ROLES:
        raise ConfigError(f"{where}: 'role' must be one of {', '.join(ROLES)}, got {shown(raw)}{key_hint(raw, ROLES)}")
    return str(raw)
