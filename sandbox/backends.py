"""Pluggable backends: name -> factory(**options) -> backend, filled by ``register_sandbox_backends``.

The built-ins (``local``, ``docker``, ``remote``, ``unsafe``) register through the same hook a third-party
package uses to add, say, a remote execution service. ``auto`` picks the first isolated backend
that works here and never falls back to ``unsafe``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from rewardhub import hookimpl, plugin_manager

from .errors import SandboxUnavailableError, UnknownBackendError
from .program import Program, SandboxResult

__all__ = [
    "AUTO_ORDER",
    "Backend",
    "backend_factories",
    "close_backends",
    "get_backend",
    "register_sandbox_backends",
]

AUTO_ORDER = ("local", "docker")


class Backend(Protocol):
    """What a backend provides: run programs (concurrently where it can) and release its workers.

    A backend may say ``builds = False``: it cannot hand back a build (``compile_only``) or run one
    (``executable``), so callers send compiled languages as source, compiled in each run (``remote``).
    """

    name: str

    def run_many(self, programs: Sequence[Program]) -> list[SandboxResult]: ...

    def close(self) -> None: ...


def _local(**options: Any) -> Backend:
    from .local import LocalBackend

    return LocalBackend(**options)


def _docker(**options: Any) -> Backend:
    from .docker_backend import DockerBackend

    return DockerBackend(**options)


def _remote(**options: Any) -> Backend:
    from .remote import RemoteBackend

    return RemoteBackend(**options)


def _unsafe(**options: Any) -> Backend:
    from .unsafe import UnsafeBackend

    return UnsafeBackend(**options)


@hookimpl
def register_sandbox_backends(register):
    register("local", _local)
    register("docker", _docker)
    register("remote", _remote)
    register("unsafe", _unsafe)


_lock = threading.Lock()
_instances: dict[tuple, Backend] = {}


def backend_factories() -> dict[str, Callable[..., Backend]]:
    """Every registered backend factory by name, built-ins and plugins.

    A name registered twice keeps the first factory pluggy returns; pluggy calls later-registered
    plugins first, so an installed plugin can replace a built-in backend.
    """
    found: dict[str, Callable[..., Backend]] = {}

    def register(name: str, factory: Callable[..., Backend]) -> None:
        found.setdefault(name, factory)

    plugin_manager().hook.register_sandbox_backends(register=register)
    return found


def get_backend(name: str = "auto", **options: Any) -> Backend:
    """The shared backend ``name`` built with ``options`` (created once, reused by later calls).

    Raises ``SandboxUnavailableError`` naming what is missing when it cannot run here, and
    ``UnknownBackendError`` for a name no plugin registered.
    """
    if name == "auto":
        return _auto(options)
    factories = backend_factories()
    if name not in factories:
        raise UnknownBackendError(f"unknown sandbox backend {name!r}; installed: {', '.join(sorted(factories))}")
    key = (name, tuple(sorted((k, repr(v)) for k, v in options.items())))
    with _lock:
        if key not in _instances:
            _instances[key] = factories[name](**options)
        return _instances[key]


def _auto(options: dict[str, Any]) -> Backend:
    problems = []
    for name in AUTO_ORDER:
        try:
            return get_backend(name, **options)
        except SandboxUnavailableError as exc:
            problems.append(f"{name}: {exc}")
    raise SandboxUnavailableError(
        "no isolated sandbox backend works here. " + " | ".join(problems)
        + " | To run untrusted code without isolation anyway, pass backend='unsafe' explicitly."
    )


def close_backends() -> None:
    """Stop every shared backend's workers (they restart on next use)."""
    with _lock:
        instances = list(_instances.values())
        _instances.clear()
    for backend in instances:
        backend.close()
