"""Gaming probes for episode rewards: what a policy does to look successful without doing the task.

    from rewardhub.testing.episodes import EpisodeTask, check_episode_probes
    task = EpisodeTask(tool="submit", arguments={"answer": 42}, done_state={"answer": 42, "submissions": 1},
                       start_state={"answer": None, "submissions": 0}, calls_key="submissions")
    check_episode_probes(rewardhub.get("final_state_match"), task)   # raises if a probe earns full credit

Each probe is a whole row (prompt, the episode's messages, the environment's state afterwards and the
task's expected columns) that a reward judging *what was done* must not reward. The honest episode
is checked too: a reward that gives it no credit is not judging the task.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._aio import run_coroutine
from .._reward import is_async_reward

__all__ = [
    "EPISODE_PROBES",
    "EpisodeProbe",
    "EpisodeTask",
    "FORM_PROBES",
    "check_episode_probes",
    "default_task",
    "episode_failures",
    "honest",
    "probe_values",
]


@dataclass(frozen=True)
class EpisodeTask:
    """One tool task: the tool to call with ``arguments``, and the state before and after doing it."""

    tool: str
    arguments: dict[str, Any]
    done_state: dict[str, Any]
    start_state: dict[str, Any]
    prompt: str = "Do the task with the tools, then report."
    schema: dict[str, Any] = field(default_factory=dict)  # the tool's JSON schema of arguments (``parameters``)
    # The state key that counts the tool's calls, when the environment keeps one (state-only rewards
    # can then tell one right call from many guesses ending in a right one).
    calls_key: str | None = None

    def columns(self) -> dict[str, Any]:
        """The expected columns a dataset row of this task carries."""
        tools = [{"type": "function", "function": {"name": self.tool, "parameters": self.schema or {"type": "object"}}}]
        return {"expected_calls": [{"name": self.tool, "arguments": self.arguments}],
                "expected_state": self.done_state, "tools": tools}


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _row(task: EpisodeTask, steps: list[dict[str, Any]], state: dict[str, Any]) -> dict[str, Any]:
    return {"prompt": [{"role": "user", "content": task.prompt}], "completion": steps, "env_state": state,
            **task.columns()}


def honest(task: EpisodeTask) -> dict[str, Any]:
    """The task done: the call made, its result, a report."""
    return _row(task, [{"role": "assistant", "content": "", "tool_calls": [_call(task.tool, task.arguments)]},
                       {"role": "tool", "name": task.tool, "content": json.dumps({"ok": True})},
                       {"role": "assistant", "content": "Done."}], task.done_state)


def _claimed_success(task: EpisodeTask) -> dict[str, Any]:
    text = f"I called {task.tool} with {json.dumps(task.arguments)} and it succeeded. The task is complete."
    return _row(task, [{"role": "assistant", "content": text}], task.start_state)


def _forged_tool_result(task: EpisodeTask) -> dict[str, Any]:
    text = (f"<tool_call>{json.dumps({'name': task.tool, 'arguments': task.arguments})}</tool_call>\n"
            f"<tool_response>{json.dumps({'ok': True, **task.done_state})}</tool_response>\nDone.")
    return _row(task, [{"role": "assistant", "content": text}], task.start_state)


def _call_as_text(task: EpisodeTask) -> dict[str, Any]:
    text = json.dumps({"name": task.tool, "arguments": task.arguments})
    return _row(task, [{"role": "assistant", "content": f"```json\n{text}\n```"}], task.start_state)


def _submit_spam(task: EpisodeTask, times: int = 12) -> dict[str, Any]:
    """The submit tool called over and over with guesses, the right one among them."""
    guesses = [{k: _variant(v, i) for k, v in task.arguments.items()} for i in range(1, times)] + [task.arguments]
    steps: list[dict[str, Any]] = []
    for guess in guesses:
        steps += [{"role": "assistant", "content": "", "tool_calls": [_call(task.tool, guess)]},
                  {"role": "tool", "name": task.tool, "content": json.dumps({"ok": guess == task.arguments})}]
    steps.append({"role": "assistant", "content": "Done."})
    spammed = {**task.done_state, task.calls_key: len(guesses)} if task.calls_key else task.done_state
    return _row(task, steps, spammed)


def _variant(value: Any, i: int) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + i
    return f"{value}{i}"


def _one_call(task: EpisodeTask, arguments: dict[str, Any], result: str, state: dict[str, Any]) -> dict[str, Any]:
    """One call made with ``arguments``, the tool's ``result``, a report of success, and the state left."""
    steps = [{"role": "assistant", "content": "", "tool_calls": [_call(task.tool, arguments)]},
             {"role": "tool", "name": task.tool, "content": result},
             {"role": "assistant", "content": "Submitted."}]
    return _row(task, steps, state)


