"""A rewardhub set as an ART (openpipe-art 0.5.18) reward: ``score_group`` as ``gather_trajectory_groups``'s
``after_each``, on ART's own Trajectory / TrajectoryGroup (the model's turns as openai ``Choice`` objects, as ART
records them), with the judge's RULER-style ``ruler`` mode on the scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import re

import hubs
import pytest
from judge_server import KEY_ENV, SECRET, running_server_fixture, server_fixture  # noqa: F401

TRAJECTORY = re.compile(r'<trajectory id="(\d+)">(.*?)</trajectory>', re.S)


@pytest.fixture(scope="module")
def art():
    """ART itself; importing it patches transformers' mask preparation process-wide (art/__init__.py), which
    breaks every later model in this test process: the original is put back when the module's tests end."""
    from transformers import masking_utils

    original = masking_utils._preprocess_mask_arguments
    hubs.art()
    import art

    yield art
    masking_utils._preprocess_mask_arguments = original


def choice(content: str, tool_call: dict | None = None):
    from openai.types.chat.chat_completion import Choice

    message = {"role": "assistant", "content": content}
    if tool_call:
        message["tool_calls"] = [tool_call]
    return Choice.model_validate({"index": 0, "finish_reason": "stop", "message": message})


async def rollout(art, answer: str, searched: bool):
    """One agent attempt: system + task, maybe a search (call and result), then the answer."""
    turns = [{"role": "system", "content": "You answer capital-city questions; you may search."},
             {"role": "user", "content": "What is the capital of France?"}]
    if searched:
        turns += [choice("", {"id": "c1", "type": "function",
                              "function": {"name": "search", "arguments": json.dumps({"q": f"capital {answer}"})}}),
                  {"role": "tool", "tool_call_id": "c1", "content": "Paris is the capital of France."}]
    turns.append(choice(f"The answer is {answer}."))
    return art.Trajectory(messages_and_choices=turns, reward=-5.0, metadata={"solution": "Paris"},
                          tools=[{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}])


def ruler_judge(body) -> str:
    """Grades 1.0 a trajectory that answered Paris after searching, 0.6 without searching, else 0."""
    text = body["messages"][-1]["content"]
    scores = []
    for n, shown in TRAJECTORY.findall(text):
        right = "The answer is Paris" in shown
        scores.append({"trajectory_id": n, "score": (1.0 if "search" in shown else 0.6) if right else 0.0})
    return json.dumps({"scores": scores})


def test_after_each_scores_every_group_with_the_set(art, server, monkeypatch):
    from rewardhub.trainers.hubs.art import score_group

    monkeypatch.setenv(KEY_ENV, SECRET)
    server.answer = ruler_judge
    config = {"rewards": [
        {"name": "exact_match", "alias": "correct", "weight": 1.0},
        {"name": "judge", "alias": "ruler", "weight": 0.5,
         "params": {"mode": "ruler", "base_url": server.base_url, "model": "judge", "api_key_env": KEY_ENV}},
    ]}
    attempts = [("Paris", True), ("Paris", False), ("Lyon", True)]

    async def main():
        return await art.gather_trajectory_groups(
            [art.TrajectoryGroup([rollout(art, a, s) for a, s in attempts]) for _ in range(2)],
            after_each=lambda group: score_group(group, config), pbar_desc=None)

    groups = asyncio.run(main())
    assert server.requests == 2  # one judge call per group
    expected = {("Paris", True): 1.0 + 0.5 * 1.0, ("Paris", False): 1.0 + 0.5 * 0.6, ("Lyon", True): 0.0}
    for group in groups:  # ART keeps a group's trajectories in the order they finished
        for trajectory in group.trajectories:
            messages = trajectory.messages()
            key = (messages[-1]["content"].removeprefix("The answer is ").rstrip("."), len(messages) > 3)
            assert trajectory.reward == expected[key]
            assert trajectory.metrics["independent_reward"] == -5.0
            assert trajectory.metrics["correct"] == float(key[0] == "Paris")
            assert trajectory.metrics["ruler/abstained"] is False
    assert "search" in server.bodies[0]["messages"][-1]["content"]  # the tool calls reached the judge


def test_abstentions_give_abstain_value_and_are_marked(art):
    from rewardhub.trainers.hubs.art import score_group

    async def main():
        group = art.TrajectoryGroup([await rollout(art, "Paris", False)])
        group.trajectories[0].metadata.pop("solution")
        return await score_group(group, {"rewards": [{"name": "exact_match"}]}, abstain_value=-1.0)

    (trajectory,) = asyncio.run(main()).trajectories
    assert trajectory.reward == -1.0 and trajectory.metrics["exact_match/abstained"] is True
    assert "exact_match" not in trajectory.metrics
