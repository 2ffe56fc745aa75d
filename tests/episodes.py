"""Episodes as trainers hand them over (TRL 1.16's message lists), shared by the agent tests."""

from __future__ import annotations

from typing import Any

PROMPT = [{"role": "user", "content": "Set the counter to 3, then say what it holds."}]
SET_VALUE = {"type": "function", "function": {"name": "set_value", "description": "Set the counter.",
                                              "parameters": {"type": "object",
                                                             "properties": {"value": {"type": "integer"}},
                                                             "required": ["value"]}}}


def call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    """A tool call as TRL's ``parse_response`` leaves it (arguments already a dict)."""
    out: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        out["id"] = call_id
    return out


def assistant(content: str = "", *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def tool(name: str, content: str) -> dict[str, str]:
    """A tool result as TRL's tool loop appends it (``str(result)``; a failure is ``str({"error": ...})``)."""
    return {"role": "tool", "name": name, "content": content}


def episode(value: int = 3, final: str | None = None) -> list[dict[str, Any]]:
    """The honest episode: one call, its result, a final answer."""
    return [assistant("", call("set_value", {"value": value})), tool("set_value", str(value)),
            assistant(final if final is not None else f"The counter holds {value}.")]


class Counter:
    """An environment in TRL's style: public methods are tools, ``reset`` starts an episode."""

    def __init__(self, value: int = 0):
        self.value = value
        self.calls = 0

    def reset(self, **kwargs: Any) -> None:
        self.value, self.calls = 0, 0

    def set_value(self, value: int) -> str:
        """Set the counter.

        Args:
            value: The new value.
        """
        self.calls += 1
        self.value = int(value)
        return str(self.value)
