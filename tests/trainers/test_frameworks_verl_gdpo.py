"""verl 0.9.1's own GDPO estimator on rewardhub's output (``reward_kwargs.gdpo``): no NaN, and the right values.

What runs is verl's released source (see tests/frameworks.py): the Hydra config ``main_ppo`` composes with
the overrides ``gdpo_overrides`` gives, verl's reward loop (``RewardLoopWorker.compute_score_batch`` over the
naive reward manager) calling ``compute_score_async``, and ``compute_advantage`` from
verl/trainer/ppo/ray_trainer.py dispatching to ``compute_gdpo_outcome_advantage`` in
verl/trainer/ppo/core_algos.py, which normalises each ``gdpo_reward_keys`` component within its group
(``compute_grpo_outcome_advantage``), weights, sums and whitens (``masked_whiten`` from
verl/utils/torch_functional.py). Those functions are compiled from the released files; their modules
import ray, tensordict and Megatron configs at the top.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from enum import Enum
from typing import Any, Optional

import numpy as np
import pytest
import torch
from frameworks import released_definitions
from serving import COMPOSED, ensure_registered
from test_frameworks_verl import compose, documented, rows, tokenizer, verl, verl_root, write_config  # noqa: F401

from rewardhub.trainers.verl import gdpo_overrides

CONFIG = {"rewards": [*COMPOSED["rewards"], {"name": "th_contains", "alias": "audit", "weight": 0.0}]}
PAID = {"th_contains": 1.0, "length": 0.5, "th_sometimes": 0.25}  # th_sometimes abstains on even lengths
EPSILON = 1e-6  # compute_grpo_outcome_advantage's default


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


@pytest.fixture(scope="module")
def estimators(verl_root):  # noqa: F811
    """verl's advantage code, compiled from its released files."""
    functional = released_definitions(verl_root / "utils" / "torch_functional.py",
                                      ["masked_sum", "masked_mean", "masked_var", "masked_whiten"], {"torch": torch})
    core = released_definitions(verl_root / "trainer" / "ppo" / "core_algos.py", [
        "AdvantageEstimator", "ADV_ESTIMATOR_REGISTRY", "register_adv_est", "get_adv_estimator_fn",
        "compute_grpo_outcome_advantage", "compute_gdpo_outcome_advantage"], {
        "Enum": Enum, "np": np, "torch": torch, "defaultdict": defaultdict, "Optional": Optional, "Any": Any,
        "Callable": Callable, "verl_F": functional})
    trainer = released_definitions(verl_root / "trainer" / "ppo" / "ray_trainer.py", ["compute_advantage"], {
        "AdvantageEstimator": core.AdvantageEstimator, "core_algos": core, "torch": torch, "np": np})
    return core, trainer


def samples() -> list[dict]:
    """3 prompts x 4 responses: answers right or wrong, of odd and even lengths (th_sometimes abstains on even)."""
    texts = [["answer 42", "answer 42!", "no idea", "it is 7"],        # 9, 10, 7, 7 chars
             ["answer 42 again", "nope", "42", "still 42 yes"],         # 15, 4, 2, 12: one odd
             ["ab", "abcd", "42 42", "forty-two"]]                      # all but one even
    return [{"response": text, "ground_truth": "42", "extra_info": {"split": "train", "index": p}}
            for p, group in enumerate(texts) for text in group]


def score(verl, config, tokenizer):  # noqa: F811
    async def main():
        worker = object.__new__(verl.worker)  # __init__ would load a tokenizer from the model path
        worker.config = config
        worker.reward_manager = verl.reward.load_reward_manager(config, tokenizer)
        return await worker.compute_score_batch(rows(tokenizer, samples()))

    return asyncio.run(main())


def data_for_advantage(results: list[dict], response_width: int = 6):
    """The batch compute_advantage reads: the reward loop's extra infos as non_tensor_batch (built as
    verl/experimental/reward_loop/reward_loop.py does: ``np.array([info[key] for info in infos])``), ``uid``
    per prompt, and the score on each response's last token."""
    infos = [r["reward_extra_info"] for r in results]
    non_tensor = {key: np.array([info[key] for info in infos]) for key in infos[0]}
    non_tensor["uid"] = np.array([str(s["extra_info"]["index"]) for s in samples()], dtype=object)
    n, prompt_width = len(results), 3
    lengths = torch.tensor([2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 2, 3])
    response_mask = (torch.arange(response_width)[None, :] < lengths[:, None]).float()
    token_scores = torch.zeros(n, response_width)
    token_scores[torch.arange(n), lengths - 1] = torch.tensor([r["reward_score"] for r in results])
    batch = {"prompts": torch.ones(n, prompt_width, dtype=torch.long), "response_mask": response_mask,
             "attention_mask": torch.cat([torch.ones(n, prompt_width), response_mask], dim=1).long(),
             "token_level_rewards": token_scores}
    return type("Data", (), {"batch": batch, "non_tensor_batch": non_tensor})(), response_mask


def test_gdpo_overrides_compose_and_name_the_paid_rewards(verl_root, tmp_path):  # noqa: F811
    overrides = gdpo_overrides(CONFIG)
    assert overrides == ["algorithm.adv_estimator=gdpo", "+algorithm.gdpo_reward_keys=[th_contains,length,th_sometimes]",
                         "+algorithm.gdpo_reward_weights=[1,0.5,0.25]",
                         "+reward.custom_reward_function.reward_kwargs.gdpo=true"]
    config = compose(verl_root, documented(write_config(tmp_path, CONFIG), group_size=4) + overrides)
    assert config.algorithm.adv_estimator == "gdpo"
    assert list(config.algorithm.gdpo_reward_keys) == list(PAID)
    assert list(config.algorithm.gdpo_reward_weights) == list(PAID.values())
    assert config.reward.custom_reward_function.reward_kwargs.gdpo is True


