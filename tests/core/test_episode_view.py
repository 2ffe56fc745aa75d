"""The trajectory view: each part asked for by name, derived from what the trainer gave, with reasons for gaps."""

from __future__ import annotations

import pickle

import pytest
from episodes import PROMPT, Counter, assistant, call, episode, tool

import rewardhub
from rewardhub import Batch
from rewardhub.completions import completion_text
from rewardhub.episode import TRAJECTORY_COLUMNS, split_messages, tool_calls


def view(completions, prompts=None, **columns):
    batch = Batch(prompts or [PROMPT] * len(completions), completions, columns)
    return batch, {name: batch.trajectory(name) for name in TRAJECTORY_COLUMNS}


def test_an_episode_in_trl_form():
    batch, v = view([episode(3)], environments=[Counter(3)])
    assert v["messages"][0] == [*PROMPT, *episode(3)]
    assert v["final_text"] == ["The counter holds 3."] and v["num_turns"] == [2]
    assert v["tool_calls"] == [[{"turn": 1, "name": "set_value", "arguments": {"value": 3}, "result": "3",
                                 "error": None, "id": None, "parse_error": None}]]
    assert v["env_state"] == [{"value": 3, "calls": 0}] and v["env"][0].value == 3
    assert v["finish_reason"] == [None] and v["truncated"] == [None] and v["turn_scores"] == [None]
    assert batch.trajectory_note("turn_scores", 0) == "the trainer gave no per-turn scores"


def test_text_rewards_read_the_final_answer_of_an_episode():
    """``math`` and friends read final_text: the call's JSON and the tool result are not the answer."""
    steps = [assistant("Let me compute.", call("calc", {"expr": "6*7"})), tool("calc", "42"), assistant("It is 41.")]
    assert completion_text(steps) == "It is 41."
    # single-turn data keeps its behaviour: several assistant messages without tools are joined
    assert completion_text([assistant("a"), assistant("b")]) == "a\nb"


def test_a_tool_that_raised_is_an_error_with_its_message():
    steps = [assistant("", call("set_value", {"value": "x"})),
             tool("set_value", str({"error": "invalid literal for int() with base 10: 'x'"})), assistant("Sorry.")]
    (only,) = tool_calls(steps)
    assert only["error"] == "invalid literal for int() with base 10: 'x'" and only["result"].startswith("{'error'")
    json_error = tool_calls([assistant("", call("f", {})), tool("f", '{"error": "boom"}')])
    assert json_error[0]["error"] == "boom"
    # a result that merely mentions errors is a result
    assert tool_calls([assistant("", call("f", {})), tool("f", '{"errors": 0, "ok": true}')])[0]["error"] is None


def test_malformed_calls_get_a_parse_error_and_never_raise():
    steps = [assistant("", {"type": "function", "function": {"name": "f", "arguments": "{not json"}},
                       {"type": "function", "function": {"name": "", "arguments": {}}},
                       {"type": "function", "function": {"name": "g", "arguments": "[1, 2]"}},
                       "not a call", {"type": "code_interpreter"}),
             assistant("", *[]) | {"tool_calls": "oops"}]
    problems = [c["parse_error"] for c in tool_calls(steps)]
    assert problems[0].startswith("arguments are not valid JSON")
    assert problems[1] == "the call names no function"
    assert problems[2] == "arguments must be a JSON object, got an array"
    assert problems[3] == "a tool call must be an object, got str"
    assert problems[4] == "unsupported tool call type 'code_interpreter'"
    assert problems[5] == "tool_calls is a str, not a list of calls"


def test_results_pair_with_calls_by_id_then_by_name():
    steps = [assistant("", call("a", {}, "c1"), call("b", {}, "c2")),
             {"role": "tool", "tool_call_id": "c2", "content": "B"}, tool("a", "A"), tool("zzz", "stray")]
    calls = tool_calls(steps)
    assert [(c["name"], c["result"]) for c in calls] == [("a", "A"), ("b", "B"), ("zzz", "stray")]
    assert calls[2]["parse_error"] == "a tool result with no matching call"


def test_an_episode_without_tool_calls_and_plain_text_completions():
    _, v = view(["just text"], prompts=["a question"])
    assert v["messages"] == [[{"role": "user", "content": "a question"}, {"role": "assistant", "content": "just text"}]]
    assert v["tool_calls"] == [[]] and v["num_turns"] == [1] and v["final_text"] == ["just text"]


def test_environments_without_state_say_why():
    class Opaque:
        __slots__ = ()

    class Raises:
        def state_dict(self):
            raise RuntimeError("gone")

    batch, v = view([episode()] * 3, environments=[Opaque(), Raises(), None])
    assert v["env_state"] == [None, None, None]
    notes = [batch.trajectory_note("env_state", i) for i in range(3)]
    assert notes == ["environment Opaque has no state_dict() and no public attributes",
                     "Raises.state_dict() raised RuntimeError: gone", "no environment for this rollout"]


