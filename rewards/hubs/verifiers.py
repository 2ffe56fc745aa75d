"""``verifiers_task``: a verifiers (0.4) Task's own scoring (its ``@vf.reward`` methods and plugged reward
functions) as a rewardhub reward.

verifiers scores a rollout with ``await task.score(trace)``: each reward function gets the task's data and the
trace and records a weighted score; the rollout's reward is their weighted sum (``trace.reward``). For each
row this reward builds the task's data (``TaskData`` subclass the task declares) from the row's columns (the
data's own fields; ``prompt`` from the row's prompt) and a trace whose messages are the row's conversation
(prompt, then the completion's assistant turns, tool calls and tool results), scores it the way verifiers does,
and gives ``trace.reward``; the reason names each reward function's score and weight. Reward functions that
need a runtime (a sandbox) are skipped by verifiers when there is none, as they are here (said in the reason).
verifiers is imported only when the reward is built (``pip install verifiers``; it pins ``openai<3``, so it
lives in an environment of its own beside rewardhub's ``[all]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub import AsyncReward, ConfigError, Row, Score, hookimpl
from rewardhub.episode import whole_conversation

from ..deps import MissingExtraError
from .importing import load_object

__all__ = ["VerifiersTask", "trace_of"]


class VerifiersTask(AsyncReward):
    """``trace.reward`` after the verifiers task scores the row's conversation."""

    name = "verifiers_task"
    description = "a verifiers Task's own @vf.reward functions (import path) scoring the row's conversation"

    def __init__(self, *, task: str, config: dict[str, Any] | None = None, on_error: str = "none"):
        super().__init__(on_error=on_error)
        try:
            import verifiers.v1 as vf
        except ImportError as exc:
            raise MissingExtraError(f"reward 'verifiers_task' needs verifiers: pip install verifiers ({exc})") from exc
        task_class = load_object(task, "verifiers_task: task")
        if not (isinstance(task_class, type) and issubclass(task_class, vf.Task)):
            raise ConfigError(f"verifiers_task: {task!r} is not a verifiers Task class")
        config_type = task_class.config_type()
        try:
            self.task_config = config_type(**(config or {}))
        except Exception as exc:  # pydantic's ValidationError names the field
            raise ConfigError(f"verifiers_task: config is not a valid {config_type.__name__}: {exc}") from exc
        self.task_class = task_class
        self.data_type = task_class.data_type()
        self.task_path = task

    async def score_sample_async(self, text: str, row: Row) -> Score:
        fields = set(self.data_type.model_fields)
        values = {name: row[name] for name in row if name in fields and name != "prompt"}
        if "prompt" in fields and isinstance(row.prompt, str | list):
            values["prompt"] = row.prompt
        try:
            data = self.data_type(**values)
        except Exception as exc:
            return Score(None, f"the row is not a valid {self.data_type.__name__}: {exc}", outcome="error")
        task = self.task_class(data, self.task_config)
        trace = trace_of(data, type(task).__name__, whole_conversation(row.prompt, row.completion))
        await task.score(trace)
        scored = {name: reward for name, reward in trace.rewards.items() if reward is not None}
        offline = [fn.__name__ for fn in task.hooks("reward") if _needs_runtime(fn)]
        if not scored:
            unscored = [name for name in trace.rewards if name not in offline] + \
                [f"{name} (needs a runtime, skipped offline)" for name in offline]
            return Score(None, f"{type(task).__name__} scored nothing (reward functions: "
                               f"{', '.join(unscored) or 'none declared'})")
        value = trace.reward
        if not math.isfinite(value):
            return Score(None, f"{type(task).__name__} gave {value!r}", outcome="error")
        parts = ", ".join(f"{name}={reward.score:g}" + (f" x{reward.weight:g}" if reward.weight != 1 else "")
                          for name, reward in scored.items())
        skipped = [name for name, reward in trace.rewards.items() if reward is None] + \
            [f"{name} (needs a runtime)" for name in offline]
        note = f"; not scored: {', '.join(skipped)}" if skipped else ""
        return Score(float(value), f"{type(task).__name__}: {value:g} ({parts}){note}")


def trace_of(data: Any, task_type: str, messages: Sequence[Mapping[str, Any]]) -> Any:
    """A verifiers ``Trace`` of ``messages`` (chat dicts) on the task ``data``, one node per message."""
    from verifiers.v1.configs.agent import AgentConfig
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.trace import AgentInfo, Trace, TraceTask

    converted = [_message(m) for m in messages]
    nodes = [MessageNode(parent=i - 1 if i else None, message=m, sampled=m.role == "assistant")
             for i, m in enumerate(converted)]
    return Trace(task=TraceTask(type=task_type, data=data), agent=AgentInfo(config=AgentConfig()), nodes=nodes)


def _message(message: Mapping[str, Any]) -> Any:
    from verifiers.v1.types import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage

    role, content = message.get("role", "assistant"), message.get("content")
    text = content if isinstance(content, str) else "" if content is None else str(content)
    if role == "system":
        return SystemMessage(content=text)
    if role == "tool":
        return ToolMessage(tool_call_id=str(message.get("tool_call_id") or ""), content=text, name=message.get("name"))
    if role != "assistant":
        return UserMessage(content=text)
    calls = []
    for number, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function", call) if isinstance(call, Mapping) else {}
        arguments = function.get("arguments", "")
        calls.append(ToolCall(id=str(call.get("id") or f"call_{number}"), name=str(function.get("name")),
                              arguments=arguments if isinstance(arguments, str) else _json(arguments)))
    return AssistantMessage(content=text, tool_calls=calls or None)


def _needs_runtime(fn: Any) -> bool:
    """As verifiers decides it: a ``runtime`` parameter without a default."""
    import inspect

    param = inspect.signature(fn).parameters.get("runtime")
    return param is not None and param.default is inspect.Parameter.empty


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


@hookimpl
def register_rewards(register):
    register(VerifiersTask)
