"""Read a reward config (YAML, TOML, JSON file, dict or list) into validated entries."""

from __future__ import annotations

import difflib
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError, number_text_hint

ENTRY_KEYS = ("name", "alias", "weight", "params", "gate", "timeout")
TOTAL = "reward"  # a scored row's weighted total (its components sit in ``rewards`` by alias): no alias may take it
GATE_KEYS = ("reward", "threshold", "otherwise")
TOP_LEVEL_KEYS = ("rewards",)


@dataclass(frozen=True)
class Gate:
    """Count a reward only where another reward (``reward``, an alias or name) scores >= ``threshold``."""

    reward: str
    threshold: float = 1.0
    otherwise: float = 0.0


@dataclass(frozen=True)
class RewardEntry:
    """One reward of a config: registry name, display alias, weight, params and optional gate."""

    name: str
    alias: str
    weight: float = 1.0
    params: dict[str, Any] = field(default_factory=dict)
    gate: Gate | None = None
    timeout: float | None = None  # seconds a batch may take; past it unfinished samples time out


def read_config(config: Any) -> list[RewardEntry]:
    """Parse ``config`` (path, dict with ``rewards``, or list of entries) into entries."""
    if isinstance(config, str | Path):
        source, config = config, _read_file(Path(config))
        if config is None:
            raise ConfigError(f"config file {source} is empty: it needs a 'rewards' list")
    if isinstance(config, dict):
        unknown = [k for k in config if k not in TOP_LEVEL_KEYS]
        if unknown:
            raise ConfigError(f"unknown top-level key(s) {_names(unknown)}{_hint(unknown[0], TOP_LEVEL_KEYS)}; "
                              f"a config has a 'rewards' list")
        if "rewards" not in config:
            raise ConfigError("config has no 'rewards' list")
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
    return entries


def _read_file(path: Path) -> Any:
    if path.is_dir():
        raise ConfigError(f"config {path} is a folder; give the config file inside it (.yaml, .yml, .toml or .json)")
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    suffix = path.suffix.lower()
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
        raise ConfigError(f"{where}: unknown key(s) {_names(unknown)}{_hint(unknown[0], ENTRY_KEYS)}; "
                          f"allowed keys: {', '.join(ENTRY_KEYS)}")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: 'name' is required and must be a reward name (see `rewardhub list`)")
    alias = raw.get("alias", name)
    if not isinstance(alias, str) or not alias:
        raise ConfigError(f"{where}: 'alias' must be a non-empty string")
    if alias == TOTAL:
        raise ConfigError(f"{where}: {TOTAL!r} names the weighted total in scored rows; give this entry another 'alias'")
    weight = raw.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
        raise ConfigError(f"{where}: 'weight' must be a finite number, got {weight!r}{number_text_hint(weight)}")
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: 'params' must be a mapping of param name to value, got {type(params).__name__}")
    timeout = raw.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not math.isfinite(timeout) or timeout <= 0):
        raise ConfigError(f"{where}: 'timeout' must be a positive number of seconds per batch (or null), "
                          f"got {timeout!r}{number_text_hint(timeout)}")
    return RewardEntry(name, alias, float(weight), dict(params), _gate(where, raw.get("gate")),
                       None if timeout is None else float(timeout))


def _gate(where: str, raw: Any) -> Gate | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return Gate(raw)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: 'gate' must be a reward alias or a mapping with {', '.join(GATE_KEYS)}")
    unknown = [k for k in raw if k not in GATE_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown gate key(s) {_names(unknown)}{_hint(unknown[0], GATE_KEYS)}; "
                          f"allowed: {', '.join(GATE_KEYS)}")
    if not isinstance(raw.get("reward"), str):
        raise ConfigError(f"{where}: gate needs 'reward': the alias or name of the reward that must pass")
    numbers = {}
    for key, default in (("threshold", 1.0), ("otherwise", 0.0)):
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f"{where}: gate {key!r} must be a finite number, got {value!r}{number_text_hint(value)}")
        numbers[key] = float(value)
    return Gate(raw["reward"], **numbers)


def _names(keys: list[str]) -> str:
    return ", ".join(repr(k) for k in keys)


def _hint(key: str, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(key), allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
