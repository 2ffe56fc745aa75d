"""An episode as the judge reads it: one JSON object per message, so no message can pose as another.

A policy can write anything in its own turns, including text that looks like a tool result or a
system note. Each message is shown as a JSON line whose ``role`` the trainer set and whose
``content`` is a JSON string, so text the assistant wrote stays inside its own quotes; tool calls
are shown as the calls made (name and arguments), tool results with the tool's name. Every string
(contents, call arguments, the final state's values) is read canonically first, so no line separator
(U+2028, U+2029, NEL) survives to start a line JSON does not escape, and section names in brackets
are neutralised (``delimit``): text inside a message cannot forge ``[Final state of the environment]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub.completions import NotText, message_text
from rewardhub.episode import parse_arguments
from rewardhub.rewards.text import canonical

from .delimit import RESPONSE_MARKERS, neutralised

__all__ = ["MAX_MESSAGE_CHARS", "episode_text", "state_text"]

MAX_MESSAGE_CHARS = 4000  # a longer content is cut in the middle (the judge still sees both ends)


_UNESCAPED_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"})


def episode_text(messages: Sequence[Mapping[str, Any]], tags: frozenset[str] = frozenset(),
                 headers: frozenset[str] = RESPONSE_MARKERS) -> str:
    """The messages of an episode as JSON lines: role, content and the calls an assistant made; no
    string in them can forge a section named in ``headers`` or a tag in ``tags``."""
    lines = (_json_line(_read(_shown(m))) for m in messages if isinstance(m, Mapping))
    return "\n".join(neutralised(line, tags, headers) for line in lines)


def state_text(state: Any, tags: frozenset[str] = frozenset(), headers: frozenset[str] = RESPONSE_MARKERS) -> str:
    """The environment's final state as JSON (``null`` when it exposes none), read like the episode."""
    return neutralised(_json_line(_read(state), sort_keys=True), tags, headers)


def _json_line(value: Any, sort_keys: bool = False) -> str:
    """One line of JSON: line separators JSON leaves raw are escaped too."""
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=str).translate(_UNESCAPED_BREAKS)


def _read(value: Any, depth: int = 0) -> Any:
    """``value`` with every string (keys too) read canonically; containers deeper than 50 levels as text."""
    if isinstance(value, str):
        return canonical(value)
    if depth > 50:
        return canonical(str(value)[:MAX_MESSAGE_CHARS])
    if isinstance(value, Mapping):
        return {(canonical(k) if isinstance(k, str) else k): _read(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_read(v, depth + 1) for v in value]
    return value


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
