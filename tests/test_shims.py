"""The OpenRLHF reward file and the verl compute_score shims, called the way those frameworks call them."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from test_trainers_support import COMPOSED, ensure_registered

from rewardhub.trainers.errors import ShimConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


@pytest.fixture
def config_path(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "rewards.json"
    path.write_text(json.dumps(COMPOSED))
    monkeypatch.setenv("REWARDHUB_CONFIG", str(path))
    return path


def _load_file(path: Path, name: str):
    """What OpenRLHF and verl do with a reward file: import it by path, take one attribute."""
    spec = importlib.util.spec_from_file_location(f"custom_reward_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def test_openrlhf_reward_file(config_path):
    reward_func = _load_file(EXAMPLES / "openrlhf_reward.py", "reward_func")
    prompts = ["<|im_start|>user\nWhat is 2+5?<|im_end|>\n<|im_start|>assistant\n"] * 2
    responses = ["It is 7.", "It is 8"]
    out = reward_func([p + r for p, r in zip(prompts, responses, strict=True)], prompts, ["7", "7"])
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert isinstance(out["rewards"], torch.Tensor) and out["rewards"].shape == (2,)
    # "It is 7.": contains 1, length 8/20, even length -> th_sometimes abstains; "It is 8": 0, 7/20, odd -> 0.5
    expected = [1.0 + 0.5 * 8 / 20, 0.5 * 7 / 20 + 0.25 * 0.5]
    assert out["rewards"].tolist() == pytest.approx(expected)
    assert out["scores"].tolist() == pytest.approx([e / 1.75 for e in expected])
    assert out["extra_logs"]["th_contains"].tolist() == [1.0, 0.0]
    assert out["extra_logs"]["abstained"].tolist() == [0.0, 0.0]


def test_openrlhf_reward_file_defines_a_plain_function_ray_can_wrap(config_path):
    """OpenRLHF runs ``ray.remote(module.reward_func)``; Ray's ``_make_remote`` accepts only functions
    (``inspect.isfunction``) and classes, and raises TypeError for any other callable object."""
    reward_func = _load_file(EXAMPLES / "openrlhf_reward.py", "reward_func")
    assert inspect.isfunction(reward_func)
    assert list(inspect.signature(reward_func).parameters)[:3] == ["queries", "prompts", "labels"]
    out = reward_func(["Q: 1+1? A: 2"], ["Q: 1+1? A:"], ["2"], metas=None)  # newer OpenRLHF may pass more
    assert out["extra_logs"]["th_contains"].tolist() == [1.0]


def test_openrlhf_reward_file_without_a_config_says_how_to_set_one(monkeypatch):
    monkeypatch.delenv("REWARDHUB_CONFIG", raising=False)
    reward_func = _load_file(EXAMPLES / "openrlhf_reward.py", "reward_func")
    with pytest.raises(ShimConfigError, match="REWARDHUB_CONFIG"):
        reward_func(["q"], ["q"], ["a"])


def test_verl_compute_score_single(config_path, monkeypatch):
    monkeypatch.delenv("REWARDHUB_CONFIG")
    compute_score = _load_file(EXAMPLES / "verl_reward.py", "compute_score")
    # verl: partial(fn, **custom_reward_function.reward_kwargs), then called per sample by keyword
    fn = functools.partial(compute_score, rewardhub_config=str(config_path))
    result = fn(data_source="gsm8k", solution_str="so it is 42", ground_truth="42", extra_info={"index": 3})
    assert result["score"] == pytest.approx(1.0 + 0.5 * 11 / 20 + 0.25 * 0.5)
    assert result["th_contains"] == 1.0
    assert result["length"] == pytest.approx(11 / 20)
    assert result["th_sometimes"] == 0.5 and result["abstained"] == 0.0
    assert all(isinstance(v, float) for v in result.values())


def test_verl_compute_score_batch_with_numpy_object_arrays(config_path):
    compute_score_batch = _load_file(EXAMPLES / "verl_reward.py", "compute_score_batch")
    results = compute_score_batch(  # verl's batch manager passes non_tensor_batch numpy arrays
        data_sources=np.array(["a", "b", "c"], dtype=object),
        solution_strs=np.array(["x = 5", "nothing", ""], dtype=object),
        ground_truths=np.array(["5", "5", None], dtype=object),
        extra_infos=np.array([{"prompt": "p1"}, {"prompt": "p2"}, None], dtype=object),
    )
    assert [r["th_contains"] for r in results] == [1.0, 0.0, 0.0]
    assert results[0]["score"] == pytest.approx(1.0 + 0.5 * 5 / 20 + 0.25 * 0.5)
    # "": no solution (th_contains abstains), length 0, even (abstains): the score is length's 0.0
    assert results[2]["score"] == 0.0 and results[2]["abstained"] == 0.0


def test_verl_all_abstaining_sample_is_flagged(tmp_path):
    from rewardhub.trainers.verl import compute_score

    path = tmp_path / "only_sometimes.json"
    path.write_text(json.dumps(["th_sometimes"]))
    result = compute_score("d", "ab", "x", rewardhub_config=str(path), abstain_value=-1.0)
    assert result == {"th_sometimes": -1.0, "abstained": 1.0, "score": -1.0}
