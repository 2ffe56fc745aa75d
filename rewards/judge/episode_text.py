"""An episode as the judge reads it: one JSON object per message, so no message can pose as another.

A policy can write anything in its own turns, including text that looks like a tool result or a
system note. Each message is shown as a JSON line whose ``role`` the trainer set and whose
``content`` is a JSON string, so text the assistant wrote stays inside its own quotes; tool calls
are shown as the calls made (name and arguments), tool results with the tool's name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub.completions import NotText, message_text
from rewardhub.episode import parse_arguments

MAX_MESSAGE_CHARS = 4000  # a longer content is cut in the middle (the judge still sees both ends)


def episode_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The messages of an episode as JSON lines: role, content and the calls an assistant made."""
    return "\n".join(json.dumps(_shown(m), ensure_ascii=False) for m in messages if isinstance(m, Mapping))


def state_text(state: Any) -> str:
    """The environment's final state as JSON (``null`` when it exposes none)."""
    return json.dumps(state, ensure_ascii=False, sort_keys=True, default=str)


def _shown(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message.get("role", "assistant"))
    shown: dict[str, Any] = {"role": role}
    if role == "tool" and message.get("name"):
        shown["name"] = str(message["name"])
    try:
        shown["content"] = _cut(message_text(message))
    except NotText:
        shown["content"] = "(content that is not text)"
    calls = message.get("tool_calls")
    if role == "assistant" and isinstance(calls, Sequence) and not isinstance(calls, str) and calls:
        shown["tool_calls"] = [_call(c) for c in calls]
    return shown


def _call(raw: Any) -> dict[str, Any]:
    function = raw.get("function", raw) if isinstance(raw, Mapping) else {}
    if not isinstance(function, Mapping):
        function = {}
    arguments, problem = parse_arguments(function.get("arguments", {}))
    call: dict[str, Any] = {"name": function.get("name"), "arguments": arguments}
    if problem:
        call["malformed"] = problem
    return call


def _cut(text: str) -> str:
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    half = MAX_MESSAGE_CHARS // 2
    return f"{text[:half]} [... {len(text) - 2 * half} characters cut ...] {text[-half:]}"
