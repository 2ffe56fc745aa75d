"""rewardhub as slime's custom reward function (``--custom-rm-path``).

slime is not on PyPI. Its contract (github THUDM/slime: ``slime/rollout/rm_hub/__init__.py``) is what these tests
call: ``load_function`` imports the dotted path, ``async_rm`` awaits ``fn(args, sample)`` per response (slime's
rollout gathers them concurrently), and with ``--group-rm`` ``batched_async_rm`` awaits ``fn(args, samples)``;
``Sample`` below has the fields of slime's ``slime/utils/types.py`` that a reward function reads.
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from serving import ensure_registered

CONFIG = {"rewards": [
    {"name": "exact_match", "alias": "answer"},
    {"name": "format_regex", "alias": "format", "weight": 0.5, "params": {"pattern": "<answer>.*</answer>"}},
]}
VOTE = {"rewards": [{"name": "majority_vote", "alias": "vote"}]}


@dataclass
class Sample:
    prompt: str | list[dict[str, str]] = ""
    response: str = ""
    label: str | None = None
    metadata: dict = field(default_factory=dict)
    group_index: int | None = None
    index: int | None = None


def load_function(path: str):
    """slime's ``slime.utils.misc.load_function``: a dotted path, the last part the attribute."""
    module_path, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module_path), attr)


def args(**values):
    return SimpleNamespace(**{"custom_rm_path": None, "group_rm": False, "n_samples_per_prompt": None, **values})


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


def test_one_response_at_a_time_gives_the_weighted_total():
    fn = load_function("rewardhub.trainers.hubs.slime.reward")
    samples = [Sample("2+2?", "<answer>4</answer>", "4"), Sample("2+2?", "it is 5", "4"),
               Sample([{"role": "user", "content": "2+3?"}], "<answer>5</answer>", "5")]

    async def rollout():
        return await asyncio.gather(*(fn(args(rewardhub_config=CONFIG), s) for s in samples))

    assert asyncio.run(rollout()) == [1.5, 0.0, 1.5]


def test_details_give_each_reward_for_reward_key_score():
    fn = load_function("rewardhub.trainers.hubs.slime.reward_details")
    result = asyncio.run(fn(args(rewardhub_config=CONFIG), Sample("q", "<answer>4</answer>", None)))
    assert result["score"] == 0.5 and result["format"] == 1.0
    assert result["answer"] == 0.0 and result["answer/abstained"] == 1.0  # no label: exact_match cannot score


def test_metadata_keys_are_columns():
    fn = load_function("rewardhub.trainers.hubs.slime.reward")
    config = {"rewards": [{"name": "exact_match", "params": {"column": "gold"}}]}
    assert asyncio.run(fn(args(rewardhub_config=config), Sample("q", "<answer>7</answer>", None, {"gold": "7"}))) == 1.0


def test_group_rm_scores_a_whole_group_at_once():
    fn = load_function("rewardhub.trainers.hubs.slime.group_reward")
    group = [Sample("q", f"<answer>{a}</answer>", None, group_index=3, index=i) for i, a in enumerate("4454")]
    assert asyncio.run(fn(args(rewardhub_config=VOTE, group_rm=True), group)) == [1.0, 1.0, 0.0, 1.0]


def test_single_calls_with_a_group_reward_meet_their_group():
    fn = load_function("rewardhub.trainers.hubs.slime.reward")
    samples = [Sample("q", f"<answer>{a}</answer>", None, group_index=g, index=i)
               for g, answers in enumerate(["4454", "7787"]) for i, a in enumerate(answers)]

    async def rollout():  # slime gathers a batch's reward calls: each waits for the rest of its group
        return await asyncio.gather(*(fn(args(rewardhub_config=VOTE, n_samples_per_prompt=4), s) for s in samples))

    assert asyncio.run(rollout()) == [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def test_the_config_comes_from_the_environment(monkeypatch, tmp_path):
    import json

    path = tmp_path / "rewards.json"
    path.write_text(json.dumps(CONFIG))
    monkeypatch.setenv("REWARDHUB_CONFIG", str(path))
    fn = load_function("rewardhub.trainers.hubs.slime.reward")
    assert asyncio.run(fn(args(), Sample("q", "<answer>4</answer>", "4"))) == 1.5
