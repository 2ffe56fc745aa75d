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

MOVED: dict[str, str] = {
    # The core's implementation modules became private (``rewardhub.registry`` is not listed: that name is
    # the registry object, which an alias module would overwrite).
    "rewardhub.plugins": "rewardhub._manager",
    "rewardhub.batch": "rewardhub._batch",
    "rewardhub.reward": "rewardhub._reward",
    "rewardhub.functional": "rewardhub._decorators",
    "rewardhub.config": "rewardhub._config",
    "rewardhub.compose": "rewardhub._compose",
    "rewardhub.loop": "rewardhub._aio",
    "rewardhub.io": "rewardhub._io",
    "rewardhub.scoring": "rewardhub._score_file",
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
