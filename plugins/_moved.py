"""Modules that moved in 0.2 stay importable under their old names for one release (with a warning).

One finder serves every old name with the module object of its new home, so code that imports or
patches through an old path touches the same module as code using the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "MovedModuleFinder", "install"]

MOVED: dict[str, str] = {
    # The core's implementation modules became private (``rewardhub.registry`` is not listed: that name is
    # the registry object, which an alias module would overwrite).
    "rewardhub.plugins": "rewardhub._manager",
    "rewardhub.batch": "rewardhub._batch",
    "rewardhub.reward": "rewardhub._reward",
    "rewardhub.functional": "rewardhub._decorators",
    "rewardhub.config": "rewardhub._set.config",
    "rewardhub.compose": "rewardhub._set.compose",
    "rewardhub.loop": "rewardhub._aio",
    "rewardhub.io": "rewardhub._files.io",
    "rewardhub.scoring": "rewardhub._files.score_file",
    "rewardhub.builtin_commands": "rewardhub.cli",
    # Concerns spanning several files became subpackages.
    "rewardhub.cases": "rewardhub.testing.cases",
    "rewardhub.pytest_plugin": "rewardhub.testing.pytest_plugin",
    "rewardhub.tiny_models": "rewardhub.testing.tiny_models",
    "rewardhub.report_html": "rewardhub.report.html",
    "rewardhub.report_plots": "rewardhub.report.plots",
    "rewardhub.report_stats": "rewardhub.report.stats",
    "rewardhub.report_training": "rewardhub.report.training",
    "rewardhub.report_command": "rewardhub.report.command",
    "rewardhub.preference_commands": "rewardhub.preference.command",
    "rewardhub.trainers.rm_commands": "rewardhub.trainers.commands",
    "rewardhub.rewards.mathematics": "rewardhub.rewards.math.reward",
    "rewardhub.rewards.math_literals": "rewardhub.rewards.math.literals",
    "rewardhub.rewards.judge_cache": "rewardhub.rewards.judge.cache",
    "rewardhub.rewards.judge_client": "rewardhub.rewards.judge.client",
    "rewardhub.rewards.judge_errors": "rewardhub.rewards.judge.errors",
    "rewardhub.rewards.judge_limits": "rewardhub.rewards.judge.limits",
    "rewardhub.rewards.judge_parse": "rewardhub.rewards.judge.parse",
    "rewardhub.rewards.judge_prompt": "rewardhub.rewards.judge.prompt",
    # 0.3: the set's and the scored files' private modules became the subpackages _set and _files.
    "rewardhub._compose": "rewardhub._set.compose",
    "rewardhub._config": "rewardhub._set.config",
    "rewardhub._config_size": "rewardhub._set.config_size",
    "rewardhub._aggregate": "rewardhub._set.aggregate",
    "rewardhub._schedule": "rewardhub._set.schedule",
    "rewardhub._routing": "rewardhub._set.routing",
    "rewardhub._sharing": "rewardhub._set.sharing",
    "rewardhub._by_group": "rewardhub._set.by_group",
    "rewardhub._groups": "rewardhub._set.groups",
    "rewardhub._io": "rewardhub._files.io",
    "rewardhub._output": "rewardhub._files.output",
    "rewardhub._score_file": "rewardhub._files.score_file",
    "rewardhub._tables": "rewardhub._files.tables",
    # The text layer: every reward reads policy-written text through rewards/text/.
    "rewardhub.rewards.extract": "rewardhub.rewards.text.extract",
    "rewardhub.rewards.number_words": "rewardhub.rewards.text.number_words",
}


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves an old module name in ``MOVED`` to the module at its new name."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; import it from there (the old name goes away in 0.3)",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was executed under its new name."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (after the regular finders: a real module always wins)."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
