"""Scoring a batch that holds several whole groups: group rewards see one group at a time.

A group reward (``majority_vote``, ``length_penalty`` in ``group`` mode) compares the completions of
one prompt. When the caller knows the groups by a key of its own (verl's ``uid``, a ``group``
field) and the rows carry no prompt to tell them apart, each group is scored on its own by the
group rewards, while the other rewards score the whole batch at once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from .._batch import Batch
from .._reward import BatchResult
from .compose import RewardSet, SetResult
from .scorers import innermost

__all__ = ["evaluate_by_group", "innermost_reward", "needs_groups"]


def innermost_reward(reward: Any) -> Any:
    """The plugin's reward inside the set's gates and routes."""
    return innermost(reward)


def needs_groups(reward: Any) -> bool:
    """Whether ``reward`` (or the reward inside a gate or route) compares completions of one prompt.

    A reward says so with a true ``needs_groups`` attribute (``majority_vote``, ``length_penalty`` in
    ``group`` mode); third-party group rewards set it too.
    """
    return bool(getattr(reward, "needs_groups", False))


def evaluate_by_group(rewards: RewardSet, batch: Batch, keys: Sequence[Hashable]) -> SetResult:
    """Every member's result on ``batch``, group rewards scoring each key's rows as one batch; the
    keys are also the groups ``normalize_then_sum`` normalises within."""
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    if not any(needs_groups(m.reward) for m in rewards.members):
        return rewards.evaluate_batch(batch, groups=list(groups.values()))
    components = {}
    for member in rewards.members:
        if not needs_groups(member.reward):
            components[member.alias] = member.reward.evaluate_batch(batch)
            continue
        scores: list[Any] = [None] * len(batch)
        seconds, errors = 0.0, 0
        for indices in groups.values():
            result = member.reward.evaluate_batch(batch.subset(indices))
            for i, score in zip(indices, result.scores, strict=True):
                scores[i] = score
            seconds, errors = seconds + result.seconds, errors + result.errors
        components[member.alias] = BatchResult(scores, seconds, errors)
    return rewards.combine(components, batch, groups=list(groups.values()))
