"""Episodes through the reward server (``/score`` rows with ``messages``) and scored files (JSONL, Parquet)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from episodes import PROMPT, assistant, call, episode, tool
from serving import running_server

import rewardhub
from rewardhub.trainers.server import create_app

CONFIG = {"rewards": [{"name": "tool_call_match"}, {"name": "final_state_match"}, {"name": "exact_match"}]}
WANT = [{"name": "set_value", "arguments": {"value": 3}}]


def rows():
    """An honest episode, a wrong call, and a claim of success with no call, as whole conversations."""
    return [
        {"messages": [*PROMPT, *episode(3, "The counter holds \\boxed{3}.")], "expected_calls": WANT,
         "env_state": {"value": 3}, "expected_state": {"value": 3}, "solution": "3"},
        {"messages": [*PROMPT, *episode(4, "\\boxed{3}")], "expected_calls": WANT, "env_state": {"value": 4},
         "expected_state": {"value": 3}, "solution": "3"},
        {"messages": [*PROMPT, assistant("I set it to 3. \\boxed{3}")], "expected_calls": WANT,
         "env_state": {"value": 0}, "expected_state": {"value": 3}, "solution": "3"},
    ]


EXPECTED = {"tool_call_match": [1.0, 0.0, 0.0], "final_state_match": [1.0, 0.0, 0.0], "exact_match": [1.0, 1.0, 1.0]}


def test_the_server_scores_rows_with_messages():
    with running_server(create_app(rewardhub.load(CONFIG))) as url:
        reply = httpx.post(f"{url}/score", json={"rows": rows()}, timeout=60)
        assert reply.status_code == 200, reply.text
        assert reply.json()["components"] == EXPECTED
        refused = httpx.post(f"{url}/score", json={"rows": [{**rows()[0], "env": {"value": 3}}]}, timeout=60)
        assert refused.status_code == 422  # BadRequest: a well-formed body the server will not score
        assert "'env': an environment is a live object" in refused.json()["error"]
        empty = httpx.post(f"{url}/score", json={"rows": [{"prompt": "p"}]}, timeout=60)
        assert empty.status_code == 422 and "has no 'completion' (nor 'messages'" in empty.json()["error"]


def test_a_live_environment_is_sent_to_the_server_as_its_state():
    """The verl shim's client path: a batch holding live environments sends their env_state instead."""
    import asyncio

    from episodes import Counter

    from rewardhub import Batch
    from rewardhub.trainers.client import score_remote

    batch = Batch([PROMPT, PROMPT], [episode(3), episode(5)],
                  {"expected_state": [{"value": 3}] * 2, "expected_calls": [WANT] * 2},
                  live={"environments": [Counter(3), Counter(5)]})
    with running_server(create_app(rewardhub.load(CONFIG))) as url:
        scored = asyncio.run(score_remote(url, batch, None))
    assert scored.components["final_state_match"].values == [1.0, 0.0]
    assert scored.components["tool_call_match"].values == [1.0, 0.0]


def _score_cli(tmp_path: Path, source: Path) -> list[dict]:
    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(CONFIG))
    rh = str(Path(sys.executable).with_name("rewardhub"))
    result = subprocess.run([rh, "score", "-c", str(config), str(source), "-q"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_scored_jsonl_with_messages(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows()))
    out = _score_cli(tmp_path, path)
    assert {alias: [r["rewards"][alias] for r in out] for alias in EXPECTED} == EXPECTED
    assert out[1]["reasons"]["final_state_match"] == "1 mismatch(es): state.value is 4, expected 3"


def test_scored_parquet_with_messages(tmp_path):
    """Arrow stores a column's dicts with one struct type (a key missing from one row comes back as
    null): tool arguments and expected calls go in as JSON text, as in most published tool-use
    datasets, and are parsed when read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def as_text(row):
        messages = []
        for m in row["messages"]:
            m = dict(m)
            if m.get("tool_calls"):
                m["tool_calls"] = [{"type": "function", "function": {"name": c["function"]["name"],
                                                                      "arguments": json.dumps(c["function"]["arguments"])}}
                                   for c in m["tool_calls"]]
            messages.append(m)
        return {**row, "messages": messages, "expected_calls": json.dumps(row["expected_calls"])}

    path = tmp_path / "episodes.parquet"
    pq.write_table(pa.Table.from_pylist([as_text(r) for r in rows()]), path)
    out = _score_cli(tmp_path, path)
    assert {alias: [r["rewards"][alias] for r in out] for alias in EXPECTED} == EXPECTED


@pytest.mark.parametrize("bad, reason", [
    ([assistant("", {"type": "function", "function": {"name": "set_value", "arguments": "{oops"}})],
     "0/1 expected calls matched, 1 made (1 failed or malformed)"),
    ([assistant("", call("set_value", {"value": 3})), tool("set_value", str({"error": "locked"}))],
     "0/1 expected calls matched, 1 made (1 failed or malformed)"),
    ([assistant("no calls at all")], "0/1 expected calls matched, 0 made"),
])
def test_bad_episodes_give_a_reason_and_an_outcome(bad, reason):
    result = rewardhub.get("tool_call_match").evaluate([PROMPT], [bad], expected_calls=[WANT])
    assert (result.scores[0].value, result.scores[0].reason, result.scores[0].outcome) == (0.0, reason, "ok")


def test_bad_episodes_through_trls_reward_functions_never_raise():
    """No tool calls, malformed call JSON, a tool that raised, an environment without state: every
    episode reward answers each row with a value or None, a reason and an outcome, as TRL calls them."""
    from episodes import SET_VALUE, Counter

    class Opaque:
        __slots__ = ()

    completions = [[assistant("The counter holds 3.")],
                   [assistant("", {"type": "function", "function": {"name": "set_value", "arguments": "{oops"}})],
                   [assistant("", call("set_value", {"value": 3})), tool("set_value", str({"error": "locked"}))],
                   episode(3)]
    rewards = rewardhub.load({"rewards": [
        {"name": "tool_call_format", "params": {"tools": [SET_VALUE]}}, {"name": "tool_call_match"},
        {"name": "tool_error_penalty"}, {"name": "turn_budget"}, {"name": "final_state_match"}]})
    logged = {}
    for func in rewards.reward_funcs:
        values = func(prompts=[PROMPT] * 4, completions=completions, completion_ids=None, trainer_state=None,
                      environments=[Counter(0), Counter(0), Counter(0), Opaque()], expected_calls=[WANT] * 4,
                      expected_state=[{"value": 3}] * 4, log_extra=lambda key, rows: logged.__setitem__(key, rows))
        assert len(values) == 4
    outcomes = {o for e in rewards.entries for o in logged[f"{e.alias}/outcome"]}
    assert outcomes == {"ok", "abstain"}  # no reward failed on them
    assert logged["tool_call_format/reason"][0] == "no tool calls"
    assert "arguments are not valid JSON" in logged["tool_call_format/reason"][1]
    assert logged["tool_error_penalty/reason"][2] == "1/1 calls failed; first, turn 1 set_value: locked"
    assert logged["final_state_match/reason"][3] == "environment Opaque has no state_dict() and no public attributes"
    assert logged["final_state_match/outcome"][3] == "abstain"
    assert all(reason for e in rewards.entries for reason in logged[f"{e.alias}/reason"])
