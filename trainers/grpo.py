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

from rewardhub import RewardEntry, RewardSet, load, read_config

from .errors import TrainerIntegrationError


class CompositeReward:
    """The weighted sum of a config's rewards as one TRL reward function, picklable by its config.

    Pickling keeps only the config entries, so the set is rebuilt from the registry in the child
    process (rewards holding clients, pools or models need not pickle). Components are logged
    through TRL's ``log_metric`` as ``<alias>/mean`` and their reasons through ``log_extra``.
    """

    def __init__(self, config: Any, name: str = "rewardhub"):
        self.entries: list[RewardEntry] = read_config(config)
        self.__name__ = name
        self._set: RewardSet | None = None

    @property
    def reward_set(self) -> RewardSet:
        if self._set is None:
            self._set = RewardSet(self.entries)
        return self._set

    def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        weighted = self.reward_set.weighted
        weighted.__name__ = self.__name__
        return weighted(prompts, completions, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return {"entries": self.entries, "__name__": self.__name__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.entries = state["entries"]
        self.__name__ = state["__name__"]
        self._set = None

    def __repr__(self) -> str:
        return f"<CompositeReward {self.__name__!r}: {', '.join(e.alias for e in self.entries)}>"


def trainer_rewards(config: Any, args: Any = None, *, composite: bool = False) -> dict[str, Any]:
    """Keyword arguments for ``GRPOTrainer``/``RLOOTrainer`` from a config (path, dict, list or RewardSet).

    Sets ``args.reward_weights`` (a ``GRPOConfig``/``RLOOConfig``) to the config's weights, or to
    ``[1.0]`` for a composite; raises :class:`TrainerIntegrationError` if ``args`` already holds
    different weights, since TRL would silently use those instead.
    """
    if composite:
        if isinstance(config, RewardSet):
            config = [_entry_dict(e) for e in config.entries]
        funcs: list[Any] = [CompositeReward(config)]
        weights = [1.0]
    else:
        rewards = config if isinstance(config, RewardSet) else load(config)
        funcs, weights = rewards.reward_funcs, rewards.reward_weights
    if args is not None:
        _set_weights(args, weights)
    return {"reward_funcs": funcs}


def _set_weights(args: Any, weights: list[float]) -> None:
    current = getattr(args, "reward_weights", None)
    if current is not None and [float(w) for w in current] != weights:
        raise TrainerIntegrationError(
            f"args.reward_weights is already {list(current)} but the rewardhub config gives {weights}; "
            f"remove reward_weights from the trainer config (rewardhub sets it from the reward config)"
        )
    args.reward_weights = list(weights)


def _entry_dict(entry: RewardEntry) -> dict[str, Any]:
    data: dict[str, Any] = {"name": entry.name, "alias": entry.alias, "weight": entry.weight, "params": entry.params}
    if entry.gate is not None:
        data["gate"] = {"reward": entry.gate.reward, "threshold": entry.gate.threshold,
                        "otherwise": entry.gate.otherwise}
    return data
