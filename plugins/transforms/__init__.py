"""Group transforms of a reward's values, set per config entry (``pass_at_k``)."""

from .pass_at_k import AsyncPassAtK, PassAtK, pass_at_k_estimate, pass_at_k_rewards, with_pass_at_k

__all__ = ["AsyncPassAtK", "PassAtK", "pass_at_k_estimate", "pass_at_k_rewards", "with_pass_at_k"]
