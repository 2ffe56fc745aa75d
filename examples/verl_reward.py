"""A verl custom reward file backed by a rewardhub config.

    custom_reward_function:
      path: examples/verl_reward.py
      name: compute_score          # or compute_score_batch with reward_model.reward_manager=batch
      reward_kwargs:
        rewardhub_config: /path/to/rewards.yaml   # or set $REWARDHUB_CONFIG

Each call returns ``{"score": weighted total, <alias>: value..., "abstained": 0/1}``; verl
trains on ``score`` and logs the rest. ``ground_truth`` fills the ``solution`` column.
"""

from rewardhub.trainers.verl import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
