"""Every installed reward as a module attribute with default params, for ``trl grpo`` YAML configs.

``trl grpo`` resolves dotted paths in ``reward_funcs`` with ``getattr(module, name)``::

    reward_funcs:
      - rewardhub.trainers.by_name.format_regex
      - rewardhub.trainers.by_name.exact_match

Each attribute is built from the registry on first access (third-party rewards included) and
cached. For params, aliases and weights use a rewardhub config instead: see
:mod:`rewardhub.trainers.from_config`.
"""

from __future__ import annotations

from typing import Any

from rewardhub import registry

__all__ = []

_built: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name not in _built:
        if name not in registry:
            raise AttributeError(
                f"rewardhub.trainers.by_name has no reward {name!r}; installed rewards: {', '.join(registry.names())}"
            )
        _built[name] = registry.create(name)
    return _built[name]


def __dir__() -> list[str]:
    return registry.names()
