"""The trajectory view: what an agent did across turns and tools, asked for by parameter name.

A reward that names ``tool_calls`` (or ``messages``, ``env_state``, ...) gets that part of each
row's episode, like any column; nothing here runs unless a reward asks. A caller that knows a part
better (verl's per-turn scores, a file's ``env_state``) passes it as a column of that name, which
wins over what is derived here. Derived parts:

``messages``      the whole conversation: prompt messages, then the completion's turns, tool calls and results kept
``final_text``    the last assistant message's text (what text rewards such as ``math`` read on an episode)
``tool_calls``    ``[{turn, name, arguments, result, error, id, parse_error}]`` in call order
``num_turns``     the number of assistant turns
``turn_scores``   per-turn scores from the trainer (a column), else ``None``
``env_reward``    the environment's ``get_reward()``, else ``None``
``env_state``     a JSON snapshot: ``state_dict()`` if the environment has one, else its public attributes
``env``           the live environment (in this process only: never pickled, logged, cached or sent)
``finish_reason`` why generation stopped (a column), else ``"tool_calls"`` when the episode ends on an unanswered call
``truncated``     ``finish_reason == "length"`` (or a column), else ``None``

Where a part is ``None`` the view keeps a note saying why (``Batch.trajectory_note``), for rewards
to give as their reason; an ``env_state`` whose values were not all JSON data keeps a note naming
what was replaced.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._live import NoState, env_state, live_objects
from .completions import NotText, is_episode, message_text

if TYPE_CHECKING:
    from ._batch import Batch

# Per-row live objects (TRL's ``environments``, our ``env``): they never leave the process.
LIVE_COLUMNS = ("environments", "env")
TRAJECTORY_COLUMNS = ("messages", "final_text", "tool_calls", "num_turns", "turn_scores", "env_reward",
                      "env_state", "env", "finish_reason", "truncated")
__all__ = ["LIVE_COLUMNS", "TRAJECTORY_COLUMNS", "TrajectoryView", "env_reward", "env_state", "final_text", "is_episode",
           "num_turns", "parse_arguments", "split_messages", "tool_calls", "whole_conversation"]
# A tool result that may be an error report: a mapping whose first key is "error" (TRL writes str({"error": str(e)})).
_ERROR_REPORT = re.compile(r"\A\s*\{\s*(['\"])error\1\s*:")


def final_text(messages: Sequence[Mapping]) -> str:
    """The text of the last assistant message (``""`` when the episode has none)."""
    for message in reversed(messages):
        if message.get("role", "assistant") == "assistant":
            return message_text(message)
    return ""


def split_messages(messages: Sequence[Mapping]) -> tuple[list[Mapping], list[Mapping]]:
    """A whole conversation as (prompt, completion): the completion starts at the first assistant message."""
    for i, message in enumerate(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            return list(messages[:i]), list(messages[i:])
    return list(messages), []


def whole_conversation(prompt: Any, completion: Any) -> list[dict[str, Any]]:
    """``messages`` for one row: chat prompt messages (or a user message) followed by the completion's."""
    if isinstance(completion, Mapping):
        completion = [completion]
    if isinstance(prompt, str):
        head: list[Any] = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, Sequence) and not isinstance(prompt, bytes | bytearray):
        head = [dict(m) for m in prompt if isinstance(m, Mapping)]
    else:
        head = []
    if isinstance(completion, str):
        return [*head, {"role": "assistant", "content": completion}]
    if isinstance(completion, Sequence) and not isinstance(completion, bytes | bytearray):
        return [*head, *(dict(m) for m in completion if isinstance(m, Mapping))]
    return head


def tool_calls(messages: Sequence[Mapping]) -> list[dict[str, Any]]:
    """Every tool call of an episode in order, each paired with its result.

    ``turn`` is the assistant turn that made the call (1 = the first); ``arguments`` the parsed JSON
    object (the raw text when it does not parse, with ``parse_error`` saying why); ``result`` the
    tool message's text (``None`` when no result came back); ``error`` the tool's failure as the
    trainer reported it (TRL writes ``{"error": ...}``), else ``None``.
    """
    calls: list[dict[str, Any]] = []
    turn = 0
    open_calls: list[dict[str, Any]] = []  # the latest assistant turn's calls still waiting for a result
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role", "assistant")
        if role == "assistant":
            turn += 1
            open_calls = [_call(raw, turn) for raw in _raw_calls(message)]
            calls.extend(open_calls)
        elif role == "tool":
            call = _answered_call(open_calls, message)
            text, error = _result(message)
            if call is None:  # a result nobody asked for (or more results than calls)
                calls.append({"turn": turn, "name": message.get("name"), "arguments": None, "result": text,
                              "error": error, "id": message.get("tool_call_id"),
                              "parse_error": "a tool result with no matching call"})
                continue
            call["result"], call["error"] = text, error
            open_calls.remove(call)
    return calls


