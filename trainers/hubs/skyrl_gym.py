"""A rewardhub set as a skyrl-gym environment's reward: ``RewardhubEnv`` (a ``BaseTextEnv``).

SkyRL's generator makes an environment per prompt with ``skyrl_gym.make(env_class, env_config=...,
extras=<the row's env extras>)``, calls ``init(chat_history)`` and then ``step(model_text)`` until ``done``.
``RewardhubEnv`` keeps the turns and, when the episode ends (after ``max_turns`` steps, default 1), scores the
whole conversation with the set: the prompt is what ``init`` got, the completion the assistant turns. The
row's ``reward_spec.ground_truth`` is the ``solution`` column, the other ``reward_spec`` keys and the
``extra_info`` keys further columns. The step's ``metadata`` holds each reward's value and reason::

    from rewardhub.trainers.hubs.skyrl_gym import register_env
    register_env()                    # skyrl_gym.register(id="rewardhub", ...): then environment.env_class=rewardhub
    # environment.skyrl_gym.rewardhub.rewardhub_config=/path/to/rewards.yaml  (else $REWARDHUB_CONFIG)

Imports skyrl-gym (``pip install skyrl-gym``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from rewardhub import Batch

from ..shims import reward_set

__all__ = ["ENV_ID", "RewardhubEnv", "register_env"]

ENV_ID = "rewardhub"
LABEL_COLUMN = "solution"


class RewardhubEnv(BaseTextEnv):
    """A text environment whose reward is a rewardhub set's weighted total over the episode."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None):
        super().__init__()
        config = _get(env_config, "rewardhub_config")
        self.rewards = reward_set(config)
        self.max_turns = int(_get(env_config, "max_turns") or 1)
        self.abstain_value = float(_get(env_config, "abstain_value") or 0.0)
        extras = dict(extras or {})
        spec = dict(extras.get("reward_spec") or {})
        info = extras.get("extra_info")
        self.columns = {**(dict(info) if isinstance(info, Mapping) else {}),
                        **{k: v for k, v in spec.items() if k != "ground_truth"},
                        LABEL_COLUMN: spec.get("ground_truth")}
        self.prompt: list[dict[str, Any]] = []
        self.turns_taken: list[dict[str, Any]] = []

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        self.prompt = list(prompt)
        return prompt, {}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        self.turns_taken.append({"role": "assistant", "content": action})
        if self.turns < self.max_turns:
            return BaseTextEnvStepOutput(observations=[], reward=0.0, done=False, metadata={})
        completion: Any = action if self.max_turns == 1 else self.turns_taken
        batch = Batch.from_rows([{**self.columns, "prompt": self.prompt, "completion": completion}])
        scored = self.rewards.evaluate_batch(batch)
        total = scored.totals[0]
        metadata = {"rewards": {alias: r.scores[0].value for alias, r in scored.components.items()},
                    "reasons": {alias: r.scores[0].reason for alias, r in scored.components.items()}}
        return BaseTextEnvStepOutput(observations=[], reward=self.abstain_value if total is None else total,
                                     done=True, metadata=metadata)


def register_env(env_id: str = ENV_ID) -> None:
    """Register :class:`RewardhubEnv` with skyrl-gym as ``env_id`` (once; later calls are free)."""
    import skyrl_gym

    if env_id not in skyrl_gym.registry:
        skyrl_gym.register(id=env_id, entry_point=f"{__name__}:RewardhubEnv")


def _get(config: Any, key: str) -> Any:
    """``config[key]`` as plain data: SkyRL's env configs are omegaconf DictConfigs."""
    if config is None:
        return None
    value = config.get(key) if isinstance(config, Mapping) or hasattr(config, "get") else getattr(config, key, None)
    from omegaconf import OmegaConf  # a dependency of skyrl-gym

    return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value
