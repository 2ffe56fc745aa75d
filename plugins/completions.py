"""Turn what a trainer passes as a completion (plain text or chat messages) into the text to score."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NotText", "completion_text", "is_conversational", "is_episode", "message_text", "prompt_key"]


class NotText(ValueError):
    """The completion holds no text that can be scored; the message is the per-sample reason."""


def completion_text(completion: Any) -> str:
    """The text of a completion: the string itself, or the assistant content of a message list.

    TRL passes ``[{"role": "assistant", "content": ...}]`` for conversational data; content may be a
    string or a list of ``{"type": "text", "text": ...}`` parts. Several assistant messages are joined,
    except in an episode (tool calls or tool results): its text is the last assistant message's.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return message_text(completion)
    if isinstance(completion, Sequence) and not isinstance(completion, (bytes, bytearray)):
        if not completion:
            return ""
        messages = [m for m in completion if isinstance(m, Mapping)]
        if len(messages) != len(completion):
            raise NotText("completion is a list but not a list of chat messages")
        assistant = []
        episode = False  # an agent's turns with tools: its answer is the last assistant message
        for message in messages:  # one pass: this runs for every row of every batch
            role = message.get("role", "assistant")
            if role == "assistant":
                assistant.append(message)
                episode = episode or bool(message.get("tool_calls"))
            elif role == "tool":
                episode = True
        if episode:
            return message_text(assistant[-1]) if assistant else ""
        return "\n".join(message_text(m) for m in assistant or messages[-1:])
    raise NotText(f"completion is not text: got {type(completion).__name__}")


def is_episode(messages: Sequence[Any]) -> bool:
    """True for a message list with tool calls or tool results (an agent's episode, not a plain reply)."""
    return any(isinstance(m, Mapping) and (m.get("role") == "tool" or m.get("tool_calls")) for m in messages)


def message_text(message: Mapping) -> str:
    """The text content of one chat message (string content or text parts)."""
    content = message.get("content", "")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text" and part.get("text") is not None:
                parts.append(str(part["text"]))
        return "".join(parts)
    raise NotText(f"message content is not text: got {type(content).__name__}")


def prompt_key(prompt: Any) -> str:
    """A hashable identity for a prompt (plain or chat), used to group completions of the same prompt.

    Never raises: chat content that is not text (images, tool calls) is part of the identity in a
    canonical JSON form, so two prompts that differ only there are two groups.
    """
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and not isinstance(prompt, (bytes, bytearray)):
        return "\x1e".join(_message_key(m) for m in prompt)
    return _canonical(prompt)


def _message_key(message: Any) -> str:
    if not isinstance(message, Mapping):
        return _canonical(message)
    content = message.get("content", "")
    return f"{message.get('role', '')}\x1f{content if isinstance(content, str) else _canonical(content)}"


def _canonical(value: Any) -> str:
    """A stable text form of any value: sorted-key JSON, else its repr, else (nested past recursion) its identity."""
    try:
        return json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        try:
            return repr(value)
        except RecursionError:
            return f"<{type(value).__name__} nested too deeply, at {id(value):#x}>"


def is_conversational(value: Any) -> bool:
    """True for a list of chat messages (dicts with ``role``)."""
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and bool(value)
        and all(isinstance(m, Mapping) and "role" in m for m in value)
    )
