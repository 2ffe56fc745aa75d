"""The episode rewards: tool_call_format, tool_call_match, tool_error_penalty, turn_budget, final_state_match."""

from __future__ import annotations

import pytest
from episodes import PROMPT, SET_VALUE, Counter, assistant, call, episode, tool

import rewardhub
import rewardhub.testing
from rewardhub import ConfigError
from rewardhub.testing import CONTRACT_EPISODE_PROBES
from rewardhub.testing.episodes import (
    EPISODE_PROBES,
    FORM_PROBES,
    EpisodeTask,
    check_episode_probes,
    probe_values,
)

SUBMIT = EpisodeTask(
    tool="submit", arguments={"answer": 42}, done_state={"answer": 42, "submissions": 1},
    start_state={"answer": None, "submissions": 0}, calls_key="submissions",
    schema={"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]},
)


def scores(name, completions, **columns):
    params = columns.pop("params", {})
    result = rewardhub.get(name, **params).evaluate([PROMPT] * len(completions), completions, **columns)
    return [(s.value, s.reason) for s in result.scores]


# ----- tool_call_format ---------------------------------------------------------------------------
def test_format_validates_arguments_against_the_schema():
    bad_type = [assistant("", call("set_value", {"value": "3"})), tool("set_value", "3"), assistant("ok")]
    extra = [assistant("", call("set_value", {"value": 3, "force": True}))]
    unknown = [assistant("", call("reset_all", {}))]
    malformed = [assistant("", {"type": "function", "function": {"name": "set_value", "arguments": "{'value': 3"}})]
    got = scores("tool_call_format", [episode(3), bad_type, extra, unknown, malformed, "no calls"],
                 params={"tools": [SET_VALUE]})
    assert got[0] == (1.0, "1/1 calls well-formed")
    assert got[1] == (0.0, "0/1 calls well-formed: turn 1 set_value: arguments['value']: '3' is not of type 'integer'")
    assert got[2][0] == 0.0 and "Additional properties are not allowed ('force' was unexpected)" in got[2][1]
    assert got[3] == (0.0, "0/1 calls well-formed: turn 1 reset_all: no tool named 'reset_all' (tools: set_value)")
    assert got[4][0] == 0.0 and "arguments are not valid JSON" in got[4][1]
    assert got[5] == (None, "no tool calls")


def test_format_reads_schemas_from_a_column_and_gives_partial_credit():
    two = [assistant("", call("set_value", {"value": 1}), call("set_value", {"value": 1.5}))]
    got = scores("tool_call_format", [two], tools=[[SET_VALUE]], params={"partial_credit": True})
    assert got[0][0] == 0.5


def test_format_rejects_a_broken_schema_at_config_time():
    with pytest.raises(ConfigError, match="not a valid JSON schema"):
        rewardhub.get("tool_call_format", tools=[{"name": "f", "parameters": {"type": "objekt"}}])


# ----- tool_call_match ----------------------------------------------------------------------------
def test_match_compares_names_and_arguments_by_value():
    expected = [{"name": "set_value", "arguments": {"value": 3}}]
    got = scores("tool_call_match", [episode(3), episode(4), [assistant("", call("set_value", {"value": 3.0}))],
                                     [assistant("", call("set_value", {"value": True}))]],
                 expected_calls=[expected] * 4)
    assert [v for v, _ in got] == [1.0, 0.0, 1.0, 0.0]  # 3.0 is the number 3; True is not


def test_match_ordered_unordered_partial_and_subset():
    a, b = call("a", {"x": 1}), call("b", {"y": [1, 2]})
    want = [{"name": "a", "arguments": {"x": 1}}, {"function": {"name": "b", "arguments": '{"y": [1, 2]}'}}]
    swapped = [assistant("", b, a)]
    assert scores("tool_call_match", [swapped], expected_calls=[want])[0][0] == 0.0
    assert scores("tool_call_match", [swapped], expected_calls=[want], params={"ordered": False})[0][0] == 1.0
    assert scores("tool_call_match", [swapped], expected_calls=[want], params={"partial_credit": True})[0][0] == 0.5
    extra_arg = [assistant("", call("a", {"x": 1, "verbose": True}))]
    assert scores("tool_call_match", [extra_arg], expected_calls=[want[:1]])[0][0] == 0.0
    assert scores("tool_call_match", [extra_arg], expected_calls=[want[:1]], params={"arguments": "subset"})[0][0] == 1.0


def test_match_does_not_count_a_call_whose_tool_failed():
    failed = [assistant("", call("set_value", {"value": 3})), tool("set_value", str({"error": "locked"}))]
    want = [[{"name": "set_value", "arguments": {"value": 3}}]]
    assert scores("tool_call_match", [failed], expected_calls=want)[0] == (
        0.0, "0/1 expected calls matched, 1 made (1 failed or malformed)")
    assert scores("tool_call_match", [failed], expected_calls=want, params={"count_failed": True})[0][0] == 1.0


def test_match_without_expected_calls_abstains_and_bad_expected_is_an_error_outcome():
    result = rewardhub.get("tool_call_match").evaluate([PROMPT] * 2, [episode()] * 2,
                                                       expected_calls=[None, 42])
    assert result.scores[0].value is None and result.scores[0].outcome == "abstain"
    assert result.scores[1].outcome == "error" and "must hold a list of calls" in result.scores[1].reason


# ----- tool_error_penalty -------------------------------------------------------------------------
def test_error_penalty_counts_failures_and_malformed_calls():
    failed = [assistant("", call("f", {}), call("g", "{bad")), tool("f", str({"error": "no such file"}))]
    got = scores("tool_error_penalty", [episode(), failed, "plain"])
    assert got[0] == (0.0, "1 calls, none failed")
    assert got[1] == (-1.0, "2/2 calls failed; first, turn 1 f: no such file")
    assert got[2] == (0.0, "0 calls, none failed")
    with pytest.raises(ConfigError, match="per_error must be a number <= 0"):
        rewardhub.get("tool_error_penalty", per_error=0.5)


# ----- turn_budget --------------------------------------------------------------------------------
def test_turn_budget_decays_past_the_free_turns_and_unfinished_episodes_get_nothing():
    def turns(n):
        steps = []
        for i in range(n - 1):
            steps += [assistant("", call("f", {"i": i})), tool("f", "ok")]
        return [*steps, assistant("done")]

    unfinished = [assistant("", call("f", {}))]
    got = scores("turn_budget", [turns(2), turns(3), turns(4), turns(5), unfinished],
                 params={"free_turns": 2, "max_turns": 4})
    assert [v for v, _ in got] == [1.0, pytest.approx(2 / 3), pytest.approx(1 / 3), 0.0, 0.0]
    assert got[4][1] == "unfinished after 1 turns (tool_calls)"
    assert scores("turn_budget", [turns(2)], finish_reason=["length"])[0][0] == 0.0
    with pytest.raises(ConfigError, match="free_turns <= max_turns"):
        rewardhub.get("turn_budget", free_turns=5, max_turns=4)


# ----- final_state_match --------------------------------------------------------------------------
def test_state_match_reads_each_rollouts_environment():
    got = scores("final_state_match", [episode()] * 3, environments=[Counter(3), Counter(4), Counter(3)],
                 expected_state=[{"value": 3}] * 3)
    assert [v for v, _ in got] == [1.0, 0.0, 1.0]
    assert got[1][1] == "1 mismatch(es): state.value is 4, expected 3"


def test_state_match_keys_tolerance_partial_credit():
    state = [{"cart": {"apple": 2, "pear": 1}, "total": 3.004, "paid": False}]
    want = [{"cart": {"apple": 2}, "total": 3.0, "paid": True}]
    assert scores("final_state_match", [episode()], env_state=state, expected_state=want)[0][0] == 0.0
    assert scores("final_state_match", [episode()], env_state=state, expected_state=want,
                  params={"keys": ["cart.apple", "total"], "tolerance": 0.01})[0][0] == 1.0
    assert scores("final_state_match", [episode()], env_state=state, expected_state=want,
                  params={"partial_credit": True, "tolerance": 0.01})[0][0] == pytest.approx(2 / 3)


def test_state_match_without_state_gives_the_reason():
    class Opaque:
        __slots__ = ()

    got = scores("final_state_match", [episode()] * 2, environments=[Opaque(), None],
                 expected_state=[{"value": 3}] * 2)
    assert got == [(None, "environment Opaque has no state_dict() and no public attributes"),
                   (None, "no environment for this rollout")]


# ----- gaming probes ------------------------------------------------------------------------------
@pytest.mark.parametrize("probe", [p.name for p in EPISODE_PROBES])
@pytest.mark.parametrize("name", ["tool_call_match", "final_state_match"])
def test_rewards_on_what_was_done_give_each_probe_zero(name, probe):
    values = probe_values(rewardhub.get(name), SUBMIT)
    assert (values["honest"], values[probe]) == (1.0, 0.0)


@pytest.mark.parametrize("probe", [p.name for p in FORM_PROBES])
def test_the_format_reward_gives_each_form_probe_zero_or_abstains(probe):
    """tool_call_format judges the form of the calls made: look-alike arguments fail it (a number as
    text, an extra key a strict schema does not take); where no call was made it abstains."""
    fmt = rewardhub.get("tool_call_format", tools=[{"name": "submit", "parameters": SUBMIT.schema}])
    values = probe_values(fmt, SUBMIT)
    assert values["honest"] == 1.0
    assert values[probe] == (None if probe in ("claimed_success", "forged_tool_result", "call_as_text") else 0.0)


def test_what_the_look_alike_probes_hold():
    """Each probe is one trick: the lenient tool kept "42" as sent; the extra key made the tool raise;
    the wrong value was accepted. A state-only or a call-only check alone is not what catches them all."""
    rows = {p.name: p.make(SUBMIT) for p in EPISODE_PROBES}
    as_text, extra, wrong = rows["numbers_as_text"], rows["extra_key"], rows["wrong_value"]
    assert as_text["completion"][0]["tool_calls"][0]["function"]["arguments"] == {"answer": "42"}
    assert as_text["env_state"] == {"answer": "42", "submissions": 1}
    assert extra["completion"][0]["tool_calls"][0]["function"]["arguments"] == {"answer": 42, "confirm": True}
    assert extra["env_state"] == SUBMIT.start_state
    assert wrong["completion"][0]["tool_calls"][0]["function"]["arguments"] == {"answer": 43}
    assert wrong["env_state"] == {"answer": 43, "submissions": 1}
    fmt = probe_values(rewardhub.get("tool_call_format", tools=[{"name": "submit", "parameters": SUBMIT.schema}]),
                       SUBMIT)
    assert fmt["submit_spam"] == fmt["wrong_value"] == 1.0  # well-formed: the match and the state catch these


def test_a_state_only_reward_is_gamed_by_spam_when_the_environment_counts_nothing():
    """Why the kit's task names a calls_key: without it, the last of many guesses leaves the right state."""
    blind = EpisodeTask(tool="submit", arguments={"answer": 42}, done_state={"answer": 42},
                        start_state={"answer": None})
    with pytest.raises(AssertionError, match=r"episode probe 'submit_spam' got full credit \(1.0\)"):
        check_episode_probes(rewardhub.get("final_state_match"), blind)


# ----- the contract kit probes episode rewards with episodes ------------------------------------------
@rewardhub.sample_reward(name="k_believes_the_agent")
def believes_the_agent(text, tool_calls):
    """Gameable: credit for a submit call made, or for saying one was made."""
    return float(any(c["name"] == "submit" for c in tool_calls) or "submit" in text)


@pytest.mark.parametrize("name", ["tool_call_match", "final_state_match"])
def test_the_contract_kit_feeds_episode_rewards_the_episode_probes(name):
    report = rewardhub.testing.check_contract(rewardhub.get(name), columns=SUBMIT.columns(), episode_task=SUBMIT)
    assert report.episode_values == {"honest": 1.0, **{p.name: 0.0 for p in CONTRACT_EPISODE_PROBES}}
    # without a task, the kit's own (submit the reference answer once) probes it; the honest episode is not required
    default = rewardhub.testing.check_contract(rewardhub.get(name))
    assert default.episode_values["honest"] == 1.0 and set(default.episode_values) == {"honest", *(p.name for p in CONTRACT_EPISODE_PROBES)}


def test_the_contract_kit_fails_a_gameable_episode_reward():
    """Detected from the scorer's own column parameters (``tool_calls``): no flag to set."""
    report = rewardhub.testing.check_contract(believes_the_agent(), raise_on_failure=False)
    assert report.probe_values and report.episode_values["claimed_success"] == 1.0
    assert "episode probe 'claimed_success' got full credit (1.0)" in report.failures
    assert "episode probe 'submit_spam' got full credit (1.0)" in report.failures


def test_the_contract_kit_looks_inside_routes_and_leaves_text_rewards_alone():
    rewards = rewardhub.load({"rewards": [{"name": "tool_call_match", "when": {"column": "num_turns", "not_in": [0]}}]})
    (entry,) = rewards.reward_funcs
    assert rewardhub.testing.check_contract(entry).episode_values["submit_spam"] == 0.0
    assert rewardhub.testing.check_contract(rewardhub.get("exact_match")).episode_values == {}


def test_a_form_reward_names_the_probes_it_is_not_for():
    """tool_call_format judges the form of calls: many well-formed calls are well-formed."""
    fmt = rewardhub.get("tool_call_format", tools=[{"name": "submit", "parameters": SUBMIT.schema}])
    assert not rewardhub.testing.check_contract(fmt, episode_task=SUBMIT, raise_on_failure=False).ok
    assert rewardhub.testing.check_contract(fmt, episode_task=SUBMIT, episode_probes=rewardhub.testing.FORM_PROBES).ok


def test_per_turn_parts_reach_trl_as_the_episode_total():
    """A Score's turns are for verl's token placement; TRL's reward function gets the one total."""
    steps = [assistant("", call("f", {})), tool("f", str({"error": "x"})), assistant("", call("f", {})), tool("f", "ok"),
             assistant("done")]
    reward = rewardhub.get("tool_error_penalty")
    (score,) = reward.evaluate([PROMPT], [steps]).scores
    assert score.value == -0.5 and score.turns == (-0.5, 0.0, 0.0)
    assert reward(prompts=[PROMPT], completions=[steps]) == [-0.5]
    rewards = rewardhub.load({"rewards": [{"name": "tool_error_penalty", "weight": 2.0}]})
    assert rewards.weighted(prompts=[PROMPT], completions=[steps]) == [-1.0]


# ----- what a failed call looks like (issue 33, item 4) ---------------------------------------------------------
WANT = [[{"name": "set_value", "arguments": {"value": 3}}]]


@pytest.mark.parametrize("report", [str({"error": ""}), '{"error": ""}', str({"error": "   "}),
                                    str({"error": "x" * 50_000}), '{"error": "' + "y" * 200_000 + '"}',
                                    " " + str({"error": "Traceback...\n" * 3000}) + "\n"])
def test_a_failed_call_is_a_failure_whatever_its_message(report):
    """TRL writes an exception as str({"error": str(e)}): an empty message is still an exception, and a long
    one (past 20,000 characters) is still checked."""
    failed = [assistant("", call("set_value", {"value": 3})), tool("set_value", report)]
    assert scores("tool_error_penalty", [failed])[0][0] == -0.5
    assert scores("tool_call_match", [failed], expected_calls=WANT)[0][0] == 0.0  # a failed call is no match


@pytest.mark.parametrize("result", [str({"stdout": "", "error": "NameError: name 'x' is not defined"}),
                                    '{"exit_code": 1, "error": "ZeroDivisionError"}', str({"error": None}),
                                    '{"result": {"error": "not found"}}', "error: the word in plain text",
                                    '["error", "x"]', '{"error": "unclosed'])
def test_a_tool_that_worked_and_reports_its_programs_error_is_not_penalised(result):
    worked = [assistant("", call("set_value", {"value": 3})), tool("set_value", result)]
    assert scores("tool_error_penalty", [worked])[0] == (0.0, "1 calls, none failed")
    assert scores("tool_call_match", [worked], expected_calls=WANT)[0][0] == 1.0
