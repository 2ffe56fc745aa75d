"""Errors of ``instruction_following``: a malformed row abstains with the reason, naming what is wrong."""

from __future__ import annotations

from rewardhub import RewardInputError

__all__ = ["InstructionRowError"]


class InstructionRowError(RewardInputError):
    """A row's ``instruction_id_list`` / ``kwargs`` cannot be read: unknown id, missing or bad kwarg."""
