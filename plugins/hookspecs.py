"""The hooks a rewardhub plugin can implement. Each takes a callback and is called once at load time."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

__all__ = [
    "BackendFactory",
    "RewardFactory",
    "hookimpl",
    "hookspec",
    "register_commands",
    "register_rewards",
    "register_sandbox_backends",
]

if TYPE_CHECKING:
    from ._reward import Reward

hookspec = pluggy.HookspecMarker("rewardhub")
hookimpl = pluggy.HookimplMarker("rewardhub")

# What ``register_rewards`` accepts: a Reward subclass, or what ``sample_reward`` / ``batch_reward``
# return; either way a callable taking the reward's params and returning the reward.
RewardFactory = Callable[..., "Reward"]
# A sandbox backend factory: called with the backend's options, returns a backend
# (``run_many(programs)`` and ``close()``: see ``rewardhub.sandbox.backends.Backend``).
BackendFactory = Callable[..., Any]


@hookspec
def register_rewards(register: Callable[[RewardFactory], None]) -> None:
    """Register reward factories: call ``register(factory)`` once per reward.

    ``factory`` is a :class:`rewardhub.Reward` subclass or what ``rewardhub.sample_reward`` /
    ``rewardhub.batch_reward`` return; its ``name`` becomes the registry name.
    """


@hookspec
def register_sandbox_backends(register: Callable[[str, BackendFactory], None]) -> None:
    """Register code-execution backends: call ``register(name, backend_factory)``."""


@hookspec
def register_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add subcommands to the ``rewardhub`` CLI: ``subparsers`` is an ``argparse`` subparsers action.

    Each added parser should ``set_defaults(handler=fn)``; ``fn(args)`` returns the exit code.
    """