def test_verls_gdpo_on_rewardhubs_output_has_no_nan_and_the_right_values(verl, verl_root, tokenizer, tmp_path,  # noqa: F811
                                                                         estimators):
    core, trainer = estimators
    config = compose(verl_root, documented(write_config(tmp_path, CONFIG), group_size=4) + gdpo_overrides(CONFIG))
    results = score(verl, config, tokenizer)
    infos = [r["reward_extra_info"] for r in results]
    abstained = [info["th_sometimes/abstained"] for info in infos]
    assert abstained == [float(len(s["response"]) % 2 == 0) for s in samples()]
    assert all(isinstance(info[key], float) for info in infos for key in PAID)  # finite numbers, never None

    data, mask = data_for_advantage(results)
    advantages = trainer.compute_advantage(data, "gdpo", config=config.algorithm).batch["advantages"]
    assert torch.isfinite(advantages).all()

    # what verl computes, written out: each component normalised in its group over the filled values
    # (torch.std is Bessel-corrected), weighted, summed, then whitened over the response tokens
    groups = [list(range(4 * p, 4 * p + 4)) for p in range(3)]
    summed = np.zeros(12)
    for key, weight in PAID.items():
        x = np.array([info[key] for info in infos], dtype=np.float64)
        for group in groups:
            values = x[group]
            summed[group] += weight * (values - values.mean()) / (values.std(ddof=1) + EPSILON)
    tokens = mask.numpy().astype(bool)
    per_token = np.repeat(summed[:, None], tokens.shape[1], axis=1)[tokens]
    expected = (summed - per_token.mean()) / np.sqrt(per_token.var(ddof=1) + 1e-8)
    assert advantages[:, 0].numpy() == pytest.approx(expected, abs=1e-4)
    assert (advantages.numpy()[~tokens] == 0).all()


def test_an_abstention_never_gets_a_better_advantage_than_its_groups_worst_row(verl, verl_root, tokenizer,  # noqa: F811
                                                                               tmp_path, estimators):
    """The filled value is the group's floor (its lowest value present, at most a failure's 0.0), so verl's
    per-component normalisation ranks the abstaining response at or below the group's worst scored response
    for that component, never above it."""
    core, _ = estimators
    config = compose(verl_root, documented(write_config(tmp_path, CONFIG), group_size=4) + gdpo_overrides(CONFIG))
    infos = [r["reward_extra_info"] for r in score(verl, config, tokenizer)]
    scores = torch.zeros(12, 1)
    scores[:, 0] = torch.tensor([info["th_sometimes"] for info in infos])
    index = np.array([str(i // 4) for i in range(12)], dtype=object)
    normalised, _ = core.compute_grpo_outcome_advantage(scores, torch.ones(12, 1), index)
    filled = [i for i, info in enumerate(infos) if info["th_sometimes/abstained"]]
    assert filled
    for i in filled:
        group = range(4 * (i // 4), 4 * (i // 4) + 4)
        scored = [normalised[j, 0].item() for j in group if not infos[j]["th_sometimes/abstained"]]
        assert normalised[i, 0].item() <= min(scored) + 1e-6


def test_without_gdpo_mode_an_abstention_counts_as_abstain_value(verl, verl_root, tokenizer, tmp_path, estimators):  # noqa: F811
    """Without gdpo mode an abstention is ``abstain_value`` (never None, which verl reads as NaN): the advantages
    stay finite, but the abstaining response's component is a 0 in its group; gdpo mode's group-mean fill is not."""
    _, trainer = estimators
    overrides = [o for o in gdpo_overrides(CONFIG) if "reward_kwargs.gdpo" not in o]
    config = compose(verl_root, documented(write_config(tmp_path, CONFIG), group_size=4) + overrides)
    results = score(verl, config, tokenizer)
    infos = [r["reward_extra_info"] for r in results]
    abstaining = [i for i, info in enumerate(infos) if info["th_sometimes/abstained"]]
    assert abstaining and all(infos[i]["th_sometimes"] == 0.0 for i in abstaining)
    data, _ = data_for_advantage(results)
    advantages = trainer.compute_advantage(data, "gdpo", config=config.algorithm).batch["advantages"]
    assert torch.isfinite(advantages).all()


def test_gdpo_mode_needs_assembled_groups_and_fixed_weights(tmp_path):
    from rewardhub.trainers.errors import ShimConfigError
    from rewardhub.trainers.verl import compute_score

    with pytest.raises(ShimConfigError, match="gdpo: an abstaining component is filled with its prompt group's floor"):
        compute_score("s", "42", "42", {"index": 0}, rewardhub_config=CONFIG, gdpo=True)
    scheduled = {"rewards": [{"name": "th_contains", "weight": {"schedule": "linear", "start": 1, "end": 0,
                                                                  "steps": 10}}]}
    with pytest.raises(ShimConfigError, match="gdpo: verl's GDPO weights its components with the fixed"):
        compute_score("s", "42", "42", {"index": 0}, rewardhub_config=scheduled, gdpo=True, group_size=2)
