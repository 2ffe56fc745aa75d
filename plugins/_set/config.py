"""Read a reward config (YAML, TOML, JSON file, dict or list) into validated entries."""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, key_hint, key_names, number_text_hint, shown
from ..hacking.settings import MonitorSettings, parse_monitor, parse_role
from .config_size import check_expanded_size, check_file_size
from .pass_at_k import check_k
from .rescue import Rescue, parse_rescue
from .routing import Route, parse_route
from .schedule import Schedule, parse_schedule

__all__ = [
    "AGGREGATES",
    "ENTRY_KEYS",
    "GATE_KEYS",
    "Gate",
    "RewardEntry",
    "SetConfig",
    "TOP_LEVEL_KEYS",
    "TOTAL",
    "read_config",
]

ENTRY_KEYS = ("name", "alias", "weight", "params", "gate", "timeout", "when", "role", "rescue", "pass_at_k")
TOTAL = "reward"  # a scored row's weighted total (its components sit in ``rewards`` by alias): no alias may take it
GATE_KEYS = ("reward", "threshold", "otherwise")
TOP_LEVEL_KEYS = ("rewards", "aggregate", "monitor")
# sum: the weighted sum of the components; normalize_then_sum: each component normalised within its prompt
# group first (GDPO; TRL's multi_objective_aggregation of the same name), then weighted and summed.
AGGREGATES = ("sum", "normalize_then_sum")


@dataclass(frozen=True)
class Gate:
    """Count a reward only where another reward (``reward``, an alias or name) scores >= ``threshold``."""

    reward: str
    threshold: float = 1.0
    otherwise: float = 0.0


@dataclass(frozen=True)
class RewardEntry:
    """One reward of a config: registry name, display alias, weight (fixed or scheduled), params, gate,
    route and the role the hacking monitor reads it in."""

    name: str
    alias: str
    weight: float = 1.0  # a scheduled entry's weight is its schedule's (``schedule``); this is then 1.0
    params: dict[str, Any] = field(default_factory=dict)
    gate: Gate | None = None
    timeout: float | None = None  # seconds a batch may take; past it unfinished samples time out
    schedule: Schedule | None = None
    when: Route | None = None
    role: str | None = None
    rescue: Rescue | None = None  # a model verifier asked about the rule's plain 0s (``_rescue``)
    pass_at_k: int | None = None  # PKPO: the values become unbiased per-sample pass@k rewards in each prompt group

    @property
    def where(self) -> str:
        """How messages name this entry."""
        return f"reward entry {self.alias!r}" + (f" ({self.name})" if self.name != self.alias else "")

    def weight_at(self, step: float | None) -> float:
        """The entry's weight at trainer step ``step`` (a fixed weight ignores it).

        Raises :class:`ConfigError` for a scheduled weight and no step: a schedule needs the trainer's step.
        """
        if self.schedule is None:
            return self.weight
        if step is None:
            raise ConfigError(
                f"{self.where}: 'weight' follows a schedule ({self.schedule.describe()}), evaluated at the trainer's "
                f"step, but this call carries no step: TRL passes trainer_state; give the PPO adapter step=, the "
                f"reward server a 'step' field (or --samples-per-step), scored files a 'step' column"
            )
        return self.schedule.at(step)


@dataclass(frozen=True)
class SetConfig:
    """A whole config: its entries, how their values are combined (``aggregate``) and the monitor's settings."""

    entries: list[RewardEntry]
    aggregate: str = "sum"
    monitor: MonitorSettings = field(default_factory=MonitorSettings)

    @property
    def scheduled(self) -> bool:
        """Whether any weight follows a schedule (the total then depends on the trainer's step)."""
        return any(e.schedule is not None for e in self.entries)


