"""``rewardhub serve`` as a NeMo-Gym resource server: ``POST /verify`` and ``POST /seed_session``.

The bodies are NeMo-Gym's (``BaseVerifyRequest``: ``responses_create_params`` + a Responses-API
``response`` whose ``output`` holds the rollout's messages, function calls and their outputs, plus the
row's own fields), shaped as in its ``resources_servers/example_single_tool_call/data/example_rollouts.jsonl``.
"""

from __future__ import annotations

import copy
import json

import httpx
import pytest
from serving import running_server, serve_process

import rewardhub
from rewardhub.rewards.hubs.nemo_gym_schema import VerifyRequest
from rewardhub.trainers.server import create_app

WEATHER_TOOL = {"name": "get_weather", "type": "function", "strict": True, "description": "",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                               "additionalProperties": False}}
CONFIG = {"rewards": [
    {"name": "tool_call_format", "alias": "calls", "weight": 0.5},
    {"name": "exact_match", "alias": "answer", "weight": 1.0, "params": {"column": "expected_answer"}},
]}


def rollout(city_arguments: str, final: str, **fields) -> dict:
    """A NeMo-Gym verify request: the agent called get_weather, read the result, then answered."""
    return {
        "responses_create_params": {
            "input": [{"role": "developer", "content": "You are a helpful assistant.", "type": "message"},
                      {"role": "user", "content": "what's it like in sf?", "type": "message"}],
            "tools": [WEATHER_TOOL], "parallel_tool_calls": True, "tool_choice": "auto", "user": "",
        },
        "response": {
            "id": "resp_1", "created_at": 1756074069.0, "model": "gpt-4.1", "object": "response",
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [WEATHER_TOOL], "status": "completed",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": city_arguments,
                 "id": "fc_1", "status": "completed"},
                {"type": "function_call_output", "call_id": "call_1", "output": '{"weather": "cold"}'},
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": final, "annotations": []}]},
            ],
            "usage": {"input_tokens": 60, "output_tokens": 30, "total_tokens": 90,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
        },
        **fields,
    }


@pytest.fixture(scope="module")
def server():
    with running_server(create_app(rewardhub.load(CONFIG), access_log=False, monitor=False)) as base:
        yield base


def test_verify_answers_the_request_plus_a_numeric_reward(server):
    body = rollout('{"city": "San Francisco"}', "It is <answer>cold</answer> in SF.", expected_answer="cold",
                   task_id=7)
    answer = httpx.post(f"{server}/verify", json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    reply = answer.json()
    assert {k: reply[k] for k in body} == body  # the request comes back as sent
    assert reply["reward"] == 1.5
    assert reply["reward_components"] == {"calls": 1.0, "answer": 1.0}
    assert VerifyRequest.from_body(reply).fields["task_id"] == 7  # NeMo-Gym reads it back as its verify response


def test_tool_calls_in_the_response_reach_the_episode_view(server):
    wrong_call = rollout('{"town": "SF"}', "<answer>cold</answer>", expected_answer="cold")
    reply = httpx.post(f"{server}/verify", json=wrong_call, timeout=30).json()
    assert reply["reward_components"] == {"calls": 0.0, "answer": 1.0}
    assert "get_weather" in reply["reward_reasons"]["calls"] and "city" in reply["reward_reasons"]["calls"]


def test_an_abstention_still_answers_a_number(server):
    body = rollout('{"city": "SF"}', "<answer>cold</answer>")  # no expected_answer: exact_match cannot score
    reply = httpx.post(f"{server}/verify", json=body, timeout=30).json()
    assert reply["reward"] == 0.5 and reply["reward_components"]["answer"] == 0.0
    assert reply["reward_outcomes"]["answer"] == "error"
    assert "expected_answer" in reply["reward_reasons"]["answer"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda b: b.pop("response"), "'response' must be an object"),
    (lambda b: b["responses_create_params"].update(input=7), "responses_create_params.input"),
    (lambda b: b["response"].update(output={"a": 1}), "response.output"),
    (lambda b: b["response"]["output"].append("text"), "response.output[4]"),
    (lambda b: b.update(completion="x"), "field 'completion'"),
])
def test_bodies_that_are_not_verify_requests_are_refused_by_name(server, change, message):
    body = copy.deepcopy(rollout('{"city": "SF"}', "<answer>cold</answer>", expected_answer="cold"))
    change(body)
    answer = httpx.post(f"{server}/verify", json=body, timeout=30)
    assert answer.status_code == 422 and message in answer.json()["error"]


def test_seed_session_answers_as_nemo_gyms_base_server(server):
    answer = httpx.post(f"{server}/seed_session", json={"initial_count": 3}, timeout=30)
    assert answer.status_code == 200 and answer.json() == {}
    assert httpx.post(f"{server}/seed_session", content=b"[", timeout=30).status_code == 400


def test_the_serve_command_answers_verify(tmp_path):
    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(CONFIG))
    with serve_process(["--config", str(config), "--no-access-log"]) as (base, _):
        body = rollout('{"city": "SF"}', "<answer>warm</answer>", expected_answer="cold")
        reply = httpx.post(f"{base}/verify", json=body, timeout=60).json()
    assert reply["reward"] == 0.5 and reply["reward_components"] == {"calls": 1.0, "answer": 0.0}
