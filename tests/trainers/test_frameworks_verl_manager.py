# ruff: noqa: F811  (verl's fixtures are imported from test_frameworks_verl and taken as arguments)
"""rewardhub's verl reward manager, loaded and driven by verl 0.9.1's own code (see tests/frameworks.py):
its Hydra config with ``reward.reward_manager.source=importlib``, ``load_reward_manager`` /
``resolve_reward_manager_cls`` from verl/trainer/ppo/reward.py, and ``RewardLoopWorker``'s
``compute_score_batch`` (a worker's share of the batch, one ``run_single`` task per response) and
``compute_score`` (the streaming loop's one response per call).
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import threading
from types import ModuleType

import pytest
from serving import running_server
from test_frameworks_verl import compose, rows, tokenizer, verl, verl_root  # noqa: F401  (its fixtures)

import rewardhub
from rewardhub.trainers.server import create_app

CONFIG = {"rewards": [{"name": "majority_vote", "alias": "vote", "params": {"equivalence": "string"}},
                      {"name": "exact_match", "alias": "em", "weight": 0.5}]}
MANAGER = "rewardhub.trainers.verl_manager"


@pytest.fixture
def manager_module(verl):
    """verl's RewardManagerBase where our module imports it from (its package imports ray at the top)."""
    base = ModuleType("verl.experimental.reward_loop.reward_manager.base")
    base.RewardManagerBase = verl.naive.__mro__[1]
    sys.modules[base.__name__] = base
    yield
    sys.modules.pop(MANAGER, None)  # it subclassed this fixture's base: the next test imports it afresh


def overrides(config_path, **settings) -> list[str]:
    """The command-line overrides docs/scaling.md gives for the manager, with a rollout of 4 per prompt."""
    lines = ["reward.reward_manager.source=importlib", "reward.reward_manager.name=RewardhubRewardManager",
             f"reward.reward_manager.module.path=pkg://{MANAGER}",
             f"+reward.reward_manager.rewardhub.config={config_path}", "actor_rollout_ref.rollout.n=4"]
    return lines + [f"+reward.reward_manager.rewardhub.{k}={v}" for k, v in settings.items()]


def vote_samples(prompts: int = 3, size: int = 4, seed: int = 0) -> list[dict]:
    """Prompt p's majority answer is p (3 of 4 agree); responses of a prompt share verl's ``uid``."""
    samples = [{"response": f"The answer is {p if k else p + 50}", "ground_truth": str(p),
                "extra_info": {"split": "train", "index": p}, "uid": f"uid-{p}"}
               for p in range(prompts) for k in range(size)]
    random.Random(seed).shuffle(samples)
    return samples


def check(samples: list[dict], results: list[dict]) -> None:
    for sample, result in zip(samples, results, strict=True):
        majority = sample["response"] == f"The answer is {sample['ground_truth']}"
        extras = result["reward_extra_info"]
        assert extras["vote"] == (1.0 if majority else 0.0), (sample, extras)
        assert extras["em"] == (1.0 if majority else 0.0) and extras["abstained"] == 0.0
        assert result["reward_score"] == (1.5 if majority else 0.0)


def with_uids(tokenizer, samples):
    data = rows(tokenizer, samples)
    import numpy as np

    data.non_tensor_batch["uid"] = np.array([s["uid"] for s in samples], dtype=object)
    return data


def worker_for(verl, config, tokenizer):
    worker = object.__new__(verl.worker)  # __init__ would load a tokenizer from the model path
    worker.config = config
    worker.reward_manager = verl.reward.load_reward_manager(config, tokenizer)
    return worker


@pytest.fixture
def config_path(tmp_path):
    path = tmp_path / "rewards.json"
    path.write_text(json.dumps(CONFIG))
    return path


def test_verl_loads_it_through_importlib_and_each_batch_is_scored_whole_without_waiting(
        verl, verl_root, tokenizer, config_path, manager_module):
    config = compose(verl_root, overrides(config_path, group_timeout=600))
    cls = verl.reward.resolve_reward_manager_cls(config)
    assert cls.__name__ == "RewardhubRewardManager" and cls.__module__ == MANAGER
    samples = vote_samples()

    async def main():
        worker = worker_for(verl, config, tokenizer)
        assert worker.reward_manager.group_size == 4  # from actor_rollout_ref.rollout.n
        # Whole groups in the batch: scored on the spot (a wait for the 600 s group timeout would fail here).
        return await asyncio.wait_for(worker.compute_score_batch(with_uids(tokenizer, samples)), 60)

    check(samples, asyncio.run(main()))


def test_streamed_responses_one_per_call_are_assembled_into_groups(verl, verl_root, tokenizer, config_path,
                                                                    manager_module):
    """verl's streaming reward loop sends each response on its own, as it finishes generating."""
    config = compose(verl_root, overrides(config_path, group_timeout=60))
    samples = vote_samples()

    async def main():
        worker = worker_for(verl, config, tokenizer)
        data = with_uids(tokenizer, samples)
        tasks = []
        for i in range(len(samples)):
            tasks.append(asyncio.create_task(worker.compute_score(data[i:i + 1])))
            await asyncio.sleep(0.01)  # each call alone in its turn of the loop
        return await asyncio.gather(*tasks)

    check(samples, asyncio.run(main()))


def test_workers_with_split_groups_meet_at_the_server(verl, verl_root, tokenizer, config_path,
                                                      manager_module):
    """Two RewardLoopWorkers, each with half of every group (as compute_rm_score chunks a shuffled
    batch), send the fragments to one reward server, where the groups are completed."""
    with running_server(create_app(rewardhub.load(CONFIG), group_size=4, group_timeout=60)) as url:
        config = compose(verl_root, overrides(config_path, url=url))
        samples = sorted(vote_samples(), key=lambda s: s["uid"])
        results: dict[int, list] = {}

        def worker(part: int) -> None:
            chunk = samples[part::2]
            results[part] = asyncio.run(worker_for(verl, config, tokenizer).compute_score_batch(
                with_uids(tokenizer, chunk)))

        threads = [threading.Thread(target=worker, args=(part,)) for part in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        check(samples[0::2], results[0])
        check(samples[1::2], results[1])


def test_cpu_heavy_scoring_on_a_ray_actor_pool(verl, verl_root, tokenizer, config_path, manager_module):
    pytest.importorskip("ray")
    from ray_cluster import local_ray

    with local_ray(num_cpus=2):
        config = compose(verl_root, overrides(config_path, actors=2))
        samples = vote_samples(prompts=4)

        async def main():
            worker = worker_for(verl, config, tokenizer)
            assert len(worker.reward_manager.actors.actors) == 2
            try:
                return await worker.compute_score_batch(with_uids(tokenizer, samples))
            finally:
                worker.reward_manager.actors.close()

        check(samples, asyncio.run(main()))


def test_a_misspelt_setting_is_an_error_naming_the_known_ones(verl, verl_root, tokenizer, config_path,
                                                               manager_module):
    config = compose(verl_root, overrides(config_path, group_sise=4))
    with pytest.raises(rewardhub.ConfigError, match="group_sise.*known"):
        verl.reward.load_reward_manager(config, tokenizer)
