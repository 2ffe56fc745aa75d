"""Objects named by import path (``package.module:attribute``) in a hub reward's params: rubrics, tasks, classes."""

from __future__ import annotations

import importlib
from typing import Any

from rewardhub import ConfigError

__all__ = ["load_object"]


def load_object(path: Any, what: str) -> Any:
    """The object ``path`` names (``pkg.module:name``, or ``pkg.module:Outer.inner``); a ConfigError naming
    ``what`` and the path when it is not one."""
    if not isinstance(path, str) or ":" not in path:
        raise ConfigError(f"{what} must be an import path such as 'my_package.rubrics:correctness'; got {path!r}")
    module_name, _, attribute = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{what} {path!r}: cannot import {module_name!r}: {exc}") from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(f"{what} {path!r}: {module_name!r} has no attribute {attribute!r}") from None
    return target
