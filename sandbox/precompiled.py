"""Code many runs share (a test harness): the warm interpreters of the local and docker backends compile it
once at their start. A registry of sources only, so that the backends and the public ``run`` functions
both read it without importing each other."""

from __future__ import annotations

__all__ = ["PRECOMPILED", "precompile"]

PRECOMPILED: list[str] = []  # what warm interpreters started from now on compile once (see ``precompile``)


def precompile(source: str) -> None:
    """Have the warm interpreters of the local and docker backends compile ``source`` once, at their
    start (those running already are restarted before their next run).

    A Python program whose code is exactly ``source`` then skips compiling it in each run. Meant for
    code many runs share, such as a test harness; every run of the pool can read it, so never
    register anything secret.
    """
    if source not in PRECOMPILED:
        PRECOMPILED.append(source)
