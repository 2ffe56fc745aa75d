"""Hostile episodes (issue 35 item 3): tool-call arguments nested ~1,000 deep are a reason on their row,
never an exception, at a real ``rewardhub serve`` process and in a TRL-style call of the reward functions.
"""

from __future__ import annotations

import json

import httpx
import pytest
from serving import serve_process

import rewardhub

AGENT = {"rewards": [{"name": "tool_call_format", "params": {"strict": False}},
                     {"name": "tool_error_penalty"}]}
NESTED_TEXT = "[" * 1000 + "]" * 1000  # an arguments string json.loads cannot read without recursing 1,000 deep


def nested_object(depth: int) -> dict:
    root = current = {}
    for _ in range(depth):
        current["a"] = current = {}
    return root


def episode(arguments) -> list[dict]:
    return [{"role": "user", "content": "call f"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": "done"}]


GOOD = episode('{"x": 1}')


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config = tmp_path_factory.mktemp("agent") / "agent.json"
    config.write_text(json.dumps(AGENT))
    with serve_process(["--config", str(config), "--no-access-log", "--log-level", "warning"]) as (base, _):
        yield base


def test_deeply_nested_arguments_are_a_reason_on_their_row_at_the_server(server):
    rows = [{"messages": episode(NESTED_TEXT)}, {"messages": GOOD}, {"prompt": "p", "completion": "plain"}]
    reply = httpx.post(server + "/score", json={"rows": rows}, timeout=120)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["components"]["tool_call_format"][:2] == [0.0, 1.0]  # the others of the batch are scored
    assert "nested too deeply" in body["reasons"]["tool_call_format"][0]
    assert body["outcomes"]["tool_call_format"][0] == "ok"  # a scored failure of the completion, not an abstention
    openrlhf = httpx.post(server + "/get_reward", timeout=120, json={
        "query": ["q " + json.dumps(episode(NESTED_TEXT))], "prompts": ["q"], "labels": [None]})
    assert openrlhf.status_code == 200, openrlhf.text


@pytest.mark.parametrize("arguments", [NESTED_TEXT, nested_object(1000)], ids=["json-text", "object"])
def test_deeply_nested_arguments_never_raise_out_of_a_trl_call(arguments):
    rewards = rewardhub.load(AGENT)
    prompts = [GOOD[:1], GOOD[:1]]
    completions = [episode(arguments)[1:], GOOD[1:]]
    for reward in rewards.reward_funcs:
        values = reward(prompts=prompts, completions=completions)
        assert len(values) == 2 and values[1] is not None
    fmt = rewards.reward_funcs[0](prompts=prompts, completions=completions)
    assert fmt[1] == 1.0
    if isinstance(arguments, str):
        assert fmt[0] == 0.0  # its arguments cannot be read: a malformed call, scored as one
