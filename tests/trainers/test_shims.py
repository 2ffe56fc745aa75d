"""The OpenRLHF reward file and the verl compute_score shims, called the way those frameworks call them.

tests/test_frameworks_*.py drive the same files with the frameworks' own released code; these
tests pin the shims' values and errors directly.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import math
import threading
from pathlib import Path

import pytest
import torch
from paths import EXAMPLES
from serving import COMPOSED, ensure_registered, free_port, running_server

import rewardhub
from rewardhub.trainers.errors import RewardServerError, ShimConfigError
from rewardhub.trainers.server import create_app
from rewardhub.trainers.verl import compute_score, compute_score_async

VOTE = {"rewards": [{"name": "majority_vote", "alias": "vote", "params": {"group_size": 3, "equivalence": "string"}}]}


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


def write(tmp_path: Path, config, name: str = "rewards.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return path


@pytest.fixture
def config_path(tmp_path, monkeypatch) -> Path:
    path = write(tmp_path, COMPOSED)
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
    # "It is 7.": contains 1, length 8/20, even length -> th_sometimes abstains, counted in the total at its
    # group's floor (0.0: never above a failure); "It is 8": 0, 7/20, odd -> 0.5
    expected = [1.0 + 0.5 * 8 / 20, 0.5 * 7 / 20 + 0.25 * 0.5]
    assert out["rewards"].tolist() == pytest.approx(expected)
    assert out["scores"].tolist() == pytest.approx([e / 1.75 for e in expected])
    assert out["extra_logs"]["th_contains"].tolist() == [1.0, 0.0]
    sometimes = out["extra_logs"]["th_sometimes"].tolist()
    assert math.isnan(sometimes[0]) and sometimes[1] == 0.5  # an abstention is not a 0.0
    assert out["extra_logs"]["th_sometimes/abstained"].tolist() == [1.0, 0.0]
    assert out["extra_logs"]["abstained"].tolist() == [0.0, 0.0]
    out = reward_func(["Q: 1+1? A: 2"], ["Q: 1+1? A:"], ["2"], metas=None)  # newer OpenRLHF may pass more
    assert out["extra_logs"]["th_contains"].tolist() == [1.0]


@pytest.mark.parametrize(("config", "error"), [
    (None, "REWARDHUB_CONFIG"),
    ({"rewards": [{"name": "no_such_reward"}]}, "no_such_reward"),
    ({"rewards": [{"name": "majority_vote"}]}, "set params.group_size"),
])
def test_openrlhf_reward_file_fails_on_import(tmp_path, monkeypatch, config, error):
    """OpenRLHF logs a failing reward call at INFO level and trains on None: the file must not load."""
    if config is None:
        monkeypatch.delenv("REWARDHUB_CONFIG", raising=False)
    else:
        monkeypatch.setenv("REWARDHUB_CONFIG", str(write(tmp_path, config)))
    with pytest.raises(rewardhub.RewardhubError, match=error):
        _load_file(EXAMPLES / "openrlhf_reward.py", "reward_func")


def test_openrlhf_reward_func_assembles_groups_across_threads(tmp_path, monkeypatch):
    """OpenRLHF runs reward_func in a thread per sample (asyncio.to_thread): three threads, one prompt."""
    monkeypatch.setenv("REWARDHUB_CONFIG", str(write(tmp_path, VOTE)))
    reward_func = _load_file(EXAMPLES / "openrlhf_reward.py", "reward_func")
    results = {}

    def call(answer: str) -> None:
        results[answer] = reward_func([f"Q: 2+2? A: {answer}"], ["Q: 2+2? A:"], [""])

    threads = [threading.Thread(target=call, args=(a,)) for a in ("4", "five", "4 ")]  # "four" would vote 4
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert {a: r["extra_logs"]["vote"].item() for a, r in results.items()} == {"4": 1.0, "five": 0.0, "4 ": 1.0}


def test_verl_compute_score_single(config_path, monkeypatch):
    monkeypatch.delenv("REWARDHUB_CONFIG")
    fn = functools.partial(_load_file(EXAMPLES / "verl_reward.py", "compute_score"), rewardhub_config=str(config_path))
    result = fn(data_source="gsm8k", solution_str="so it is 42", ground_truth="42", extra_info={"index": 3})
    assert result["score"] == pytest.approx(1.0 + 0.5 * 11 / 20 + 0.25 * 0.5)
    assert result["th_contains"] == 1.0
    assert result["length"] == pytest.approx(11 / 20)
    assert result["th_sometimes"] == 0.5 and result["abstained"] == 0.0
    assert list(result)[-1] == "score"


def test_verl_abstentions_are_numbers_marked_abstained_and_a_fully_abstained_sample_is_flagged(tmp_path):
    """verl casts every component with float() (dynamic sampling): an abstention is abstain_value, marked."""
    path = write(tmp_path, ["th_sometimes"], "only_sometimes.json")
    result = compute_score("d", "ab", "x", rewardhub_config=str(path), abstain_value=-1.0)
    assert result == {"th_sometimes": -1.0, "th_sometimes/abstained": 1.0, "th_sometimes/verdict": 0.0,
                      "abstained": 1.0, "score": -1.0}
    result = asyncio.run(compute_score_async("d", "ab", "x", rewardhub_config=str(path)))
    assert result["th_sometimes"] == 0.0 and result["th_sometimes/abstained"] == 1.0
    assert result["abstained"] == 1.0 and result["score"] == 0.0


def test_verl_async_assembles_groups_by_extra_info(tmp_path):
    path = write(tmp_path, VOTE)

    async def main():
        calls = [compute_score_async("math", f"the answer is {a}", "4", {"split": "train", "index": i},
                                     rewardhub_config=str(path)) for i, a in [(0, 4), (1, 7), (0, 4), (1, 7), (0, 5),
                                                                              (1, 7)]]
        return await asyncio.gather(*calls)

    assert [r["vote"] for r in asyncio.run(main())] == [1.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def test_verl_group_rewards_need_a_group_key(tmp_path):
    with pytest.raises(ShimConfigError, match="extra_info has neither 'prompt' nor any of"):
        compute_score("math", "4", "4", {"question": "2+2"}, rewardhub_config=str(write(tmp_path, VOTE)))


def test_verl_rewardhub_url_scores_at_the_server(tmp_path):
    from rewardhub import Batch
    from rewardhub.trainers.client import score_remote

    with running_server(create_app(rewardhub.load(COMPOSED))) as url:
        result = asyncio.run(compute_score_async("gsm8k", "so it is 42", "42", {"index": 0}, rewardhub_url=url))
        remote = asyncio.run(score_remote(url, Batch(["p"], ["ab"], {"solution": ["7"]}), None))
    assert remote["th_sometimes"].scores[0].outcome == "abstain"  # outcomes cross the HTTP hop
    assert remote["th_contains"].scores[0].outcome == "ok" and remote["th_contains"].values == [0.0]
    assert result["th_contains"] == 1.0 and result["score"] == pytest.approx(1.0 + 0.5 * 11 / 20 + 0.25 * 0.5)
    with pytest.raises(RewardServerError, match="rewardhub server http://127.0.0.1"):
        asyncio.run(compute_score_async("gsm8k", "x", "42", rewardhub_url=f"http://127.0.0.1:{free_port()}"))
