"""A whole rewardhub config (path in ``$REWARDHUB_CONFIG``) as ``trl grpo`` dotted reward paths.

One weighted reward (weights applied inside, each component logged as ``<alias>/mean``)::

    # REWARDHUB_CONFIG=rewards.yaml trl grpo --config grpo.yaml
    reward_funcs: [rewardhub.trainers.from_config.weighted]

or each member by its alias, with TRL applying ``reward_weights`` (keep them in step with the
config; TRL logs each as ``rewards/<alias>/mean``)::

    reward_funcs: [rewardhub.trainers.from_config.math, rewardhub.trainers.from_config.think_format]
    reward_weights: [1.0, 0.2]

TRL weighs every reward 1.0 when ``reward_weights`` is left out. On its first call a per-alias
reward looks up the weight the trainer gives it and logs a warning when it differs from the config's.
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Any

from .grpo import CompositeReward
from .shims import resolve_config, reward_set

__all__ = ["logger"]

logger = logging.getLogger("rewardhub.trainers")


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
    index = rewards.aliases.index(name)  # the entry as TRL calls it: a scheduled weight scales its values
    return _weight_checked(rewards.reward_funcs[index], name, rewards.reward_weights[index])


def _weight_checked(reward: Any, alias: str, weight: float) -> Any:
    """``reward`` as a TRL reward function (async if it is) that checks TRL's weight on its first call."""
    checked: list[bool] = []

    def check(kwargs: dict[str, Any]) -> None:
        if not checked:
            checked.append(True)
            _warn_if_weight_differs(getattr(kwargs.get("log_metric"), "__self__", None), function, alias, weight)

    if inspect.iscoroutinefunction(reward.__call__):
        async def function(prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
            check(kwargs)
            return await reward(prompts, completions, **kwargs)
    else:
        def function(prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
            check(kwargs)
            return reward(prompts, completions, **kwargs)

    functools.update_wrapper(function, reward, assigned=("__doc__",), updated=())
    function.__name__ = alias
    return function


def _warn_if_weight_differs(trainer: Any, function: Any, alias: str, weight: float) -> None:
    """Warn when the trainer calling ``function`` weighs it otherwise than the config (``trainer``: TRL's
    GRPO/RLOO trainer, found through the ``log_metric`` method it passes to reward functions)."""
    funcs, weights = getattr(trainer, "reward_funcs", None), getattr(trainer, "reward_weights", None)
    if funcs is None or weights is None or function not in funcs:
        return
    used = float(weights[funcs.index(function)])
    if used != weight:
        unset = getattr(getattr(trainer, "args", None), "reward_weights", None) is None
        why = "reward_weights is not set in the TRL config, so TRL weighs every reward 1.0" if unset else \
            "the TRL config's reward_weights say so"
        logger.warning(
            "rewardhub: TRL weighs %r with %g but the rewardhub config gives %g (%s). Set reward_weights in the "
            "TRL config in step with the rewardhub config, or use rewardhub.trainers.from_config.weighted.",
            alias, used, weight, why,
        )
