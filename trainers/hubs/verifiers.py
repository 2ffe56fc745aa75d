"""A rewardhub set as a verifiers (0.4) reward function: ``reward_function(config)``.

verifiers calls a task's reward functions as ``await fn(task=<the task's data>, trace=<the rollout>)`` and records
the number under the function's name with its weight (``@vf.reward(weight=...)`` or a plugged
``rewards: {name: {fn: "pkg.module:function", weight: ...}}`` in the task's config). The function made here
scores the trace's messages (the prompt up to the first assistant turn, then the rollout) with the set, the
task data's fields as columns (its ``answer`` field is also the ``solution`` column unless the data has one),
and returns the set's weighted total (``abstain_value`` where every reward abstained)::

    # my_env/rewards.py
    from rewardhub.trainers.hubs.verifiers import reward_function
    rewardhub_total = reward_function("rewards.yaml")          # plug: rewards: {rewardhub_total: {fn: "my_env.rewards:rewardhub_total"}}

    class MathTask(vf.Task[MathData, vf.TaskConfig]):
        @vf.reward(weight=1.0)
        async def rewardhub(self, task, trace):
            return await rewardhub_total(task, trace)

``metric_function(config)`` returns each reward's value by alias, for ``@vf.metric``. Imports verifiers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import rewardhub
from rewardhub import Batch, RewardSet, SetResult
from rewardhub.episode import split_messages

__all__ = ["metric_function", "reward_function", "row_of"]

LABEL_COLUMN = "solution"


def row_of(task: Any, trace: Any) -> dict[str, Any]:
    """The rewardhub row of a verifiers rollout: its messages split at the first assistant turn, the task's data as columns."""
    messages = [message.model_dump(exclude_none=True) for message in trace.messages]
    prompt, completion = split_messages(messages)
    data = task.model_dump(exclude_none=True) if hasattr(task, "model_dump") else dict(task or {})
    data.pop("prompt", None)
    if "answer" in data and LABEL_COLUMN not in data:
        data[LABEL_COLUMN] = data["answer"]
    return {**data, "prompt": prompt, "completion": completion}


def reward_function(config: Any, *, name: str = "rewardhub", abstain_value: float = 0.0
                    ) -> Callable[..., Awaitable[float]]:
    """An async verifiers reward function named ``name`` returning the set's weighted total for the rollout."""
    rewards = _load(config)

    async def score(task: Any, trace: Any) -> float:
        total = (await _score(rewards, task, trace)).totals[0]
        return abstain_value if total is None else total

    score.__name__ = score.__qualname__ = name
    return score


def metric_function(config: Any, *, name: str = "rewardhub_components", abstain_value: float = 0.0
                    ) -> Callable[..., Awaitable[dict[str, float]]]:
    """An async verifiers metric function returning each reward's value by alias (``abstain_value`` where it abstained)."""
    rewards = _load(config)

    async def components(task: Any, trace: Any) -> dict[str, float]:
        scored = await _score(rewards, task, trace)
        return {alias: abstain_value if r.scores[0].value is None else r.scores[0].value
                for alias, r in scored.components.items()}

    components.__name__ = components.__qualname__ = name
    return components


async def _score(rewards: RewardSet, task: Any, trace: Any) -> SetResult:
    return await rewards.aevaluate_batch(Batch.from_rows([row_of(task, trace)]))


def _load(config: Any) -> RewardSet:
    return config if isinstance(config, RewardSet) else rewardhub.load(config)
