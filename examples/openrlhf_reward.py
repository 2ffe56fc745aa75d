"""An OpenRLHF reward file backed by a rewardhub config (checked against OpenRLHF 0.11.2).

    REWARDHUB_CONFIG=rewards.yaml python -m openrlhf.cli.train_ppo_ray ... \\
        --reward.remote_url examples/openrlhf_reward.py --data.label_key solution

OpenRLHF imports this file with importlib when each vLLM engine starts and runs
``reward_func(queries, prompts, labels)`` in a thread for every generated sample; it gets
``{"rewards", "scores", "extra_logs"}`` as tensors. ``labels`` fill the ``solution`` column. The config
is loaded here, on import: a missing ``REWARDHUB_CONFIG`` or a broken config stops the engine with
the reason, where OpenRLHF would otherwise log each failed call at INFO level and train on ``None``.

To serve the same config over HTTP instead (one server for every engine; the way to go with group
rewards on large rollouts): ``rewardhub serve --config rewards.yaml --group-size N`` and
``--reward.remote_url http://127.0.0.1:8000/get_reward``.
"""

from rewardhub.trainers.openrlhf import RewardFunc

reward_func = RewardFunc()  # reads $REWARDHUB_CONFIG now; group rewards need their params.group_size
