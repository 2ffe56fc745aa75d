"""Errors of the sandbox: each says what is missing or wrong and how to get past it."""

from __future__ import annotations

from rewardhub.errors import RewardhubError, RewardhubWarning

__all__ = ["MemoryLimitWarning", "ProgramError", "SandboxError", "SandboxUnavailableError", "UnknownBackendError"]


class SandboxError(RewardhubError):
    """Base class of the sandbox's errors."""


class SandboxUnavailableError(SandboxError, RuntimeError):
    """No backend can run programs with isolation here; the message names what is missing."""


class UnknownBackendError(SandboxError, KeyError):
    """A backend name that no plugin registered."""

    def __str__(self) -> str:
        return self.args[0]


class ProgramError(SandboxError, ValueError):
    """A program to run is malformed (unknown language, bad file name, non-positive limit)."""


class MemoryLimitWarning(RewardhubWarning):
    """A backend cannot bound a run's memory at its ``memory_mb`` here: the message says what it bounds instead."""
