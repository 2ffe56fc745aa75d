"""The judge's ``ruler`` mode: a whole group of agent trajectories graded in one request (RULER-style).

RULER (OpenPipe ART's ``art.rewards.ruler``) asks one judge call to score every trajectory of a group between
0 and 1, relative to each other, and sends the messages all trajectories share (system prompt, task, shared
first turns) once. This mode does the same on the trajectory view: each row's ``messages`` (the prompt, the
assistant turns with their tool calls, the tool results), the group's longest common prefix once in
``<context>``, the tools (the ``tools`` column, when the group shares it) once in ``<available_tools>``, and
each trajectory's own messages in ``<trajectory id="n">``, listed in an order drawn from their content (stable,
unrelated to the batch's). The judge answers ``{"scores": [{"trajectory_id", "explanation", "score"}]}``; the
reward is the score, the reason the explanation. A group whose answer lacks a trajectory, or gives a score
outside 0..1, abstains (outcome ``error``) as the other group modes do; so do lone and incomplete groups.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub import Batch, Score

from .client import JudgeStats, shorten
from .delimit import defused
from .errors import JudgeConfigError
from .ranking import _GroupJudge, _json, shuffled

__all__ = ["DEFAULT_STANDARDS", "RulerJudge", "common_prefix", "read_scores"]

DEFAULT_STANDARDS = """- A trajectory that achieves the goal scores well above any that does not.
- Between two that achieve it, the one that gets there more directly (fewer wasted steps and tool calls) scores higher.
- Small differences in quality give small differences in score; large ones, large.
- Partial progress towards the goal earns partial credit."""
RULER_TAGS = frozenset({"context", "available_tools", "trajectory"})  # a trajectory cannot forge these sections
_LINE = re.compile(r"trajectory\s*(?:id\s*)?[#:=]?\s*\"?(\d+)\"?\s*[:=\-]\s*([0-9]*\.?[0-9]+)", re.IGNORECASE)


class RulerJudge(_GroupJudge):
    """All of a group's trajectories graded 0..1 in one request, their shared prefix sent once."""

    def __init__(self, *, group_size: int | None = None, template: str = "ruler", standards: str = DEFAULT_STANDARDS,
                 tools_column: str = "tools", **params: Any):
        super().__init__(group_size=group_size, template=template, **params)
        if not isinstance(standards, str) or not standards.strip():
            raise JudgeConfigError("judge ruler mode: standards must be the grading standards as text")
        self.standards = standards
        self.tools_column = tools_column

    async def _score_rows(self, batch: Batch, stats: JudgeStats, deadline: float) -> list[Score]:
        scores: list[Score | None] = [None] * len(batch)
        conversations = batch.trajectory("messages")
        groups, _ = self._groups(batch, scores)  # hollow completions already scored 0.0: graded scores need no share
        orders = [shuffled(group, [json.dumps(conversations[i], sort_keys=True, default=str) for i in group])
                  for group in groups]
        asks = [(order, self._ruler_request(batch, order, [conversations[i] for i in order])) for order in orders]
        for order, answer in await self._ask(asks, stats, deadline):
            graded = read_scores(answer.reason, len(order)) if answer.value is not None else None
            if graded is None:
                why = answer.reason if answer.value is None else (
                    f"unparsable judge answer (no score in 0..1 for each of the {len(order)} trajectories): "
                    f"{shorten(answer.reason)!r}")
                for i in order:
                    scores[i] = Score(None, f"ruler: {why}", None, "error" if answer.outcome != "timeout" else "timeout")
                continue
            for position, i in enumerate(order, 1):
                value, explanation = graded[position]
                scores[i] = Score(value, f"ruler: {value:g} (trajectory {position} of {len(order)})"
                                         + (f": {shorten(explanation)}" if explanation else ""), None)
        return scores  # type: ignore[return-value]

    def _ruler_request(self, batch: Batch, order: list[int], conversations: list[list[Any]]) -> list[dict[str, str]]:
        shared = common_prefix(conversations)
        parts = []
        if shared and shared < min(len(c) for c in conversations):
            parts.append(f"<context>{self._shown(conversations[0][:shared])}</context>")
        else:
            shared = 0  # nothing shared, or one trajectory is all prefix: each is shown whole
        tools = self._shared_tools(batch, order)
        if tools is not None:
            parts.append(f"<available_tools>{self._shown(tools)}</available_tools>")
        trajectories = [f'<trajectory id="{n}">{self._shown(c[shared:])}</trajectory>'
                        for n, c in enumerate(conversations, 1)]
        parts.append("Trajectories:\n\n" + "\n\n".join(trajectories))
        block = "\n\n".join(parts)
        return self._conversation(self.template.render(batch.row(order[0]), self.reference_column,
                                                       {"completions": block, "standards": self.standards}))

    def _shared_tools(self, batch: Batch, order: list[int]) -> Any:
        column = batch.columns.get(self.tools_column)
        if column is None:
            return None
        tools = [column[i] for i in order]
        return tools[0] if tools[0] and all(t == tools[0] for t in tools) else None

    def _shown(self, value: Any) -> str:
        """JSON on one line whose every string is defused (read canonically, this mode's and the template's
        sections and tags neutralised), as an episode's strings are: the JSON itself stays intact."""
        return json.dumps(_defused_strings(value, self.template.tags | RULER_TAGS), ensure_ascii=False, default=str)


def _defused_strings(value: Any, tags: frozenset[str]) -> Any:
    if isinstance(value, str):
        return defused(value, tags)
    if isinstance(value, Mapping):
        return {key: _defused_strings(item, tags) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_defused_strings(item, tags) for item in value]
    return value


def common_prefix(conversations: Sequence[Sequence[Any]]) -> int:
    """How many leading messages every conversation shares."""
    if not conversations:
        return 0
    count = 0
    for index, message in enumerate(conversations[0]):
        if all(len(c) > index and c[index] == message for c in conversations):
            count += 1
        else:
            break
    return count


def read_scores(text: str, n: int) -> dict[int, tuple[float, str]] | None:
    """Trajectory number -> (score, explanation) for every trajectory 1..n, or ``None`` when one is missing,
    repeated, or outside 0..1 (the JSON object the template asks for, else "Trajectory 2: 0.7" lines)."""
    data = None
    if "{" in text:  # the whole answer as JSON, else the outermost object in it
        data = _json(text) or _json(text[text.find("{"):text.rfind("}") + 1])
    found: dict[int, tuple[float, str]] = {}
    entries = data.get("scores") if isinstance(data, Mapping) else None
    if isinstance(entries, list):
        for entry in entries:
            if not isinstance(entry, Mapping):
                return None
            number, value = str(entry.get("trajectory_id", "")).strip(), entry.get("score")
            if not number.isdecimal() or isinstance(value, bool) or not isinstance(value, int | float):
                return None
            if int(number) in found:
                return None
            found[int(number)] = (float(value), str(entry.get("explanation") or ""))
    else:
        for number, value in _LINE.findall(text[-5000:]):
            found[int(number)] = (float(value), "")
    if sorted(found) != list(range(1, n + 1)):
        return None
    if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v, _ in found.values()):
        return None
    return found
