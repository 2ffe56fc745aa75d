"""A gate saves work: the gated reward scores only the rows that pass it (a gated judge sends no
request for the others), except where it needs whole groups or shares its verdicts."""

from __future__ import annotations

import asyncio

import pytest
from judge_server import (  # noqa: F401
    KEY_ENV,
    SECRET,
    judge_fixture,
    running_server_fixture,
    server_fixture,
)

import rewardhub


def _judge_config(server, passing_threshold: float = 1.0):
    return [
        {"name": "format_regex", "alias": "fmt", "weight": 0.0, "params": {"pattern": "^<answer>.*"}},
        {"name": "judge", "weight": 1.0, "gate": {"reward": "fmt", "threshold": passing_threshold},
         "params": {"base_url": server.base_url, "model": "judge-test", "api_key_env": KEY_ENV,
                    "backoff": 0.01, "max_backoff": 0.05}},
    ]


def _completions(passing: int, total: int = 20) -> list[str]:
    return [("<answer>" if i < passing else "no tags ") + f"row {i} [[{i % 10}]]" for i in range(total)]


@pytest.mark.parametrize("passing", [0, 5, 20])
def test_a_gated_judge_sends_a_request_only_for_rows_that_pass(server, monkeypatch, passing):
    monkeypatch.setenv(KEY_ENV, SECRET)
    rewards = rewardhub.load(_judge_config(server))
    completions = _completions(passing)
    result = rewards.evaluate([f"q{i}" for i in range(20)], completions)["judge"]
    assert server.requests == passing
    assert sorted(b["messages"][-1]["content"].split("row ")[1].split(" ")[0] for b in server.bodies) == \
        sorted(str(i) for i in range(passing))
    assert result.values == [(i % 10) / 10 for i in range(passing)] + [0.0] * (20 - passing)
    assert result.outcomes == ["ok"] * 20
    assert all(r.startswith("gated: fmt scored 0 < 1") for r in result.reasons[passing:])
    rewards["judge"].inner.close()


def test_the_trl_async_path_saves_the_requests_too(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    rewards = rewardhub.load(_judge_config(server))
    gated = rewards.reward_funcs[1]
    assert rewardhub._reward.is_async_reward(gated)
    values = asyncio.run(gated(prompts=["q"] * 4, completions=_completions(1, 4)))
    assert values == [0.0, 0.0, 0.0, 0.0] and server.requests == 1  # row 0's scripted answer is 0
    rewards["judge"].inner.close()


@pytest.fixture
def counting(monkeypatch):
    """A registered sync reward that records how many rows each call scored."""
    calls: list[int] = []

    def rows_seen(completions, **kwargs):
        calls.append(len(completions))
        return [1.0] * len(completions)

    rewardhub.register(rows_seen)
    yield calls
    del rewardhub.registry._specs["rows_seen"]


def test_a_gated_sync_reward_scores_only_the_passing_rows(counting):
    rewards = rewardhub.load([{"name": "rows_seen", "gate": {"reward": "format_regex", "threshold": 1.0}}])
    rows = [{"prompt": "q", "completion": c} for c in ["<think>a</think><answer>1</answer>", "x", "y"]]
    scored = rewards.score(rows)
    assert counting == [1]
    assert [r["rewards"]["rows_seen"] for r in scored] == [1.0, 0.0, 0.0]


def test_a_gated_reward_whose_verdicts_others_reuse_gives_them_the_gated_verdicts(counting):
    rewards = rewardhub.load([
        {"name": "rows_seen", "alias": "seen", "gate": {"reward": "format_regex", "threshold": 1.0}},
        {"name": "length_penalty", "params": {"mode": "cosine", "correctness": "seen"}},
    ])
    scored = rewards.score([{"prompt": "q", "completion": c} for c in ["<think>a</think><answer>1</answer>", "x", "y"]])
    assert counting == [1]  # only the row through the gate is scored, once for both rewards
    # length_penalty reads the verdict the set paid: the gated-out rows are wrong, whatever rows_seen says.
    assert scored[0]["reasons"]["length_penalty"].startswith("correct")
    assert scored[1]["reasons"]["length_penalty"].startswith("wrong")


def test_a_gated_group_reward_sees_its_whole_group():
    rewards = rewardhub.load([{"name": "majority_vote", "params": {"equivalence": "string"},
                               "gate": {"reward": "tag_count", "threshold": 0.5}}])
    completions = [r"<think>a</think> \boxed{3}", r"\boxed{4}", r"\boxed{4}", r"\boxed{4}"]
    scored = rewards.evaluate(["q"] * 4, completions)["majority_vote"]
    # Alone, the one gated-in completion would have nobody to vote with (it would abstain); in its
    # whole group it is the minority.
    assert scored.values == [0.0, 0.0, 0.0, 0.0]
    assert scored.reasons[0].startswith("minority answer 3 (1/4 votes")
    assert all(r.startswith("gated: tag_count") for r in scored.reasons[1:])