def test_state_dict_wins_and_snapshots_are_json():
    import json

    class Shop:
        def __init__(self):
            self.cart = {"apple": 2}
            self.total = float("nan")
            self.tags = {"b", "a"}
            self.opened = object()
            self._secret = "never"

    class WithStateDict(Shop):
        def state_dict(self):
            return {"cart": self.cart}

    batch, v = view([episode()] * 2, environments=[Shop(), WithStateDict()])
    assert v["env_state"][0] == {"cart": {"apple": 2}, "total": None, "tags": ["a", "b"], "opened": "<object>"}
    assert v["env_state"][1] == {"cart": {"apple": 2}}
    json.dumps(v["env_state"], allow_nan=False)
    # what was not JSON data is named, for a reward's reason; a clean snapshot has no note
    assert batch.trajectory_note("env_state", 0) == ("state values that are not JSON data were replaced: "
                                                     "state.total (nan, now null); state.opened (object, not JSON data)")
    assert batch.trajectory_note("env_state", 1) == ""


def test_a_state_mismatch_on_a_replaced_value_says_so():
    class Lab:
        def __init__(self, reading):
            self.reading = reading
            self.probe = object()

    result = rewardhub.get("final_state_match").evaluate(
        [PROMPT] * 2, [episode()] * 2, environments=[Lab(float("inf")), Lab(2.0)],
        expected_state=[{"reading": 2.0}] * 2)
    (bad, good) = result.scores
    assert bad.value == 0.0 and bad.reason == (
        "1 mismatch(es): state.reading is None, expected 2.0 (state values that are not JSON data were replaced: "
        "state.reading (inf, now null); state.probe (object, not JSON data))")
    assert (good.value, good.reason) == (1.0, "state matches")  # a match needs no caveat


def test_env_reward_calls_get_reward_sync_or_async():
    class Sync(Counter):
        def get_reward(self):
            return self.value / 10

    class Async(Counter):
        async def get_reward(self):
            return 0.25

    class Bad(Counter):
        def get_reward(self):
            return "high"

    batch, v = view([episode()] * 4, environments=[Sync(5), Async(), Bad(), Counter()])
    assert v["env_reward"] == [0.5, 0.25, None, None]
    assert batch.trajectory_note("env_reward", 2) == "Bad.get_reward() returned str, not a number"
    assert batch.trajectory_note("env_reward", 3) == "environment Counter has no get_reward()"


def test_columns_given_by_the_caller_win():
    _, v = view([episode()], turn_scores=[[0.5, 1.0]], env_state=[{"value": 9}], finish_reason=["length"],
                num_turns=[7])
    assert v["turn_scores"] == [[0.5, 1.0]] and v["env_state"] == [{"value": 9}] and v["num_turns"] == [7]
    assert v["truncated"] == [True]


def test_the_view_is_built_only_when_asked_and_once():
    batch = Batch([PROMPT], [episode()], {})
    assert batch._view is None
    rewardhub.get("exact_match").evaluate_batch(batch.subset([0]))
    assert batch._view is None
    first = batch.trajectory("tool_calls")
    assert batch.trajectory("tool_calls") is first


def test_a_batch_is_pickled_with_its_state_but_without_its_environments():
    batch = Batch([PROMPT], [episode()], {}, live={"environments": [Counter(3)]})
    batch.trajectory("env")
    copy = pickle.loads(pickle.dumps(batch))
    assert copy.live == {} and copy.trajectory("env_state") == [{"value": 3, "calls": 0}]
    assert copy.trajectory("env") == [None]


def test_rows_with_messages_instead_of_prompt_and_completion():
    whole = [*PROMPT, *episode(3)]
    batch = Batch.from_rows([{"messages": whole, "solution": "3"}])
    assert batch.prompts == [PROMPT] and batch.completions == [episode(3)]
    assert batch.texts == ["The counter holds 3."] and batch.trajectory("messages") == [whole]
    assert split_messages([{"role": "user", "content": "q"}]) == ([{"role": "user", "content": "q"}], [])


@pytest.mark.parametrize("name", TRAJECTORY_COLUMNS)
def test_function_rewards_ask_for_each_part_by_name(name):
    seen = {}
    factory = rewardhub.sample_reward(name="see_" + name)(_asker(name, seen))
    factory().evaluate([PROMPT], [episode(3)], environments=[Counter(3)])
    assert name in seen


def _asker(name, seen):
    namespace = {"seen": seen}
    exec(f"def ask(text, {name}):\n    seen[{name!r}] = {name}\n    return 1.0", namespace)
    return namespace["ask"]
