"""A verl reward manager for agent-loop episodes (tools, several turns), backed by a rewardhub config.

Checked against verl 0.9.1. Unlike a ``custom_reward_function``, a reward manager sees the response
mask, so rewardhub knows which tokens the model wrote and which the tools returned::

    python -m verl.trainer.main_ppo ... \\
        actor_rollout_ref.rollout.multi_turn.enable=True actor_rollout_ref.rollout.multi_turn.format=hermes \\
        reward.reward_manager.source=importlib \\
        reward.reward_manager.module.path=examples/verl_agent_reward.py \\
        reward.reward_manager.name=RewardhubAgentManager \\
        +reward.custom_reward_function.reward_kwargs.rewardhub_config=/abs/path/episode_rewards.yaml

Per-turn scores (``Score.turns``, e.g. ``tool_error_penalty``'s) go to each turn's last model token
where verl's reward loop assembles the scores; see :mod:`rewardhub.trainers.verl_agent`.
"""

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from rewardhub.trainers.verl_agent import AgentRewardManager


class RewardhubAgentManager(AgentRewardManager, RewardManagerBase):
    """verl's reward manager base with rewardhub's episode scoring (``run_single``, ``assemble_rm_scores``)."""
