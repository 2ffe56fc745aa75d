"""Optional dependencies of the reward families: checked when a reward is built, not mid-training."""

from __future__ import annotations

import importlib.util

from rewardhub import ConfigError

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(ConfigError, ImportError):
    """A reward needs a package of one of rewardhub's extras; the message says which to install."""


def require(reward: str, extra: str, *modules: str) -> None:
    """Raise :class:`MissingExtraError` naming ``pip install 'rewardhub[extra]'`` unless ``modules`` import."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"reward {reward!r} needs {', '.join(missing)}: pip install 'rewardhub[{extra}]'"
        )
