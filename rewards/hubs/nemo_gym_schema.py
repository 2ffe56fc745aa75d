"""NeMo-Gym's ``/verify`` request and response, pydantic-free, and their Responses-API <-> chat conversion.

NeMo-Gym (github NVIDIA-NeMo/Gym, ``nemo_gym/base_resources_server.py``) defines
``BaseVerifyRequest = {responses_create_params, response}`` (``NeMoGymResponseCreateParamsNonStreaming``
and ``NeMoGymResponse``, OpenAI Responses-API shapes) plus each server's own fields (``expected_answer``...),
and ``BaseVerifyResponse`` = the request plus a numeric ``reward`` (``reward_components`` for several
objectives). A response's ``output`` is the whole rollout: ``message``, ``function_call``,
``function_call_output`` and ``reasoning`` items. rewardhub reads it as chat messages (assistant turns
with OpenAI ``tool_calls``, ``tool`` results), which the episode view reads like any other trajectory.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardhub import RewardInputError

__all__ = ["NeMoGymSchemaError", "VerifyRequest", "create_params", "input_messages", "output_messages",
           "response_body"]

REQUEST_FIELDS = ("responses_create_params", "response")


class NeMoGymSchemaError(RewardInputError):
    """A body that is not NeMo-Gym's verify request; the message names the field and what it should be."""


@dataclass(frozen=True)
class VerifyRequest:
    """A ``/verify`` body: the Responses-API request and response, and the row's other fields."""

    responses_create_params: dict[str, Any]
    response: dict[str, Any]
    fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_body(cls, body: Any) -> VerifyRequest:
        if not isinstance(body, Mapping):
            raise NeMoGymSchemaError(f"a verify request is a JSON object; got {type(body).__name__}")
        for name in REQUEST_FIELDS:
            if not isinstance(body.get(name), Mapping):
                raise NeMoGymSchemaError(f"'{name}' must be an object (NeMo-Gym's BaseVerifyRequest); got "
                                         f"{'nothing' if name not in body else type(body[name]).__name__}")
        params, response = dict(body["responses_create_params"]), dict(body["response"])
        if not isinstance(params.get("input"), str | list):
            raise NeMoGymSchemaError("'responses_create_params.input' must be a string or a list of input items")
        if not isinstance(response.get("output"), list):
            raise NeMoGymSchemaError("'response.output' must be a list of output items (message, function_call, ...)")
        for where, items in (("responses_create_params.input", params["input"]), ("response.output", response["output"])):
            if isinstance(items, list):
                bad = next((i for i, item in enumerate(items) if not isinstance(item, Mapping)), None)
                if bad is not None:
                    raise NeMoGymSchemaError(f"'{where}[{bad}]' must be an object; got {type(items[bad]).__name__}")
        return cls(params, response, {k: v for k, v in body.items() if k not in REQUEST_FIELDS})

    def as_body(self) -> dict[str, Any]:
        return {"responses_create_params": self.responses_create_params, "response": self.response, **self.fields}

    def tools(self) -> list[dict[str, Any]] | None:
        tools = self.responses_create_params.get("tools")
        return list(tools) if isinstance(tools, list) and tools else None


# ----- Responses API -> chat messages ---------------------------------------------------------------
def input_messages(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The prompt of ``responses_create_params``: ``instructions`` as a system message, then ``input``."""
    head = [{"role": "system", "content": params["instructions"]}] if params.get("instructions") else []
    items = params.get("input")
    if isinstance(items, str):
        return [*head, {"role": "user", "content": items}]
    return [*head, *_items_to_messages(items or [])]


def output_messages(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rollout in ``response.output`` as chat messages: assistant turns (text and ``tool_calls``), tool results."""
    return _items_to_messages(response.get("output") or [])


def _items_to_messages(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role", "assistant")
            text = _content_text(item.get("content"))
            if role == "assistant" and messages and _open_assistant(messages[-1]) and not messages[-1]["content"]:
                messages[-1]["content"] = text  # calls then text in one turn: one assistant message
            else:
                messages.append({"role": role, "content": text})
        elif kind == "function_call":
            call = {"id": item.get("call_id") or item.get("id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments", "")}}
            if messages and _open_assistant(messages[-1]):
                messages[-1].setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                             "content": output if isinstance(output, str) else _content_text(output)})
        # reasoning items and other tools' bookkeeping (mcp_list_tools, ...) are not turns of the conversation
    return messages


def _open_assistant(message: Mapping[str, Any]) -> bool:
    """An assistant message that later items of the same turn (calls, text) still belong to."""
    return message.get("role") == "assistant"


def _content_text(content: Any) -> str:
    """A Responses-API content (a string, or parts: output_text, input_text, refusal) as plain text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, Mapping):
            text = part.get("text", part.get("refusal"))
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts)


# ----- chat messages -> Responses API ---------------------------------------------------------------
def create_params(prompt: Any, tools: Any = None) -> dict[str, Any]:
    """``responses_create_params`` for a rewardhub prompt (a string or chat messages) and its tools."""
    if isinstance(prompt, str):
        items: Any = prompt
    else:
        items = []
        for message in prompt or []:
            items.extend(_message_to_items(message, input_side=True))
    params: dict[str, Any] = {"input": items}
    if tools:
        params["tools"] = [_responses_tool(spec) for spec in tools]
    return params


def response_body(completion: Any, *, model: str = "rewardhub", tools: Any = None) -> dict[str, Any]:
    """A ``NeMoGymResponse`` holding a rewardhub completion (a string or the chat messages of a rollout)."""
    messages = [{"role": "assistant", "content": completion}] if isinstance(completion, str) else completion or []
    output: list[dict[str, Any]] = []
    for message in messages:
        output.extend(_message_to_items(message, input_side=False))
    return {"id": f"resp_{uuid.uuid4().hex}", "object": "response", "created_at": float(int(time.time())),
            "model": model, "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [_responses_tool(spec) for spec in tools or []], "status": "completed"}


def _message_to_items(message: Mapping[str, Any], *, input_side: bool) -> list[dict[str, Any]]:
    role = message.get("role", "assistant")
    text = message.get("content")
    text = text if isinstance(text, str) else _content_text(text)
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message.get("tool_call_id"), "output": text}]
    items: list[dict[str, Any]] = []
    if role != "assistant":
        return [{"type": "message", "role": role, "content": text}]
    if text:
        items.append({"type": "message", "role": "assistant", "content": text} if input_side else
                     {"type": "message", "role": "assistant", "id": f"msg_{uuid.uuid4().hex}", "status": "completed",
                      "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for number, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function", call) if isinstance(call, Mapping) else {}
        arguments = function.get("arguments", "")
        items.append({"type": "function_call", "call_id": call.get("id") or f"call_{number}",
                      "name": function.get("name"),
                      "arguments": arguments if isinstance(arguments, str) else _json_text(arguments)})
    return items


def _responses_tool(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A tool spec in the Responses API's flat form (``{"type": "function", "name", "parameters"}``)."""
    function = spec.get("function", spec)
    return {"type": "function", "name": function.get("name"), "description": function.get("description"),
            "parameters": function.get("parameters", {"type": "object", "properties": {}}),
            "strict": function.get("strict", False)}


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value)
