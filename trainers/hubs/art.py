"""A rewardhub set as an ART (OpenPipe's ``openpipe-art``) reward: ``score_group`` for ``gather_trajectory_groups``.

ART collects ``Trajectory`` objects (``messages_and_choices``: the conversation, the model's turns as choices;
``tools``; ``metadata``) in ``TrajectoryGroup``s, one group per scenario, and trains on each trajectory's
``reward``. ``score_group`` scores a whole group as one batch, the way ART's RULER does
(``after_each=lambda group: ruler_score_group(group, ...)``), so group rewards see the group: the judge's
``ruler`` mode (RULER-style, one call per group), ``majority_vote``, entries with ``pass_at_k``::

    from rewardhub.trainers.hubs.art import score_group
    groups = await art.gather_trajectory_groups(
        (art.TrajectoryGroup(rollout(model, scenario) for _ in range(8)) for scenario in scenarios),
        after_each=lambda group: score_group(group, "rewards.yaml"),
    )

Each trajectory's messages are split at the first assistant turn into prompt and completion (tool calls and
results kept: the episode view), its ``metadata`` keys are columns and its ``tools`` the ``tools`` column. Its
``reward`` becomes the set's weighted total (``abstain_value`` where every reward abstained); as RULER does,
the reward it had is kept in ``metrics["independent_reward"]``, and each reward's value is a metric by alias
(with ``<alias>/abstained``). Works on ART's objects as they are: nothing of ART is imported here.
"""

from __future__ import annotations

from typing import Any

from rewardhub import Batch, RewardSet
from rewardhub.episode import split_messages

from ..shims import reward_set

__all__ = ["score_group", "trajectory_row"]

def trajectory_row(trajectory: Any) -> dict[str, Any]:
    """The rewardhub row of an ART trajectory."""
    prompt, completion = split_messages([dict(message) for message in trajectory.messages()])
    row = {**dict(trajectory.metadata or {}), "prompt": prompt, "completion": completion}
    if trajectory.tools:
        row.setdefault("tools", list(trajectory.tools))
    return row


async def score_group(group: Any, config: Any, *, abstain_value: float = 0.0) -> Any:
    """Score every trajectory of ``group`` (an ``art.TrajectoryGroup``) with ``config``'s set; returns the group."""
    rewards = config if isinstance(config, RewardSet) else reward_set(config)  # loaded once per config
    trajectories = list(group.trajectories)
    if not trajectories:
        return group
    scored = await rewards.aevaluate_batch(Batch.from_rows([trajectory_row(t) for t in trajectories]))
    for i, trajectory in enumerate(trajectories):
        trajectory.metrics["independent_reward"] = trajectory.reward
        for alias, result in scored.components.items():
            value = result.scores[i].value
            trajectory.metrics[f"{alias}/abstained"] = value is None
            if value is not None:
                trajectory.metrics[alias] = value
        total = scored.totals[i]
        trajectory.reward = abstain_value if total is None else total
    return group

