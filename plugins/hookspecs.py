"""The hooks a rewardhub plugin can implement. Each takes a callback and is called once at load time."""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("rewardhub")
hookimpl = pluggy.HookimplMarker("rewardhub")


@hookspec
def register_rewards(register):
    """Register reward factories: call ``register(factory)`` once per reward.

    ``factory`` is a :class:`rewardhub.Reward` subclass or what ``rewardhub.sample_reward`` /
    ``rewardhub.batch_reward`` return; its ``name`` becomes the registry name.
    """


@hookspec
def register_sandbox_backends(register):
    """Register code-execution backends: call ``register(name, backend_factory)``."""


@hookspec
def register_commands(subparsers):
    """Add subcommands to the ``rewardhub`` CLI: ``subparsers`` is an ``argparse`` subparsers action.

    Each added parser should ``set_defaults(handler=fn)``; ``fn(args)`` returns the exit code.
    """
