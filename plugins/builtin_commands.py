"""The core CLI subcommands (list, score, check), registered through the same hook plugins use."""

from __future__ import annotations

from .hookspecs import hookimpl


@hookimpl
def register_commands(subparsers):
    from . import cli

    cli.add_core_commands(subparsers)
