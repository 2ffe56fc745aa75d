"""Errors of the judge reward: bad config is raised at construction, request failures abstain."""

from __future__ import annotations

from rewardhub import ConfigError, InfrastructureError, RewardhubError

__all__ = ["JudgeConfigError", "JudgeContextOverflow", "JudgeError", "JudgeInputError", "JudgeRequestError"]


class JudgeError(RewardhubError):
    """Base class of the judge's errors."""


class JudgeConfigError(JudgeError, ConfigError):
    """A judge param is wrong (unknown template, missing API key variable, bad score range)."""


class JudgeInputError(JudgeError, ValueError):
    """A row cannot be rendered into the judge's template (e.g. it has no prompt)."""


class JudgeRequestError(JudgeError, InfrastructureError):
    """The endpoint gave no usable answer after retries; the message is the (redacted) reason. The
    row abstains (``None``, outcome ``error``) under every ``on_error`` policy."""


class JudgeContextOverflow(JudgeRequestError):
    """The endpoint refused the request as longer than its model's context (HTTP 400 "maximum context length"):
    the completion's doing (a long or padded answer), so the pointwise judge scores it a failure, not an abstention."""
