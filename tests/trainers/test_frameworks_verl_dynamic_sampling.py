"""verl 0.9.1's dynamic sampling (DAPO ``filter_groups``) on rewardhub's output: every value a number, the raw
outcome of each reward to filter on, and signals that stay flat within a float tolerance.

What runs is verl's released source (see tests/frameworks.py): its reward loop (``RewardLoopWorker
.compute_score_batch`` over the naive reward manager) calling ``compute_score_async`` with ``group_size`` (groups
assembled in this process), and ``ReplayBuffer._dapo_filtered_keys`` from verl/trainer/ppo/v1/replay_buffer.py,
the filter itself: ``float()`` of each trajectory's ``reward_extra_info[metric]``, and a group is dropped when
``np.std`` of its values is exactly 0. That module imports TransferQueue (verl's distributed key-value store) at
its top; ``Store`` below stands in for it with the one call the filter makes, ``kv_batch_get``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, defaultdict
from types import SimpleNamespace

import numpy as np
import pytest
from frameworks import released_definitions
from serving import ensure_registered
from test_frameworks_verl import compose, documented, rows, tokenizer, verl, verl_root, write_config  # noqa: F401

import rewardhub

CONFIG = {"rewards": [
    {"name": "th_contains", "alias": "correct", "weight": 1.0},
    {"name": "th_async_len", "alias": "length", "weight": 0.1},
    {"name": "th_noisy", "alias": "judge", "weight": 0.5},
]}


@rewardhub.sample_reward(name="th_noisy")
def th_noisy(text, noise=0.0):
    """A judge-like score: 0.7 plus the row's ``noise`` (what float arithmetic leaves in a continuous score)."""
    return 0.7 + noise


def samples() -> list[dict]:
    """Three prompts x 4: all wrong at different lengths; right and wrong; all right with float noise in the judge."""
    groups = [
        [("no", 0.0), ("no idea", 0.0), ("not sure at all", 0.0), ("x", 0.0)],
        [("42", 0.0), ("41", 0.0), ("42!", 0.0), ("nope", 0.0)],
        [("it is 42", 0.0), ("it is 42", 1e-12), ("it is 42", -1e-12), ("it is 42", 2e-12)],
    ]
    return [{"response": text, "ground_truth": "42", "extra_info": {"split": "train", "index": p, "noise": noise}}
            for p, group in enumerate(groups) for text, noise in group]


class Store:
    """Stands in for TransferQueue: ``kv_batch_get`` of the trajectories' ``extra_fields``, as verl stores them."""

    def __init__(self, extra_fields: dict[str, dict]):
        self.extra_fields = extra_fields

    def kv_batch_get(self, keys, partition_id, select_fields):
        assert select_fields == ["extra_fields"]
        return {"extra_fields": [self.extra_fields[key] for key in keys]}


@pytest.fixture(scope="module")
def replay_buffer(verl_root):  # noqa: F811
    """verl's ReplayBuffer class, compiled from its released file (its decorators made inert)."""
    inert = SimpleNamespace(annotate_tq=lambda **options: (lambda method: method))
    return released_definitions(verl_root / "trainer" / "ppo" / "v1" / "replay_buffer.py",
                                ["ReplayBuffer", "FILTER_GROUPS_REWARD_METRIC"],
                                {"np": np, "Counter": Counter, "defaultdict": defaultdict, "logger": logging.getLogger(),
                                 "SkipManager": inert})


@pytest.fixture
def results(verl, verl_root, tokenizer, tmp_path, clean_registry):  # noqa: F811
    ensure_registered()
    clean_registry.add(th_noisy, source="test")
    return reward_loop(verl, compose(verl_root, documented(write_config(tmp_path, CONFIG), group_size=4)), tokenizer)


def reward_loop(verl, config, tokenizer):  # noqa: F811
    """verl's ``RewardLoopWorker.compute_score_batch`` on the samples (its __init__ would load a tokenizer)."""

    async def main():
        worker = object.__new__(verl.worker)
        worker.config = config
        worker.reward_manager = verl.reward.load_reward_manager(config, tokenizer)
        return await worker.compute_score_batch(rows(tokenizer, samples()))

    return asyncio.run(main())


def filtered_groups(replay_buffer, results: list[dict], metric: str) -> set[str]:
    """The prompt groups verl's DAPO filter drops when ``algorithm.filter_groups.metric`` is ``metric``."""
    keys = [f"{s['extra_info']['index']}_{i % 4}_0" for i, s in enumerate(samples())]
    namespace = replay_buffer.ReplayBuffer._dapo_filtered_keys.__globals__
    namespace["tq"] = Store({key: {"reward_extra_info": r["reward_extra_info"]} for key, r in zip(keys, results,
                                                                                                   strict=True)})
    buffer = object.__new__(replay_buffer.ReplayBuffer)
    buffer.filter_groups_metric = metric
    buffer.finished_keys = {"train": {"0", "1", "2"}}
    buffer.partitions = {"train": dict.fromkeys(keys, {})}
    buffer._dapo_classification_cache = defaultdict(dict)
    dropped, _ = buffer._dapo_filtered_keys("train")
    return dropped


def test_every_value_verl_reads_is_a_number(results):
    for result in results:
        assert all(type(value) is float and np.isfinite(value) for value in result["reward_extra_info"].values())


def test_filtering_on_the_shaped_total_keeps_a_group_that_is_all_wrong(replay_buffer, results):
    assert "0" not in filtered_groups(replay_buffer, results, "score")  # lengths differ: std > 0, kept
    assert filtered_groups(replay_buffer, results, "correct") == {"0", "2"}  # the raw outcome: all wrong, all right


def test_a_continuous_reward_with_float_noise_is_flat_only_within_the_tolerance(replay_buffer, results):
    assert "2" not in filtered_groups(replay_buffer, results, "judge")  # 0.7 +- 1e-12: verl's exact test keeps it
    assert filtered_groups(replay_buffer, results, "judge/signal") == {"0", "1", "2"}  # every judge group is flat
    assert filtered_groups(replay_buffer, results, "correct/signal") == {"0", "2"}
    flags = {s["extra_info"]["index"]: r["reward_extra_info"]["flat_group"] for s, r in zip(samples(), results,
                                                                                          strict=True)}
    assert flags == {0: 0.0, 1: 0.0, 2: 1.0}  # group 0's lengths still differ; group 2 has nothing to learn from


def test_a_tolerance_of_zero_is_verls_own_exact_test(verl, verl_root, tokenizer, tmp_path, replay_buffer,  # noqa: F811
                                                     clean_registry):
    ensure_registered()
    clean_registry.add(th_noisy, source="test")
    config = compose(verl_root, documented(write_config(tmp_path, CONFIG), group_size=4, flat_tolerance=0.0))
    exact = reward_loop(verl, config, tokenizer)
    assert filtered_groups(replay_buffer, exact, "judge/signal") == filtered_groups(replay_buffer, exact, "judge")
