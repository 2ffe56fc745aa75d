"""The plugin manager: built-in plugins and third-party entry points, loaded in one place.

Set ``REWARDHUB_LOAD_PLUGINS`` to a comma-separated list of distribution names to load only those
third-party plugins (an empty value loads none); built-ins are always loaded.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import threading

import pluggy

from . import hookspecs
from .errors import PluginLoadError

__all__ = [
    "BUILTIN_SOURCE",
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "LOAD_PLUGINS_ENV",
    "allowed_distributions",
    "load_plugins",
    "plugin_hooks",
    "plugin_manager",
    "plugin_source",
    "pm",
]

ENTRY_POINT_GROUP = "rewardhub"
LOAD_PLUGINS_ENV = "REWARDHUB_LOAD_PLUGINS"
BUILTIN_SOURCE = "rewardhub"

# Built-in plugins, loaded by module name exactly as third-party ones are, so that the core never
# imports the families (or their heavy dependencies) directly.
DEFAULT_PLUGINS: tuple[str, ...] = (
    # the core's own commands
    "rewardhub.cli",
    "rewardhub.report.command",
    "rewardhub.preference.command",
    "rewardhub.scaffold",
    "rewardhub.testing.judge_check",
    # reward families
    "rewardhub.rewards.exact_match",
    "rewardhub.rewards.format_regex",
    "rewardhub.rewards.heuristic",
    "rewardhub.rewards.repetition",
    "rewardhub.rewards.length",
    "rewardhub.rewards.math.reward",
    "rewardhub.rewards.majority_vote",
    "rewardhub.rewards.agent",
    "rewardhub.rewards.code.reward",
    "rewardhub.rewards.sql.reward",
    "rewardhub.rewards.judge.factory",
    "rewardhub.rewards.reward_model.reward",
    "rewardhub.rewards.reward_model.process",
    "rewardhub.rewards.instructions.reward",
    "rewardhub.rewards.similarity",
    "rewardhub.rewards.multiple_choice",
    "rewardhub.rewards.json_schema",
    "rewardhub.rewards.hubs.reasoning_gym",
    "rewardhub.rewards.hubs.nemo_gym",
    "rewardhub.rewards.hubs.openenv",
    "rewardhub.rewards.hubs.verifiers",
    # code execution
    "rewardhub.sandbox.backends",
    "rewardhub.sandbox.commands",
    # trainers
    "rewardhub.trainers.commands",
    "rewardhub.trainers.hubs.commands",
)

pm = pluggy.PluginManager("rewardhub")
pm.add_hookspecs(hookspecs)

_loaded = False
_lock = threading.RLock()


def allowed_distributions() -> set[str] | None:
    """Distribution names allowed by ``REWARDHUB_LOAD_PLUGINS``, or ``None`` when unrestricted."""
    value = os.environ.get(LOAD_PLUGINS_ENV)
    if value is None:
        return None
    return {_normalise(name) for name in value.split(",") if name.strip()}


def _normalise(distribution: str) -> str:
    """PEP 503 form: case and runs of ``-``, ``_``, ``.`` do not matter (``My.Plugin`` = ``my-plugin``)."""
    return re.sub(r"[-_.]+", "-", distribution.strip()).lower()


def load_plugins() -> pluggy.PluginManager:
    """Register built-in plugins and installed entry points once; later calls are free."""
    global _loaded
    if _loaded:
        return pm
    with _lock:
        if _loaded:
            return pm
        for module_name in DEFAULT_PLUGINS:
            module = importlib.import_module(module_name)
            if not pm.is_registered(module):
                pm.register(module, name=module_name)
        _load_entry_points(allowed_distributions())
        _loaded = True
    return pm


def _load_entry_points(allowed: set[str] | None) -> None:
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        distribution = entry_point.dist.name if entry_point.dist else entry_point.value
        if allowed is not None and _normalise(distribution) not in allowed:
            continue
        try:
            plugin = entry_point.load()
        except Exception as exc:
            raise PluginLoadError(
                f"plugin {entry_point.name!r} of distribution {distribution!r} failed to load: "
                f"{type(exc).__name__}: {exc}. Fix or uninstall it, or list only the plugins you want in "
                f"{LOAD_PLUGINS_ENV} (comma-separated distribution names)"
            ) from exc
        if pm.is_registered(plugin):
            continue
        # Entry-point names are chosen freely: two distributions may both call theirs "rewards".
        name = entry_point.name if pm.get_plugin(entry_point.name) is None else f"{distribution}:{entry_point.name}"
        pm.register(plugin, name=name)
        _plugin_sources[id(plugin)] = distribution


_plugin_sources: dict[int, str] = {}


def plugin_manager() -> pluggy.PluginManager:
    """rewardhub's plugin manager with every plugin loaded: call its hooks (``plugin_manager().hook.X``)."""
    return load_plugins()


def plugin_source(plugin: object) -> str:
    """Distribution that provided ``plugin`` (``"rewardhub"`` for built-ins)."""
    return _plugin_sources.get(id(plugin), BUILTIN_SOURCE)


def plugin_hooks() -> list[dict]:
    """Each registered plugin with its source distribution and the hooks it implements."""
    load_plugins()
    rows = []
    for name, plugin in pm.list_name_plugin():
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])
        rows.append({"name": name, "source": plugin_source(plugin), "hooks": hooks})
    return rows