def _raw_calls(message: Mapping) -> list[Any]:
    raw = message.get("tool_calls")
    if raw is None:
        return []
    if isinstance(raw, Sequence) and not isinstance(raw, str | bytes | bytearray):
        return list(raw)
    return [_Malformed(f"tool_calls is a {type(raw).__name__}, not a list of calls")]


class _Malformed:
    def __init__(self, reason: str):
        self.reason = reason


def _call(raw: Any, turn: int) -> dict[str, Any]:
    call: dict[str, Any] = {"turn": turn, "name": None, "arguments": None, "result": None, "error": None,
                            "id": None, "parse_error": None}
    if isinstance(raw, _Malformed):
        call["parse_error"] = raw.reason
        return call
    if not isinstance(raw, Mapping):
        call["parse_error"] = f"a tool call must be an object, got {type(raw).__name__}"
        return call
    call["id"] = raw.get("id")
    kind = raw.get("type", "function")
    function = raw.get("function", raw) if kind == "function" else raw
    if not isinstance(function, Mapping):
        call["parse_error"] = f"the call's function must be an object, got {type(function).__name__}"
        return call
    name = function.get("name")
    call["name"] = name if isinstance(name, str) else None
    arguments, problem = parse_arguments(function.get("arguments", function.get("parameters", {})))
    call["arguments"] = arguments
    if kind != "function":
        problem = f"unsupported tool call type {kind!r}"
    elif call["name"] is None or not call["name"].strip():
        problem = "the call names no function"
    call["parse_error"] = problem
    return call


def parse_arguments(raw: Any) -> tuple[Any, str | None]:
    """A call's arguments as a JSON object, and what is wrong with them (``None`` when nothing is)."""
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            return raw, f"arguments are not valid JSON: {exc}"
        except RecursionError:  # a hostile call: its row says so, the batch goes on
            return raw, "arguments are nested too deeply to parse"
    else:
        value = raw
    if not isinstance(value, Mapping):
        return value, f"arguments must be a JSON object, got {_json_type(value)}"
    return dict(value), None


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def _answered_call(open_calls: list[dict[str, Any]], message: Mapping) -> dict[str, Any] | None:
    """The waiting call this tool message answers: by call id, else by name, else the first waiting."""
    if not open_calls:
        return None
    call_id = message.get("tool_call_id")
    if call_id is not None:
        for call in open_calls:
            if call["id"] == call_id:
                return call
    name = message.get("name")
    if name is not None:
        for call in open_calls:
            if call["name"] == name:
                return call
    return open_calls[0]


def _result(message: Mapping) -> tuple[str | None, str | None]:
    """A tool message's text and the failure it reports, if any."""
    try:
        text = message_text(message)
    except NotText as exc:
        return None, f"the tool result is not text: {exc}"
    flagged = message.get("error") or (message.get("is_error") and (text or "the tool failed"))
    if flagged:
        return text, str(flagged)
    return text, _reported_error(text)