def read_config(config: Any) -> SetConfig:
    """Parse ``config`` (path, dict with ``rewards``, list of entries, or a ``SetConfig``)."""
    if isinstance(config, SetConfig):
        return config
    if isinstance(config, str | Path):
        source, config = config, _read_file(Path(config))
        if config is None:
            raise ConfigError(f"config file {source} is empty: it needs a 'rewards' list")
    check_expanded_size(config)
    aggregate, monitor = "sum", MonitorSettings()
    if isinstance(config, dict):
        unknown = [k for k in config if k not in TOP_LEVEL_KEYS]
        if unknown:
            raise ConfigError(f"unknown top-level key(s) {key_names(unknown)}{key_hint(unknown[0], TOP_LEVEL_KEYS)}; "
                              f"a config has a 'rewards' list (and optionally 'aggregate' and 'monitor')")
        if "rewards" not in config:
            raise ConfigError("config has no 'rewards' list")
        aggregate = config.get("aggregate", "sum")
        if aggregate not in AGGREGATES:
            raise ConfigError(f"'aggregate' must be one of {', '.join(AGGREGATES)}, got {shown(aggregate)}"
                              f"{key_hint(aggregate, AGGREGATES)}")
        monitor = parse_monitor(config.get("monitor"))
        config = config["rewards"]
    if isinstance(config, tuple):
        config = list(config)
    if not isinstance(config, list):
        raise ConfigError(f"'rewards' must be a list of entries, got {type(config).__name__}")
    if not config:
        raise ConfigError("'rewards' is empty: name at least one reward")
    entries = [_entry(i, raw) for i, raw in enumerate(config, start=1)]
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries, start=1):
        if entry.alias in seen:
            raise ConfigError(
                f"entry #{i} ({entry.name}): alias {entry.alias!r} is already used by entry #{seen[entry.alias]}; "
                f"give the second one its own 'alias'"
            )
        seen[entry.alias] = i
    return SetConfig(entries, aggregate, monitor)


def _read_file(path: Path) -> Any:
    if path.is_dir():
        raise ConfigError(f"config {path} is a folder; give the config file inside it (.yaml, .yml, .toml or .json)")
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    suffix = path.suffix.lower()
    check_file_size(path, path.stat().st_size)
    text = path.read_text(encoding="utf-8")
    try:
        if suffix in (".yaml", ".yml"):
            import yaml

            return yaml.safe_load(text)
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix == ".json":
            return json.loads(text)
    except Exception as exc:
        raise ConfigError(f"cannot parse {path}: {exc}") from None
    raise ConfigError(f"config file {path} must end in .yaml, .yml, .toml or .json")


def _entry(index: int, raw: Any) -> RewardEntry:
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise ConfigError(f"entry #{index} must be a mapping with a 'name', got {type(raw).__name__}")
    name = raw.get("name")
    where = f"entry #{index}" + (f" ({name})" if isinstance(name, str) else "")
    unknown = [k for k in raw if k not in ENTRY_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {key_names(unknown)}{key_hint(unknown[0], ENTRY_KEYS)}; "
                          f"allowed keys: {', '.join(ENTRY_KEYS)}")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: 'name' is required and must be a reward name (see `rewardhub list`)")
    alias = raw.get("alias", name)
    if not isinstance(alias, str) or not alias:
        raise ConfigError(f"{where}: 'alias' must be a non-empty string")
    if alias == TOTAL:
        raise ConfigError(f"{where}: {TOTAL!r} names the weighted total in scored rows; give this entry another 'alias'")
    weight, schedule = raw.get("weight", 1.0), None
    if isinstance(weight, dict):
        weight, schedule = 1.0, parse_schedule(where, weight)
    elif isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
        raise ConfigError(f"{where}: 'weight' must be a finite number, got {shown(weight)}{number_text_hint(weight)} "
                          f"(or a schedule: {{schedule: linear, start: 1.0, end: 0.0, steps: 1000}})")
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: 'params' must be a mapping of param name to value, got {type(params).__name__}")
    timeout = raw.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not math.isfinite(timeout) or timeout <= 0):
        raise ConfigError(f"{where}: 'timeout' must be a positive number of seconds per batch (or null), "
                          f"got {shown(timeout)}{number_text_hint(timeout)}")
    return RewardEntry(name, alias, float(weight), dict(params), _gate(where, raw.get("gate")),
                       None if timeout is None else float(timeout), schedule, parse_route(where, raw.get("when")),
                       parse_role(where, raw.get("role")), parse_rescue(where, raw.get("rescue")),
                       None if raw.get("pass_at_k") is None else check_k(where, raw["pass_at_k"]))


def _gate(where: str, raw: Any) -> Gate | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return Gate(raw)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: 'gate' must be a reward alias or a mapping with {', '.join(GATE_KEYS)}")
    unknown = [k for k in raw if k not in GATE_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown gate key(s) {key_names(unknown)}{key_hint(unknown[0], GATE_KEYS)}; "
                          f"allowed: {', '.join(GATE_KEYS)}")
    if not isinstance(raw.get("reward"), str):
        raise ConfigError(f"{where}: gate needs 'reward': the alias or name of the reward that must pass")
    numbers = {}
    for key, default in (("threshold", 1.0), ("otherwise", 0.0)):
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f"{where}: gate {key!r} must be a finite number, got {shown(value)}{number_text_hint(value)}")
        numbers[key] = float(value)
    return Gate(raw["reward"], **numbers)

