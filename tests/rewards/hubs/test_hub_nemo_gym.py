"""The ``nemo_gym`` reward against real resource servers on 127.0.0.1: rewardhub's own ``serve``, and a small
starlette app written here as NeMo-Gym's schema says (``BaseVerifyRequest`` validated field by field, a
stateful counter like ``resources_servers/example_session_state_mgmt`` keyed by a session cookie, and
endpoints that fail on demand)."""

from __future__ import annotations

import itertools
import json
import threading

import pytest
from serving import running_server

import rewardhub
from rewardhub.trainers.server import create_app

RESPONSE_FIELDS = ("id", "created_at", "model", "object", "output", "parallel_tool_calls", "tool_choice", "tools")
SERVED = {"rewards": [{"name": "exact_match", "params": {"column": "expected_answer"}}]}


def nemo_gym_style_app():
    """A resource server as NeMo-Gym's schema says: 422 on a body that is not a BaseVerifyRequest."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    sessions: dict[str, int] = {}
    counter = itertools.count()
    flaky = {"left": 0}
    lock = threading.Lock()

    def missing(body: dict) -> str | None:
        params, response = body.get("responses_create_params"), body.get("response")
        if not isinstance(params, dict) or not isinstance(params.get("input"), str | list):
            return "responses_create_params.input"
        if not isinstance(response, dict):
            return "response"
        return next((f"response.{f}" for f in RESPONSE_FIELDS if f not in response), None)

    async def seed_session(request):
        body = await request.json()
        session = str(next(counter))
        sessions[session] = body.get("initial_count", 0)
        answer = JSONResponse({})
        answer.set_cookie("session", session)
        return answer

    async def verify(request):
        body = await request.json()
        if body.get("expected_answer") == "flaky":
            with lock:
                flaky["left"], fail = max(flaky["left"] - 1, 0), flaky["left"] > 0
            if fail:
                return JSONResponse({"detail": "overloaded"}, status_code=503)
        if body.get("expected_answer") == "down":
            return JSONResponse({"detail": "judge unavailable"}, status_code=500)
        if body.get("expected_answer") == "no reward":
            return JSONResponse({**body})
        field = missing(body)
        if field is not None:
            return JSONResponse({"detail": [{"loc": ["body", *field.split(".")], "msg": "Field required"}]},
                                status_code=422)
        output = body["response"]["output"]
        text = "".join(part["text"] for item in output if item["type"] == "message" for part in item["content"])
        calls = [item for item in output if item["type"] == "function_call"]
        if "expected_count" in body:  # the stateful example: the session's counter after the calls
            session = request.cookies.get("session")
            count = sessions.get(session, 0) + sum(json.loads(c["arguments"])["count"] for c in calls)
            return JSONResponse({**body, "reward": float(session in sessions and count == body["expected_count"])})
        return JSONResponse({**body, "reward": float(body["expected_answer"] in text)})

    app = Starlette(routes=[Route("/verify", verify, methods=["POST"]),
                            Route("/seed_session", seed_session, methods=["POST"])])
    return app, flaky


@pytest.fixture(scope="module")
def gym_server():
    app, flaky = nemo_gym_style_app()
    with running_server(app) as base:
        yield base, flaky


def test_rewardhubs_own_server_gives_what_the_set_gives_in_process():
    rows = [{"prompt": "2+2?", "completion": "<answer>4</answer>", "expected_answer": "4"},
            {"prompt": "2+3?", "completion": "<answer>6</answer>", "expected_answer": "5"},
            {"prompt": [{"role": "user", "content": "say hi"}],
             "completion": [{"role": "assistant", "content": "The answer is hi"}], "expected_answer": "hi"}]
    direct = [row["reward"] for row in rewardhub.load(SERVED).score(rows)]
    with running_server(create_app(rewardhub.load(SERVED), access_log=False, monitor=False)) as base:
        remote = rewardhub.load({"rewards": [{"name": "nemo_gym", "params": {"url": base}}]}).score(rows)
    assert [row["reward"] for row in remote] == direct == [1.0, 0.0, 1.0]
    assert "/verify: reward 1" in remote[0]["reasons"]["nemo_gym"]


def test_a_nemo_gym_style_server_scores_rows_and_their_fields(gym_server):
    base, _ = gym_server
    reward = rewardhub.get("nemo_gym", url=base)
    result = reward.evaluate(["q1", "q2"], ["it is cold", "it is warm"], expected_answer=["cold", "cold"])
    assert result.values == [1.0, 0.0] and result.outcomes == ["ok", "ok"]


def test_seed_session_keeps_one_cookie_session_per_sample(gym_server):
    base, _ = gym_server
    calls = [{"role": "assistant", "content": "",
              "tool_calls": [{"id": "c1", "type": "function",
                              "function": {"name": "increment_counter", "arguments": '{"count": 2}'}}]},
             {"role": "tool", "tool_call_id": "c1", "content": '{"success": true}'},
             {"role": "assistant", "content": "done"}]
    columns = {"initial_count": [1, 1], "expected_count": [3, 4]}
    seeded = rewardhub.get("nemo_gym", url=base, seed_session=True).evaluate(["count"] * 2, [calls, calls], **columns)
    assert seeded.values == [1.0, 0.0]
    unseeded = rewardhub.get("nemo_gym", url=base).evaluate(["count"], [calls], initial_count=[1], expected_count=[3])
    assert unseeded.values == [0.0]  # no session was seeded: the server's own rule pays nothing


def test_failures_of_the_server_abstain_and_say_why(gym_server):
    base, flaky = gym_server
    flaky["left"] = 1
    reward = rewardhub.get("nemo_gym", url=base, max_retries=1)
    result = reward.evaluate(["q"] * 3, ["a flaky answer", "x", "x"], expected_answer=["flaky", "down", "no reward"])
    assert result.values == [1.0, None, None]  # the 503 was retried; the 500 was retried then given up
    assert result.outcomes[1:] == ["error", "error"]
    assert "/verify answered 500" in result.reasons[1] and "judge unavailable" in result.reasons[1]
    assert "no numeric 'reward'" in result.reasons[2]


def test_an_unreachable_server_abstains(gym_server):
    from serving import free_port

    reward = rewardhub.get("nemo_gym", url=f"http://127.0.0.1:{free_port()}", max_retries=0)
    result = reward.evaluate(["q"], ["a"], expected_answer=["a"])
    assert result.values == [None] and result.outcomes == ["error"] and "cannot reach" in result.reasons[0]


def test_bad_params_fail_when_the_reward_is_built():
    with pytest.raises(rewardhub.ConfigError, match="url must be"):
        rewardhub.get("nemo_gym", url="localhost:8000")
    with pytest.raises(rewardhub.ConfigError, match="request_timeout"):
        rewardhub.get("nemo_gym", url="http://127.0.0.1:1", request_timeout=0)
    with pytest.raises(rewardhub.ConfigError, match="NO_SUCH_TOKEN_VAR"):
        rewardhub.get("nemo_gym", url="http://127.0.0.1:1", token_env="NO_SUCH_TOKEN_VAR")
