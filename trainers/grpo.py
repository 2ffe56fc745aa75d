"""Wire a rewardhub config into TRL's ``GRPOTrainer`` / ``RLOOTrainer`` in one call.

    from rewardhub.trainers.grpo import trainer_rewards
    args = GRPOConfig(...)
    trainer = GRPOTrainer(model=..., args=args, train_dataset=ds, **trainer_rewards("rewards.yaml", args))

``trainer_rewards`` returns ``reward_funcs`` and writes the weights into ``args.reward_weights``
(model rewards such as ``reward_model`` tokenise by themselves, so TRL needs no
``reward_processing_classes`` for them). With
``composite=True`` the whole set becomes one picklable callable that applies the weights itself and
logs each component: for TRL's async GRPO, which scores in a child process and sums unweighted.
"""

from __future__ import annotations

from typing import Any

from rewardhub import RewardSet, SetConfig, load, read_config

from .errors import TrainerIntegrationError

__all__ = ["CompositeReward", "trainer_rewards"]


class CompositeReward:
    """The weighted sum of a config's rewards as one TRL reward function, picklable by its config.

    Pickling keeps only the config, so the set is rebuilt from the registry in the child
    process (rewards holding clients, pools or models need not pickle). Components are logged
    through TRL's ``log_metric`` as ``<alias>/mean`` and their reasons through ``log_extra``.
    """

    def __init__(self, config: Any, name: str = "rewardhub"):
        self.config: SetConfig = read_config(config)
        self.__name__ = name
        self._set: RewardSet | None = None

    @property
    def reward_set(self) -> RewardSet:
        if self._set is None:
            self._set = RewardSet(self.config)
        return self._set

    def reward_set_is(self, rewards: RewardSet) -> None:
        """Score with ``rewards`` in this process (already built, maybe watched); a pickled copy rebuilds its own."""
        self._set = rewards

    def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        weighted = self.reward_set.weighted
        weighted.__name__ = self.__name__
        return weighted(prompts, completions, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "__name__": self.__name__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.config = state["config"]
        self.__name__ = state["__name__"]
        self._set = None

    def __repr__(self) -> str:
        return f"<CompositeReward {self.__name__!r}: {', '.join(e.alias for e in self.config.entries)}>"


def trainer_rewards(config: Any, args: Any = None, *, composite: bool = False, monitor: bool = False,
                    stop_on: tuple[str, ...] = ()) -> dict[str, Any]:
    """Keyword arguments for ``GRPOTrainer``/``RLOOTrainer`` from a config (path, dict, list or RewardSet).

    Sets ``args.reward_weights`` (a ``GRPOConfig``/``RLOOConfig``) to the config's weights, or to
    ``[1.0]`` for a composite; raises :class:`TrainerIntegrationError` if ``args`` already holds
    different weights, since TRL would silently use those instead. With ``aggregate:
    normalize_then_sum`` the separate reward functions rely on TRL's own ``multi_objective_aggregation``
    (set here; GRPO only), a composite normalises itself. ``monitor=True`` adds ``callbacks`` with a
    :class:`~rewardhub.trainers.hacking.HackingCallback` (``stop_on``: signals that stop training).
    """
    if composite:  # the set is built where it scores (a child process, for TRL's async GRPO) unless watched here
        composite_reward = CompositeReward(config.config if isinstance(config, RewardSet) else config)
        if isinstance(config, RewardSet):
            composite_reward.reward_set_is(config)
        rewards = composite_reward.reward_set if monitor else None
        funcs: list[Any] = [composite_reward]
        weights = [1.0]
    else:
        rewards = config if isinstance(config, RewardSet) else load(config)
        funcs, weights = rewards.reward_funcs, rewards.reward_weights
        _check_aggregate(rewards, args)
    if args is not None:
        _set_weights(args, weights)
    out: dict[str, Any] = {"reward_funcs": funcs}
    if rewards is not None:
        from .hacking import HackingCallback

        out["callbacks"] = [HackingCallback(rewards, stop_on=stop_on)]
    return out


def _check_aggregate(rewards: RewardSet, args: Any) -> None:
    """TRL normalises separate reward functions itself: ask it to, or say why it cannot."""
    if rewards.aggregate != "normalize_then_sum":
        return
    if rewards.config.scheduled:
        scheduled = ", ".join(repr(e.alias) for e in rewards.entries if e.schedule is not None)
        raise TrainerIntegrationError(
            f"aggregate normalize_then_sum with scheduled weights ({scheduled}): TRL normalises each reward "
            f"function, which would undo the schedule a reward applies to its own values; pass composite=True "
            f"(one reward function that normalises, then weights at the trainer's step)")
    if args is None or not hasattr(args, "multi_objective_aggregation"):
        kind = "no trainer config was given" if args is None else f"{type(args).__name__} has no multi_objective_aggregation"
        raise TrainerIntegrationError(
            f"aggregate normalize_then_sum needs TRL's GRPOConfig(multi_objective_aggregation='normalize_then_sum') "
            f"for separate reward functions, but {kind}: pass the GRPOConfig, or composite=True")
    current = args.multi_objective_aggregation
    if current not in ("sum_then_normalize", "normalize_then_sum"):
        raise TrainerIntegrationError(f"args.multi_objective_aggregation is {current!r}; rewardhub's aggregate "
                                      f"normalize_then_sum needs 'normalize_then_sum'")
    args.multi_objective_aggregation = "normalize_then_sum"


def _set_weights(args: Any, weights: list[float]) -> None:
    current = getattr(args, "reward_weights", None)
    if current is not None and [float(w) for w in current] != weights:
        raise TrainerIntegrationError(
            f"args.reward_weights is already {list(current)} but the rewardhub config gives {weights}; "
            f"remove reward_weights from the trainer config (rewardhub sets it from the reward config)"
        )
    args.reward_weights = list(weights)

