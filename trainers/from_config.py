"""A whole rewardhub config (path in ``$REWARDHUB_CONFIG``) as ``trl grpo`` dotted reward paths.

One weighted reward (weights applied inside, each component logged as ``<alias>/mean``)::

    # REWARDHUB_CONFIG=rewards.yaml trl grpo --config grpo.yaml
    reward_funcs: [rewardhub.trainers.from_config.weighted]

or each member by its alias, with TRL applying ``reward_weights`` (keep them in step with the
config; TRL logs each as ``rewards/<alias>/mean``)::

    reward_funcs: [rewardhub.trainers.from_config.math, rewardhub.trainers.from_config.think_format]
    reward_weights: [1.0, 0.2]
"""

from __future__ import annotations

from typing import Any

from .grpo import CompositeReward
from .shims import resolve_config, reward_set


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "weighted":
        return CompositeReward(resolve_config())
    rewards = reward_set()
    if name not in rewards.aliases:
        raise AttributeError(
            f"the rewardhub config has no reward with alias {name!r}; aliases: {', '.join(rewards.aliases)} "
            f"(or use rewardhub.trainers.from_config.weighted for the whole set)"
        )
    return rewards[name]
