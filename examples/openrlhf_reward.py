"""An OpenRLHF reward file backed by a rewardhub config.

    REWARDHUB_CONFIG=rewards.yaml python -m openrlhf.cli.train_ppo_ray ... \\
        --remote_rm_url examples/openrlhf_reward.py --label_key solution

OpenRLHF imports this file, wraps ``reward_func`` with ``ray.remote`` (so it must be a plain
function) and calls ``reward_func(queries, prompts, labels)``; it gets
``{"rewards", "scores", "extra_logs"}`` (tensors). ``labels`` fill the ``solution`` column. To serve
the same config over HTTP instead: ``rewardhub serve --config rewards.yaml`` and
``--remote_rm_url http://127.0.0.1:8000/get_reward``.
"""

from rewardhub.trainers.openrlhf import reward_func  # reads $REWARDHUB_CONFIG on first call

__all__ = ["reward_func"]
