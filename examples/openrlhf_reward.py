"""An OpenRLHF reward file backed by a rewardhub config.

    REWARDHUB_CONFIG=rewards.yaml python -m openrlhf.cli.train_ppo_ray ... \\
        --remote_rm_url examples/openrlhf_reward.py --label_key solution

OpenRLHF imports this file and calls ``reward_func(queries, prompts, labels)``; it gets
``{"rewards", "scores", "extra_logs"}`` (tensors). ``labels`` fill the ``solution`` column. To serve
the same config over HTTP instead: ``rewardhub serve --config rewards.yaml`` and
``--remote_rm_url http://127.0.0.1:8000/get_reward``.
"""

from rewardhub.trainers.openrlhf import RewardFunc

reward_func = RewardFunc()  # reads $REWARDHUB_CONFIG on first call
