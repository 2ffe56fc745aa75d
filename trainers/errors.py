"""Errors raised by the trainer adapters and the reward server (all subclass ``RewardhubError``)."""

from __future__ import annotations

from rewardhub.errors import ConfigError, RewardhubError

__all__ = ["BadRequest", "RewardServerError", "ShimConfigError", "TrainerIntegrationError"]


class TrainerIntegrationError(RewardhubError):
    """A trainer adapter cannot be wired as asked (e.g. weights already set that disagree)."""


class ShimConfigError(ConfigError):
    """An OpenRLHF/verl shim does not know which rewardhub config to load: say where to set it."""


class BadRequest(RewardhubError):
    """A reward-server request is malformed; ``status`` is the HTTP code sent back with the message."""

    def __init__(self, message: str, status: int = 422):
        super().__init__(message)
        self.status = status


class RewardServerError(RewardhubError):
    """A shim could not get scores from ``rewardhub serve`` (unreachable, or it answered with an error)."""
