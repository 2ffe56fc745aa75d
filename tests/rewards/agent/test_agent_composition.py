"""Episode rewards inside a composed set: routes on trajectory columns, gates, normalize_then_sum, the
hacking monitor, all as TRL calls the set (each reward on its own, live environments per rollout)."""

from __future__ import annotations

import json
import math
import statistics
from types import SimpleNamespace

import pytest
from episodes import PROMPT, Counter, assistant, call, episode, tool

import rewardhub
from rewardhub.hacking import HackingMonitor

EXPECTED = [{"name": "set_value", "arguments": {"value": 3}}]
SET_SCHEMA = {"name": "set_value", "parameters": {"type": "object", "properties": {"value": {"type": "integer"}},
                                                   "required": ["value"]}}
WRONG = [assistant("", call("set_value", {"value": 5})), tool("set_value", "5"), assistant("It holds 3.")]
MALFORMED = [assistant("", call("set_value", {"value": "3"})), tool("set_value", "3"), assistant("It holds 3.")]


def trl_call(rewards, completions, environments, step=1, **columns):
    """Every reward of the set called as TRL calls it; the per-alias values and the totals."""
    n = len(completions)
    kwargs = {"trainer_state": SimpleNamespace(global_step=step), "environments": environments,
              **{k: v if isinstance(v, list) and len(v) == n else [v] * n for k, v in columns.items()}}
    values = {f.__name__: f([PROMPT] * n, completions, **kwargs) for f in rewards.reward_funcs}
    totals = [sum(w * v for w, v in zip(rewards.reward_weights, column, strict=True) if v is not None and not math.isnan(v))
              for column in zip(*values.values(), strict=True)]
    return values, totals


def test_routes_read_trajectory_columns():
    """``when`` on ``num_turns``: the episode rewards score the agent's rows, exact_match the one-turn replies."""
    rewards = rewardhub.load({"rewards": [
        {"name": "tool_call_match", "when": {"column": "num_turns", "not_in": [1]}},
        {"name": "exact_match", "when": {"column": "num_turns", "in": [1]}},
    ]})
    result = rewards.evaluate([PROMPT] * 3, [episode(3), "The counter holds \\boxed{3}.", WRONG],
                              expected_calls=[EXPECTED] * 3, solution=["3"] * 3)
    assert result["tool_call_match"].values == [1.0, None, 0.0]
    assert result["exact_match"].values == [None, 1.0, None]
    assert result["tool_call_match"].reasons[1] == "not routed here: num_turns=1 is in the entry's 'when'"
    assert result.totals == [1.0, 1.0, 0.0]


def test_a_route_on_a_column_neither_given_nor_derived_names_both():
    rewards = rewardhub.load({"rewards": [{"name": "tool_call_match", "when": {"column": "num_turn", "in": [2]}}]})
    with pytest.raises(rewardhub.ConfigError, match="'num_turn' is not a column of the batch .* nor a part of the trajectory view"):
        rewards.evaluate([PROMPT], [episode(3)], expected_calls=[EXPECTED])


def test_a_gate_on_the_call_format_passes_each_row_its_own_environment():
    """The gated reward scores only the rows the gate passes, a subset: each must keep its own live env."""
    rewards = rewardhub.load({"rewards": [
        {"name": "tool_call_format", "alias": "fmt", "weight": 0, "params": {"tools": [SET_SCHEMA]}},
        {"name": "final_state_match", "alias": "state", "gate": "fmt"},
    ]})
    envs = [Counter(3), Counter(3), Counter(0), Counter(3)]
    values, _ = trl_call(rewards, [MALFORMED, episode(3), episode(3), episode(3)], envs, expected_state={"value": 3})
    assert values["fmt"] == [0.0, 1.0, 1.0, 1.0]
    assert values["state"] == [0.0, 1.0, 0.0, 1.0]  # row 2's environment says 0, whatever its episode claims


def test_normalize_then_sum_normalises_episode_rewards_within_a_prompt_group():
    rewards = rewardhub.load({"aggregate": "normalize_then_sum", "rewards": [
        {"name": "tool_call_match"}, {"name": "tool_error_penalty", "weight": 0.5}]})
    failing = [assistant("", call("set_value", {"value": 3})), tool("set_value", str({"error": "locked"})),
               assistant("Done.")]
    result = rewards.evaluate([PROMPT] * 4, [episode(3), WRONG, failing, episode(3)], expected_calls=[EXPECTED] * 4)
    assert result["tool_call_match"].values == [1.0, 0.0, 0.0, 1.0]
    assert result["tool_error_penalty"].values == [0.0, 0.0, -0.5, 0.0]
    assert abs(sum(result.totals)) < 1e-9  # each reward centred within the group
    assert result.totals[0] == result.totals[3] > result.totals[1] > result.totals[2]
    assert statistics.pstdev(result.totals) > 0


def test_the_monitor_reads_episode_batches_without_keeping_live_objects():
    """Roles come from the families (match: correctness, format: format, penalty: shaping); a route on a
    trajectory column counts as coverage; nothing of the environments reaches the report."""
    rewards = rewardhub.load({"rewards": [
        {"name": "tool_call_match"},
        {"name": "tool_call_format", "weight": 0.2, "params": {"tools": [SET_SCHEMA]}},
        {"name": "tool_error_penalty", "weight": 0.2, "when": {"column": "num_turns", "not_in": [1]}},
    ]})
    monitor = HackingMonitor.for_set(rewards, warn=False)
    assert monitor.roles == {"tool_call_match": "correctness", "tool_call_format": "format",
                             "tool_error_penalty": "shaping"}
    for step in range(1, 4):
        trl_call(rewards, [episode(3), WRONG, MALFORMED, "No tools needed."], [Counter(3), Counter(5), Counter(3), None],
                 step=step, expected_calls=EXPECTED)
    assert [s.step for s in monitor.history] == [1.0, 2.0, 3.0]
    means = monitor.history[0].means
    assert means["value/tool_call_match"] == 0.25  # the one-turn reply made none of the expected calls
    assert means["abstained/tool_error_penalty"] == 0.0  # routed out is neither an abstention nor a failure
    report = json.dumps(monitor.report())
    assert "Counter" not in report
