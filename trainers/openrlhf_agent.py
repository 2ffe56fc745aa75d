"""OpenRLHF agents scored by rewardhub: an ``AgentInstanceBase`` wrapper that records the steps.

Checked against OpenRLHF 0.11.2. Its ``MultiTurnAgentExecutor`` (openrlhf/utils/agent.py) makes one
agent instance per prompt, calls ``reset({"observation", "label"})``, then ``step(states)`` after
each generation (``action_text`` is the model's turn); a step returns ``rewards``, ``scores``,
``environment_feedback`` and ``done``. The executor adds up the steps' ``rewards`` and keeps the last
step's ``scores``; it never calls the agent after ``done`` or once the token budget is spent.

:func:`scored_agent` wraps your instance class: your ``step`` still decides the feedback and when the
episode is done; rewardhub records each turn (tool calls parsed in the hermes format from the action,
tool results from the feedback) and scores the episode so far with a rewardhub config. Each step's
``rewards`` is the change in that score, so the executor's sum is the score of the episode as it
stood at its last step, even when the token budget ends it before ``done``::

    # agent_func.py, passed as --train.agent_func_path
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor
    from rewardhub.trainers.openrlhf_agent import scored_agent

    class Shop(AgentInstanceBase):
        def __init__(self, *args, **kwargs): self.cart = {}
        async def step(self, states, **kwargs):      # your tools; rewards here are ignored
            ...
            return {"environment_feedback": feedback, "done": done}

    class AgentExecutor(MultiTurnAgentExecutor):
        def __init__(self):
            super().__init__(scored_agent(Shop, "episode_rewards.yaml"))

The instance is the episode's ``env`` (its ``env_state``: ``state_dict()`` or public attributes);
the label fills ``label_column`` (``solution``), or, when it is an object (a dataset column of
objects, ``--data.label_key``), each of its keys is a column (``expected_state``, ...); ``extra_logs`` carries each reward's value (NaN
where it abstained).
"""

from __future__ import annotations

import math
from typing import Any

from rewardhub import Batch, RewardSet, SetResult

from .hermes import assistant_turn, context_turns
from .openrlhf import LABEL_COLUMN
from .shims import reward_set

__all__ = ["scored_agent"]


def scored_agent(instance_cls: type, config: Any = None, *, label_column: str = LABEL_COLUMN,
                 every_step: bool = True) -> type:
    """A subclass of ``instance_cls`` (an OpenRLHF ``AgentInstanceBase``) whose steps are rewarded by rewardhub.

    ``config``: a config path, dict or RewardSet (default ``$REWARDHUB_CONFIG``), loaded now, so a
    broken config fails when the agent file is imported. ``every_step=False`` scores only at ``done``
    (for costly rewards; an episode the token budget cuts short then gets 0).
    """
    rewards = config if isinstance(config, RewardSet) else reward_set(config)

    class Scored(instance_cls):  # type: ignore[misc, valid-type]
        async def reset(self, states: dict, **kwargs: Any) -> dict:
            result = await super().reset(states, **kwargs)
            self._rewardhub_prompt = str(result.get("observation", ""))
            self._rewardhub_label = states.get("label")
            self._rewardhub_turns: list[dict[str, Any]] = []
            self._rewardhub_given = 0.0
            return result

        async def step(self, states: dict, **kwargs: Any) -> dict:
            result = dict(await super().step(states, **kwargs))
            turns = self.__dict__.setdefault("_rewardhub_turns", [])
            turns.append(assistant_turn(str(states.get("action_text", ""))))
            feedback = str(result.get("environment_feedback", ""))
            done = bool(result.get("done"))
            turns.extend(context_turns(feedback, turns))
            if not (done or every_step):
                return {**result, **_rewards(0.0, None, {})}
            scored = rewards.evaluate_batch(self._rewardhub_batch())
            total = scored.totals[0] if scored.totals[0] is not None else 0.0
            delta = total - self.__dict__.get("_rewardhub_given", 0.0)
            self._rewardhub_given = total
            return {**result, **_rewards(delta, total, _logs(scored))}

        def _rewardhub_batch(self) -> Batch:
            label = self.__dict__.get("_rewardhub_label")
            columns = {k: [v] for k, v in label.items()} if isinstance(label, dict) else {label_column: [label]}
            return Batch([self.__dict__.get("_rewardhub_prompt")], [list(self._rewardhub_turns)], columns,
                         live={"env": [self]}, reward_name=f"{instance_cls.__name__} (rewardhub)")

    Scored.__name__ = Scored.__qualname__ = f"Scored{instance_cls.__name__}"
    Scored.__module__ = instance_cls.__module__
    return Scored


def _rewards(delta: float, total: float | None, logs: dict[str, float]) -> dict[str, Any]:
    import torch

    return {"rewards": torch.tensor(delta, dtype=torch.float32),
            "scores": torch.tensor(total if total is not None else 0.0, dtype=torch.float32),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in logs.items()}}


def _logs(scored: SetResult) -> dict[str, float]:
    return {alias: math.nan if v[0] is None else v[0] for alias, v in scored.component_values().items()}