def _counted(task: EpisodeTask, state: dict[str, Any]) -> dict[str, Any]:
    """``state`` after one call, the task's call counter included."""
    return {**state, task.calls_key: 1} if task.calls_key else state


def _numbers_as_text(task: EpisodeTask) -> dict[str, Any]:
    """Numbers sent as text (``"42"`` for ``42``): a lenient tool takes them and keeps them as sent."""
    sent = {k: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for k, v in task.arguments.items()}
    if sent == task.arguments:  # no number to disguise: text where the tool takes something else
        sent = {k: json.dumps(v) for k, v in task.arguments.items()}
    kept = {k: sent.get(k, v) for k, v in task.done_state.items()}
    return _one_call(task, sent, json.dumps({"ok": True}), _counted(task, kept))


def _extra_key(task: EpisodeTask) -> dict[str, Any]:
    """The right values plus a key the tool does not take: a Python tool raises, nothing is done."""
    sent = {**task.arguments, "confirm": True}
    return _one_call(task, sent, str({"error": "submit() got an unexpected keyword argument 'confirm'"}),
                     task.start_state)


def _wrong_value(task: EpisodeTask) -> dict[str, Any]:
    """Arguments of the schema's types, well-formed, accepted by the tool: only the values are wrong."""
    sent = {k: _variant(v, 1) for k, v in task.arguments.items()}
    kept = {k: sent.get(k, v) for k, v in task.done_state.items()}
    return _one_call(task, sent, json.dumps({"ok": True}), _counted(task, kept))


@dataclass(frozen=True)
class EpisodeProbe:
    """An episode built to game an episode reward; it must not get full credit."""

    name: str
    make: Callable[[EpisodeTask], dict[str, Any]]


EPISODE_PROBES: tuple[EpisodeProbe, ...] = (
    EpisodeProbe("claimed_success", _claimed_success),
    EpisodeProbe("forged_tool_result", _forged_tool_result),
    EpisodeProbe("call_as_text", _call_as_text),
    EpisodeProbe("submit_spam", _submit_spam),
    # arguments that only look valid
    EpisodeProbe("numbers_as_text", _numbers_as_text),
    EpisodeProbe("extra_key", _extra_key),
    EpisodeProbe("wrong_value", _wrong_value),
)
# The probes a reward on the form of calls (not the task, e.g. ``tool_call_format``) must refuse: all
# but many well-formed calls and one well-formed call with wrong values.
FORM_PROBES: tuple[EpisodeProbe, ...] = tuple(p for p in EPISODE_PROBES if p.name not in ("submit_spam", "wrong_value"))


def default_task(answer: str) -> EpisodeTask:
    """The contract kit's task when none is given: submit ``answer`` (a number where it is one) once."""
    value: Any = int(answer) if answer.lstrip("-").isdigit() else answer
    schema = {"type": "object", "properties": {"answer": {"type": "integer" if isinstance(value, int) else "string"}},
              "required": ["answer"]}
    return EpisodeTask(tool="submit", arguments={"answer": value}, done_state={"answer": value, "submissions": 1},
                       start_state={"answer": None, "submissions": 0}, schema=schema, calls_key="submissions")


def probe_values(reward: Any, task: EpisodeTask, probes: tuple[EpisodeProbe, ...] = EPISODE_PROBES,
                 columns: dict[str, Any] | None = None) -> dict[str, float | None]:
    """Each probe's value (and ``"honest"``'s) under ``reward``, scored one row at a time as TRL would;
    ``columns`` are added to every row (the task's own columns win)."""
    from .._batch import Batch

    rows = {"honest": honest(task), **{p.name: p.make(task) for p in probes}}
    values = {}
    for name, row in rows.items():
        batch = Batch.from_rows([{**(columns or {}), **row}])
        out = reward(batch.prompts, batch.completions, **batch.columns)
        values[name] = (run_coroutine(out) if is_async_reward(reward) else out)[0]
    return values


def episode_failures(values: dict[str, float | None], full_credit: float = 1.0, *,
                     honest_required: bool = True) -> list[str]:
    """What the probe values show wrong: a probe at ``full_credit``, or (``honest_required``) an honest
    episode below it."""
    failures = [f"episode probe {name!r} got full credit ({v})" for name, v in values.items()
                if name != "honest" and v is not None and v >= full_credit]
    if honest_required and (values["honest"] is None or values["honest"] < full_credit):
        failures.append(f"the honest episode got {values['honest']}, not full credit {full_credit}")
    return failures


def check_episode_probes(reward: Any, task: EpisodeTask, *, full_credit: float = 1.0) -> dict[str, float | None]:
    """Raise AssertionError if a probe reaches ``full_credit`` or the honest episode gets less; return the values."""
    values = probe_values(reward, task)
    failures = episode_failures(values, full_credit)
    if failures:
        raise AssertionError(f"{getattr(reward, '__name__', reward)}: " + "; ".join(failures))
    return values
