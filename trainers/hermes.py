"""The hermes tool-call text format (Qwen2.5/3, verl's and vLLM's ``hermes`` parser): turns from text.

A model writes ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` in its turn; the loop
answers with ``<tool_response>...</tool_response>`` blocks. Callers that only have text (verl's
response tokens, OpenRLHF's actions and feedback) rebuild messages with these functions; which text
is the model's and which the environment's is for the caller to know (the response mask, the step),
never guessed from the text, so a result the model typed stays the model's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CALL_NAME",
    "MARKERS",
    "TOOL_CALL",
    "TOOL_RESPONSE",
    "assistant_turn",
    "context_turns",
    "parse_call",
]

TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
TOOL_RESPONSE = re.compile(r"<tool_response>(.*?)</tool_response>", re.DOTALL)
CALL_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')
# ChatML turn markers, and the bare role lines they leave when decoded without special tokens
MARKERS = re.compile(r"<\|im_start\|>(?:user|assistant|tool|system)?\n?|<\|im_end\|>\n?|<\|endoftext\|>|"
                     r"^\s*(?:user|assistant)\s*$", re.MULTILINE)


def assistant_turn(text: str) -> dict[str, Any]:
    """One assistant turn's text as a message: ``<tool_call>`` blocks become its ``tool_calls``."""
    calls = [parse_call(block) for block in TOOL_CALL.findall(text)]
    message: dict[str, Any] = {"role": "assistant", "content": MARKERS.sub("", TOOL_CALL.sub("", text)).strip()}
    if calls:
        message["tool_calls"] = calls
    return message


def parse_call(block: str) -> dict[str, Any]:
    """One ``<tool_call>`` block: ``{"name", "arguments"}`` JSON; kept with its raw text when it does not parse."""
    try:
        parsed = json.loads(block)
    except ValueError:
        name = CALL_NAME.search(block)
        return {"type": "function", "function": {"name": name.group(1) if name else None, "arguments": block.strip()}}
    if not isinstance(parsed, Mapping):
        return {"type": "function", "function": {"name": None, "arguments": block.strip()}}
    return {"type": "function", "function": {"name": parsed.get("name"), "arguments": parsed.get("arguments", {})}}


def context_turns(text: str, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the loop added between turns: tool results (named after the calls they answer), else a user turn."""
    results = TOOL_RESPONSE.findall(text)
    if not results:
        stripped = MARKERS.sub("", text).strip()
        return [{"role": "user", "content": stripped}] if stripped else []
    calls = before[-1].get("tool_calls", []) if before and before[-1]["role"] == "assistant" else []
    names = [c["function"]["name"] for c in calls]
    return [{"role": "tool", "name": names[i] if i < len(names) else None, "content": result.strip()}
            for i, result in enumerate(results)]
