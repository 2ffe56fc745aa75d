"""verl's multi-turn episodes (agent loop, tools) as rewardhub rows, and per-turn scores at turn ends.

Checked against verl 0.9.1. Its ``ToolAgentLoop`` leaves one response per rollout: the model's tokens
(``response_mask`` 1) interleaved with tool results rendered by the chat template (mask 0), and
``tool_extra_fields`` (``turn_scores``, ``tool_rewards``, tool session data) plus ``__num_turns__``.
A custom ``compute_score`` only gets the decoded text, where a tool result the model *typed* looks
like one a tool returned; the reward manager (:mod:`.verl_manager`) sees the mask, and rebuilds the
episode from it here: each mask-1 run is an assistant turn (tool calls parsed in verl's ``hermes``
format), each mask-0 run the tool results of the turn before. The trajectory view then has
``messages``, ``tool_calls``, ``final_text``, ``num_turns`` (assistant turns; verl's own count is
``verl_num_turns``), ``turn_scores`` and ``tool_rewards`` from verl; ``extra_info`` keys are columns.

An episode's ``reward_score`` is a :class:`TurnTotal`: a float (the weighted total) that also carries
its parts by turn, which :func:`place_turns` puts at each turn's last model token where the reward
loop assembles the scores (``RewardLoopManager.compute_rm_score``); where verl places the score
itself (the agent loop's in-line reward) the total lands on the last token, as for any reward.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub import Batch, SetResult

from .hermes import assistant_turn, context_turns
from .shims import as_list
from .verl import LABEL_COLUMN

__all__ = [
    "RENAMED",
    "TurnTotal",
    "VERL_TOOL_FAILURE",
    "episode_batch",
    "episode_from_response",
    "place_turns",
    "turn_parts",
    "turn_runs",
    "turn_total",
]

# What verl 0.9.1's ToolAgentLoop._call_tool answers in place of a result when a call failed
VERL_TOOL_FAILURE = re.compile(r"(?:Error executing tool|Unknown function|Invalid JSON in arguments for) '[^']*'")
# extra_info keys verl writes; renamed where their meaning differs from the trajectory view's
RENAMED = {"num_turns": "verl_num_turns"}


class TurnTotal(float):
    """An episode's total reward (the float) and its parts by assistant turn (``turns``)."""

    turns: tuple[float, ...]

    def __new__(cls, total: float, turns: Sequence[float] = ()) -> TurnTotal:
        value = super().__new__(cls, total)
        value.turns = tuple(float(t) for t in turns)
        return value

    def __reduce__(self) -> tuple:
        return (TurnTotal, (float(self), self.turns))


def turn_runs(mask: Sequence[int]) -> list[tuple[int, int, int]]:
    """``(start, end, mask value)`` of each run of equal mask values (``end`` exclusive)."""
    runs: list[tuple[int, int, int]] = []
    for i, bit in enumerate(mask):
        bit = int(bit)
        if runs and runs[-1][2] == bit:
            runs[-1] = (runs[-1][0], i + 1, bit)
        else:
            runs.append((i, i + 1, bit))
    return runs


def episode_from_response(tokenizer: Any, response_ids: Sequence[int], response_mask: Sequence[int]) -> list[dict]:
    """The completion's messages, rebuilt from verl's response tokens and mask (hermes tool format)."""
    ids = [int(t) for t in response_ids]
    messages: list[dict[str, Any]] = []
    for start, end, bit in turn_runs(response_mask[: len(ids)]):
        text = tokenizer.decode(ids[start:end], skip_special_tokens=True)
        if bit:
            messages.append(assistant_turn(text))
        else:
            messages.extend(_with_failures(context_turns(text, messages)))
    return messages


def _with_failures(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results that are verl's own failure reports (``ToolAgentLoop._call_tool``: a tool that
    raised, an unknown tool, arguments that are not JSON) flagged as the call's ``error``."""
    for message in messages:
        if message["role"] == "tool" and VERL_TOOL_FAILURE.match(message["content"]):
            message["error"] = message["content"]
    return messages


def turn_parts(scored: SetResult, weights: Mapping[str, float], index: int, turns: int) -> list[float]:
    """Row ``index``'s weighted total split by assistant turn: a reward's ``turns`` where it gave them,
    else its whole value on the last turn."""
    parts = [0.0] * max(turns, 1)
    for alias, result in scored.components.items():
        score = result.scores[index]
        if score.value is None:
            continue
        if score.turns is not None and len(score.turns) == len(parts):
            for t, part in enumerate(score.turns):
                parts[t] += weights[alias] * part
        else:
            parts[-1] += weights[alias] * score.value
    return parts


def episode_batch(tokenizer: Any, response_ids: Sequence[int], response_mask: Sequence[int], data_source: Any,
             ground_truth: Any, extra_info: Mapping[str, Any] | None, tool_extra_fields: Mapping[str, Any] | None,
             num_turns: Any = None, label_column: str = LABEL_COLUMN) -> Batch:
    """The one-row rewardhub batch of a verl agent-loop response."""
    columns: dict[str, Any] = {}
    for source in (extra_info or {}), (tool_extra_fields or {}):
        columns.update({RENAMED.get(k, k): as_list(v) for k, v in dict(source).items()})
    prompt = columns.pop("raw_prompt", None) or columns.pop("prompt", None)
    columns.pop("prompt", None)
    columns["verl_num_turns"] = int(num_turns) if num_turns is not None else columns.get("verl_num_turns")
    columns["data_source"] = data_source
    columns[label_column] = ground_truth
    completion = episode_from_response(tokenizer, response_ids, response_mask)
    return Batch([as_list(prompt)], [completion], {k: [v] for k, v in columns.items()})


def turn_total(scored: SetResult, index: int, score: float, turns: int,
               weights: Mapping[str, float] | None = None) -> TurnTotal:
    """Row ``index``'s ``score`` with its parts by turn, weighted by ``scored.weights`` (else ``weights``);
    without parts (the whole score at the last token) when the row abstained, no weights are known, or the
    set's total is not the weighted sum of its members (``normalize_then_sum``): parts add up to the total."""
    weights = scored.weights or weights
    if scored.totals[index] is None or weights is None:
        return TurnTotal(score)
    parts = turn_parts(scored, weights, index, turns)
    if not math.isclose(sum(parts), score, rel_tol=1e-9, abs_tol=1e-9):
        return TurnTotal(score)
    return TurnTotal(score, parts)


def place_turns(data: Any, scores: Sequence[float], rm_scores: Any) -> Any:
    """``rm_scores`` (verl's placement: each score at the last response token) with each
    :class:`TurnTotal`'s parts moved to the last model token of their turns (``response_mask`` 1 runs)."""
    if "response_mask" not in data.batch.keys():
        return rm_scores
    prompt_length = data.batch["prompts"].size(1)
    valid = data.batch["attention_mask"][:, prompt_length:].sum(dim=1)
    for row, score in enumerate(scores):
        parts = getattr(score, "turns", ())
        if not parts:
            continue
        mask = data.batch["response_mask"][row, : int(valid[row])].tolist()
        ends = [end - 1 for _, end, bit in turn_runs(mask) if bit]
        if len(parts) != len(ends):
            continue
        rm_scores[row].zero_()
        for end, part in zip(ends, parts, strict=True):
            rm_scores[row, end] += part
    return rm_scores
