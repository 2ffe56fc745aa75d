"""verl 0.9.1's own code calling rewardhub's shim: its config, its reward-function loader, its reward loop.

What runs is verl's released source (see tests/frameworks.py): the Hydra config ``main_ppo`` composes
from verl/trainer/config/ppo_trainer.yaml; ``load_reward_manager`` / ``get_custom_reward_fn`` from
verl/trainer/ppo/reward.py; the reward-manager registry, ``RewardManagerBase`` and
``NaiveRewardManager`` from verl/experimental/reward_loop/reward_manager/; ``RewardLoopWorker``'s
``compute_score_batch`` from verl/experimental/reward_loop/reward_loop.py; ``process_validation_metrics``
from verl/trainer/ppo/metric_utils.py. Hydra runs in a child process (its ANTLR 4.9 would clash
with math-verify's in this one; see tests/frameworks.py) and the composed config comes back as an
omegaconf DictConfig. ``DataProto`` (verl/protocol.py) imports ray at its top, so
``Rows`` below stands in for it with the only operations those functions use: ``len(data)``,
``data[i:j]`` and ``data[i]`` -> an item with ``.batch`` tensors and ``.non_tensor_batch`` values.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import multiprocessing
import os
import random
import sys
import threading
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import cast

import numpy as np
import pytest
import torch
from frameworks import (
    ComposeError,
    hydra_compose,
    package_without_init,
    release,
    released_definitions,
    released_module,
)
from paths import EXAMPLES
from serving import COMPOSED, VOTE, ensure_registered, running_server

import rewardhub
from rewardhub.trainers.server import create_app

EXAMPLE = EXAMPLES / "verl_reward.py"


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


@pytest.fixture(scope="module", params=["pinned", "newest"])
def verl_root(request) -> Path:
    root = release("verl", request.param)
    sys.path.append(str(root))  # for omegaconf, installed beside verl
    yield root / "verl"
    sys.path.remove(str(root))


@pytest.fixture(scope="module")
def verl(verl_root):
    """verl's released functions, loaded without verl/__init__.py (it imports DataProto, hence ray)."""
    try:
        package_without_init("verl", verl_root)
        package_without_init("verl.utils", verl_root / "utils")
        import_utils = released_module("verl.utils.import_utils", verl_root / "utils" / "import_utils.py")
        reward_score = released_module("verl.utils.reward_score", verl_root / "utils" / "reward_score" / "__init__.py",
                                       package=True)
        manager_dir = verl_root / "experimental" / "reward_loop" / "reward_manager"
        registry = released_definitions(manager_dir / "registry.py", ["REWARD_MANAGER", "register",
                                                                      "get_reward_manager_cls"], {"Callable": Callable})
        loop = released_definitions(verl_root / "utils" / "ray_utils.py", ["get_event_loop"], {"asyncio": asyncio})
        base = released_definitions(manager_dir / "base.py", ["logger", "RewardManagerBase"], {
            "ABC": ABC, "abstractmethod": abstractmethod, "torch": torch, "logging": logging, "os": os,
            "get_event_loop": loop.get_event_loop})
        naive = released_definitions(manager_dir / "naive.py", ["NaiveRewardManager"], {
            "inspect": inspect, "register": registry.register, "RewardManagerBase": base.RewardManagerBase,
            "default_compute_score": reward_score.default_compute_score})
        managers = ModuleType("verl.experimental.reward_loop.reward_manager")
        managers.__dict__.update(register=registry.register, get_reward_manager_cls=registry.get_reward_manager_cls,
                                 NaiveRewardManager=naive.NaiveRewardManager)
        sys.modules[managers.__name__] = managers
        reward = released_definitions(verl_root / "trainer" / "ppo" / "reward.py", [
            "_call_with_kwargs", "_call_with_kwargs_async", "get_custom_reward_fn", "resolve_reward_manager_cls",
            "load_reward_manager"], {"inspect": inspect, "multiprocessing": multiprocessing, "partial": partial,
                                     "cast": cast, "get_default_compute_score": reward_score.get_default_compute_score})
        worker = released_definitions(verl_root / "experimental" / "reward_loop" / "reward_loop.py",
                                      ["logger", "RewardLoopWorker"], {"asyncio": asyncio, "logging": logging, "os": os})
        metrics = released_definitions(verl_root / "trainer" / "ppo" / "metric_utils.py", [
            "bootstrap_metric", "calc_maj_val", "process_validation_metrics"], {
            "np": np, "defaultdict": defaultdict, "partial": partial})
        yield SimpleNamespace(import_utils=import_utils, reward=reward, naive=naive.NaiveRewardManager,
                              worker=worker.RewardLoopWorker, metrics=metrics)
    finally:  # only verl's own modules: a test's imports of anything else stay as they are
        for name in [n for n in sys.modules if n == "verl" or n.startswith("verl.")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from rewardhub.testing.tiny_models import load_tokenizer, make_tokenizer

    return load_tokenizer(make_tokenizer(tmp_path_factory.mktemp("tok")))


def compose(verl_root: Path, overrides: list[str]):
    """The config verl's main_ppo gets: ``@hydra.main(config_path="config", config_name="ppo_trainer")``
    (verl/trainer/main_ppo.py), composed by Hydra from the released yaml files."""
    return hydra_compose(verl_root / "trainer" / "config", "ppo_trainer", overrides)


def documented(config_path: Path, name: str = "compute_score_async", **kwargs: str) -> list[str]:
    """The command-line overrides docs/trainers.md gives for verl."""
    overrides = [f"reward.custom_reward_function.path={EXAMPLE}", f"reward.custom_reward_function.name={name}",
                 f"+reward.custom_reward_function.reward_kwargs.rewardhub_config={config_path}"]
    return overrides + [f"+reward.custom_reward_function.reward_kwargs.{k}={v}" for k, v in kwargs.items()]


class Rows:
    """Stands in for verl's DataProto (verl/protocol.py imports ray): ``len``, slices, and items."""

    def __init__(self, batch: dict[str, torch.Tensor], non_tensor_batch: dict[str, np.ndarray]):
        self.batch, self.non_tensor_batch = batch, non_tensor_batch

    def __len__(self) -> int:
        return len(next(iter(self.batch.values())))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Rows({k: v[index] for k, v in self.batch.items()},
                        {k: v[index] for k, v in self.non_tensor_batch.items()})
        return SimpleNamespace(batch={k: v[index] for k, v in self.batch.items()},
                               non_tensor_batch={k: v[index] for k, v in self.non_tensor_batch.items()})


def rows(tokenizer, samples: list[dict]) -> Rows:
    """A batch as verl's agent loop leaves it: right-padded response ids and their attention mask."""
    width = 24
    responses, masks = [], []
    for sample in samples:
        ids = tokenizer(sample["response"], add_special_tokens=False)["input_ids"][:width]
        responses.append(ids + [tokenizer.pad_token_id] * (width - len(ids)))
        masks.append([1] * len(ids) + [0] * (width - len(ids)))
    extra = np.empty(len(samples), dtype=object)
    extra[:] = [dict(s.get("extra_info", {})) for s in samples]
    reward_model = np.empty(len(samples), dtype=object)
    reward_model[:] = [{"ground_truth": s["ground_truth"], "style": "rule"} for s in samples]
    return Rows({"responses": torch.tensor(responses), "attention_mask": torch.tensor(masks)},
                {"data_source": np.array([s.get("data_source", "openai/gsm8k") for s in samples], dtype=object),
                 "reward_model": reward_model, "extra_info": extra})


def write_config(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "rewards.json"
    path.write_text(json.dumps(config))
    return path


async def run_single(verl, config, tokenizer, data):
    manager = verl.reward.load_reward_manager(config, tokenizer)  # what RewardLoopWorker._init_reward_fn does
    return manager, await manager.run_single(data)


def test_documented_keys_reach_our_function(verl, verl_root, tokenizer, tmp_path):
    config = compose(verl_root, documented(write_config(tmp_path, COMPOSED)))
    fn = verl.reward.get_custom_reward_fn(config)
    assert fn.args[0].__name__ == "compute_score_async" and fn.args[0].__module__ == "rewardhub.trainers.verl"
    data = rows(tokenizer, [{"response": "the answer is 42", "ground_truth": "42", "extra_info": {"index": 3}}])
    manager, result = asyncio.run(run_single(verl, config, tokenizer, data))
    assert type(manager).__name__ == "NaiveRewardManager" and manager.is_async_reward_score
    # th_contains 1.0, length min(16/20, 1) * 0.5, th_sometimes abstains on the even length
    assert result["reward_score"] == pytest.approx(1.0 + 0.5 * 16 / 20)
    extras = result["reward_extra_info"]
    assert extras["th_contains"] == 1.0 and extras["abstained"] == 0.0
    assert extras["th_sometimes"] == 0.0 and extras["th_sometimes/abstained"] == 1.0  # never None: verl casts it


def test_the_sync_function_works_through_the_executor_too(verl, verl_root, tokenizer, tmp_path):
    config = compose(verl_root, documented(write_config(tmp_path, COMPOSED), name="compute_score"))
    data = rows(tokenizer, [{"response": "no 7 here", "ground_truth": "42"}])
    manager, result = asyncio.run(run_single(verl, config, tokenizer, data))
    assert not manager.is_async_reward_score
    assert result["reward_extra_info"]["th_contains"] == 0.0
    assert result["reward_score"] == pytest.approx(0.5 * 9 / 20 + 0.25 * 0.5)


def test_the_old_top_level_key_is_ignored_and_verl_scores_with_its_own_rules(verl, verl_root, tokenizer):
    """What our docs used to say: main_ppo never reads it, so gsm8k data gets verl's built-in scorer."""
    config = compose(verl_root, [f"custom_reward_function.path={EXAMPLE}", "custom_reward_function.name=compute_score"])
    assert config.custom_reward_function.path == str(EXAMPLE)  # accepted without complaint ...
    assert verl.reward.get_custom_reward_fn(config) is None  # ... and never used
    data = rows(tokenizer, [{"response": "so it is 42", "ground_truth": "42"}])
    _, result = asyncio.run(run_single(verl, config, tokenizer, data))
    assert result["reward_score"] == 0.0  # verl's gsm8k rule wants "#### 42"; rewardhub would give 1.0
    assert "th_contains" not in result["reward_extra_info"]


def test_the_batch_reward_manager_is_gone(verl, verl_root):
    config = compose(verl_root, ["reward.reward_manager.name=batch"])
    with pytest.raises(ValueError, match="Unknown reward manager: batch"):
        verl.reward.resolve_reward_manager_cls(config)


def test_reward_kwargs_need_the_plus_prefix(verl_root, tmp_path):
    plain = documented(write_config(tmp_path, COMPOSED))[:2] + ["reward.custom_reward_function.reward_kwargs.x=1"]
    with pytest.raises(ComposeError, match=r"(?s)Could not override .*use \+reward.custom_reward_function.reward_kwargs.x=1"):
        compose(verl_root, plain)


def vote_samples(prompts: int = 2, size: int = 4) -> list[dict]:
    """``prompts`` prompts x ``size`` responses: prompt p's majority answer is p + 1 (3 of 4 agree)."""
    samples = []
    for p in range(prompts):
        answers = [p + 1] * (size - 1) + [p + 7]
        samples += [{"response": f"answer {a}", "ground_truth": str(p + 1),
                     "extra_info": {"split": "train", "index": p}} for a in answers]
    random.Random(0).shuffle(samples)
    return samples


def check_votes(samples: list[dict], results: list[dict]) -> None:
    for sample, result in zip(samples, results, strict=True):
        majority = sample["response"] == f"answer {sample['ground_truth']}"
        extras = result["reward_extra_info"]
        assert extras["vote"] == (1.0 if majority else 0.0), (sample, extras)
        assert result["reward_score"] == (1.5 if majority else 0.0)  # vote + 0.5 * contains


def test_reward_loop_worker_gets_whole_groups_in_one_worker(verl, verl_root, tokenizer, tmp_path):
    """verl's RewardLoopWorker.compute_score_batch scores each response in its own task: the async
    function assembles each prompt's 4 responses (in shuffled order) before majority_vote sees them."""
    config = compose(verl_root, documented(write_config(tmp_path, VOTE)))
    samples = vote_samples()

    async def main():
        worker = object.__new__(verl.worker)  # __init__ would load a tokenizer from the model path
        worker.config = config
        worker.reward_manager = verl.reward.load_reward_manager(config, tokenizer)
        return await worker.compute_score_batch(rows(tokenizer, samples))

    check_votes(samples, asyncio.run(main()))


def test_reward_workers_meet_at_the_server(verl, verl_root, tokenizer, tmp_path):
    """verl sends each response to a random reward worker: two workers, each on its own thread and
    event loop, forward to one rewardhub server, where each prompt's group is assembled."""
    with running_server(create_app(rewardhub.load(VOTE), group_timeout=60)) as url:
        config = compose(verl_root, documented(write_config(tmp_path, VOTE), rewardhub_url=url))
        samples = vote_samples(prompts=3)
        results: dict[int, list] = {}

        def worker(part: int) -> None:
            async def main():
                loop_worker = object.__new__(verl.worker)
                loop_worker.config = config
                loop_worker.reward_manager = verl.reward.load_reward_manager(config, tokenizer)
                return await loop_worker.compute_score_batch(rows(tokenizer, samples[part::2]))

            results[part] = asyncio.run(main())

        threads = [threading.Thread(target=worker, args=(part,)) for part in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        check_votes(samples[0::2], results[0])
        check_votes(samples[1::2], results[1])


def test_abstentions_reach_verl_as_numbers_marked_abstained(verl, verl_root, tokenizer, tmp_path):
    """No value verl gets is None (its dynamic sampling casts each with float()): an abstention is
    ``abstain_value``, and ``<alias>/abstained`` says which, so its rate is a validation metric too."""
    config = compose(verl_root, documented(write_config(tmp_path, COMPOSED)))
    texts = ["x 42!", "x 41!", "y 42"]  # th_sometimes: odd lengths 0.5, the even "y 42" abstains
    data = rows(tokenizer, [{"response": t, "ground_truth": "42", "extra_info": {"index": 0}} for t in texts])

    async def main():
        worker = object.__new__(verl.worker)
        worker.config = config
        worker.reward_manager = verl.reward.load_reward_manager(config, tokenizer)
        return await worker.compute_score_batch(data)

    results = asyncio.run(main())
    infos = {k: [r["reward_extra_info"][k] for r in results] for k in results[0]["reward_extra_info"]}
    assert all(isinstance(v, float) for values in infos.values() for v in values)
    assert infos["th_sometimes"] == [0.5, 0.5, 0.0] and infos["th_sometimes/abstained"] == [0.0, 0.0, 1.0]
    assert infos["th_contains/verdict"] == [0.0, 0.0, 0.0]  # th_contains gives no verdict of its own
    metrics = verl.metrics.process_validation_metrics(["gsm8k"] * 3, ["u0"] * 3, infos)
    assert metrics["gsm8k"]["th_sometimes/abstained"]["mean@3"] == pytest.approx(1 / 3)
    assert metrics["gsm8k"]["th_contains"]["mean@3"] == pytest.approx(2 / 3)