def _reported_error(text: str) -> str | None:
    """The failure a result reports: ``{"error": ...}`` alone, as JSON or as a Python dict, at any length.

    TRL turns a tool's exception into ``str({"error": str(e)})``: an exception with no message is
    ``{'error': ''}``, still a failure. A mapping with other keys beside ``error`` is what a tool that worked
    returned (a code tool's ``{"stdout": ..., "error": "NameError..."}`` reports the *program's* error): no
    failure of the call. Only text shaped like an error report is decoded, so long results cost one match.
    """
    stripped = text.strip()
    if not stripped.endswith("}") or _ERROR_REPORT.match(stripped) is None:
        return None
    for decode in (json.loads, ast.literal_eval):  # TRL writes str({"error": str(e)}): a Python literal
        try:
            value = decode(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if not isinstance(value, Mapping) or set(value) != {"error"} or value["error"] in (None, False):
            return None
        return str(value["error"]).strip() or "the tool raised an exception with no message"
    return None


def num_turns(messages: Sequence[Mapping]) -> int:
    return sum(1 for m in messages if isinstance(m, Mapping) and m.get("role", "assistant") == "assistant")


def finish_reason(messages: Sequence[Mapping]) -> str | None:
    """``"tool_calls"`` when the episode ends on a call that got no result (the loop stopped mid-way)."""
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "tool":
            return None
        if isinstance(message, Mapping) and message.get("role", "assistant") == "assistant":
            return "tool_calls" if message.get("tool_calls") else None
    return None


def env_reward(env: Any) -> float | None:
    """``env.get_reward()`` (awaited when async); raises :class:`NoState` with the reason when there is none."""
    if env is None:
        raise NoState("no environment for this rollout")
    if getattr(env, "rewardhub_scores_itself", False):  # its get_reward() is rewardhub: asking would recurse
        raise NoState(f"{type(env).__name__}.get_reward() is this reward set's own score")
    get_reward = getattr(env, "get_reward", None)
    if not callable(get_reward):
        raise NoState(f"environment {type(env).__name__} has no get_reward()")
    try:
        if inspect.iscoroutinefunction(get_reward):
            from ._aio import run_coroutine

            value = run_coroutine(get_reward())
        else:
            value = get_reward()
    except Exception as exc:
        raise NoState(f"{type(env).__name__}.get_reward() raised {type(exc).__name__}: {exc}") from None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NoState(f"{type(env).__name__}.get_reward() returned {type(value).__name__}, not a number")
    return float(value)


class TrajectoryView:
    """The derived trajectory columns of one batch, each built on first use and kept for the batch."""

    def __init__(self, batch: Batch):
        self._batch = batch
        self._columns: dict[str, list[Any]] = {}
        self._notes: dict[str, dict[int, str]] = {}
        self._lock = threading.RLock()  # rewards of one set may read one batch from several threads

    def column(self, name: str) -> list[Any]:
        values = self._columns.get(name)
        if values is None:
            with self._lock:
                values = self._columns.get(name)
                if values is None:
                    values = self._columns[name] = self._build(name)
        return values

    def note(self, name: str, index: int) -> str:
        self.column(name)
        return self._notes.get(name, {}).get(index, "")

    def _build(self, name: str) -> list[Any]:
        batch = self._batch
        given = batch.columns.get(name)
        if given is not None and name != "messages":
            return list(given)
        if name == "messages":
            return self._messages()
        if name == "env":

            return live_objects(batch)
        if name == "env_state":
            return self._per_env(name, _snapshot)
        if name == "env_reward":
            return self._per_env(name, lambda env: (env_reward(env), ""))
        if name == "truncated":
            reasons = self.column("finish_reason")
            return [None if r is None else r == "length" for r in reasons]
        if name == "turn_scores":
            self._notes[name] = {i: "the trainer gave no per-turn scores" for i in range(len(batch))}
            return [None] * len(batch)
        derive = {"final_text": final_text, "tool_calls": tool_calls, "num_turns": num_turns,
                  "finish_reason": finish_reason}[name]
        return self._per_row(name, derive)

    def _per_row(self, name: str, derive: Any) -> list[Any]:
        """``derive(messages)`` for each row; a row nested too deeply to walk is ``None`` with a note,
        never an exception that would end the whole batch."""
        values: list[Any] = []
        for i, messages in enumerate(self.column("messages")):
            try:
                values.append(derive(messages))
            except RecursionError:
                values.append(None)
                self._notes.setdefault(name, {})[i] = f"the episode is nested too deeply to read its {name}"
        return values

    def _messages(self) -> list[list[dict[str, Any]]]:
        given = self._batch.columns.get("messages")
        out = []
        for i in range(len(self._batch)):
            value = given[i] if given is not None else None
            if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
                out.append([m for m in value if isinstance(m, Mapping)])
            else:
                out.append(whole_conversation(self._batch.prompts[i], self._batch.completions[i]))
        return out

    def _per_env(self, name: str, read: Any) -> list[Any]:
        """``read(env) -> (value, note)`` for each row's environment; a :class:`NoState` is ``None`` and its reason."""
        values: list[Any] = []
        notes: dict[int, str] = {}
        for i, env in enumerate(self.column("env")):
            try:
                value, note = read(env)
            except NoState as exc:
                value, note = None, str(exc)
            values.append(value)
            if note:
                notes[i] = note
        self._notes[name] = notes
        return values


def _snapshot(env: Any) -> tuple[Any, str]:
    """``env_state(env)`` and, when some of its values are not JSON data, a note naming them."""
    lost: list[str] = []
    state = env_state(env, lost)
    if not lost:
        return state, ""
    shown = "; ".join(lost[:3]) + (f"; and {len(lost) - 3} more" if len(lost) > 3 else "")
    return state, f"state values that are not JSON data were replaced: {shown}"
