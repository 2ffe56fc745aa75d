"""A verl custom reward file backed by a rewardhub config (checked against verl 0.9.1).

verl 0.9.1's ``main_ppo`` reads ``reward.custom_reward_function`` (a top-level
``custom_reward_function`` is ignored there and verl silently scores with its built-in rules)::

    python -m verl.trainer.main_ppo ... \\
        reward.custom_reward_function.path=examples/verl_reward.py \\
        reward.custom_reward_function.name=compute_score_async \\
        +reward.custom_reward_function.reward_kwargs.rewardhub_config=/abs/path/rewards.yaml

``reward_kwargs`` is not in verl's config schema, hence the ``+``. With group rewards
(``majority_vote``, ``length_penalty`` mode group) add ``+...reward_kwargs.rewardhub_url=http://HOST:8000``
and run ``rewardhub serve --config rewards.yaml --group-size N`` (N = actor_rollout_ref.rollout.n): verl
scores a batch in several reward-worker processes, and the server is where they meet.

Each call returns finite numbers: ``{"score": weighted total, <alias>: value, "<alias>/abstained": 0/1,
"<alias>/verdict": 0/1, ..., "abstained": 0/1}`` (plus ``flat_group`` and ``<alias>/signal`` for dynamic
sampling when groups are assembled); verl trains on ``score`` and logs the rest. ``ground_truth`` fills the ``solution`` column.
"""

from rewardhub.trainers.verl import compute_score, compute_score_async

__all__ = ["compute_score", "compute_score_async"]
