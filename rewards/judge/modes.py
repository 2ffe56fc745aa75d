"""The judge's modes: ``judge`` is one registry name whose ``mode`` picks the judging scheme.

- ``pointwise`` (default): a score or a verdict per completion (:class:`~.reward.JudgeReward`).
- ``label``: the judge answers one of named labels, each mapped to a score.
- ``rubric``: weighted criteria (per row from a column, or in params), each judged yes/no in its own
  request; the score is the weighted share met, the failed criteria are named in the reason.
- ``pairwise`` / ``groupwise`` (:mod:`.ranking`): the completions of one prompt compared in one call.
- ``ruler`` (:mod:`.ruler`): a group's agent trajectories graded 0..1 in one call, their shared prefix sent once.
- ``trajectory``: pointwise on an agent's whole episode (``{episode}``: every message, the tool calls
  made and their results) and the environment's final state (``{env_state}``); built-in template
  ``trajectory``. Any per-row mode's template (pointwise, label, rubric) may show those fields too.
- ``verify`` (:mod:`.verify`): is the final answer equivalent to the reference? A / B / C, CompassVerifier style.

Every mode keeps the judge's machinery: one shared client, rate budgets, retries, the cache, a
deadline, and abstention (never a 0) when the endpoint fails or its answer cannot be read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub import Batch, MissingColumnError, Score
from rewardhub.rewards.text import canonical

from .client import Answer, JudgeStats, shorten
from .errors import JudgeConfigError, JudgeInputError
from .parse import ScoreScale, unquoted
from .prompt import JudgeTemplate
from .reward import JudgeReward

__all__ = [
    "Criterion",
    "LabelJudge",
    "RubricJudge",
    "TrajectoryJudge",
    "parse_rubric",
    "read_label",
    "rubric_score",
]

_LABEL_LINE = re.compile(r"^[ \t*#>_-]*(?:final[ \t]+)?(?:label|verdict|classification|category)[ \t]*[:=][ \t]*(.+?)[ \t]*$",
                         re.IGNORECASE | re.MULTILINE)


# ----- label ------------------------------------------------------------------------------------------------
class LabelJudge(JudgeReward):
    """The judge names one label (``labels``: label -> score); the label's score is the reward."""

    def __init__(self, *, labels: dict[str, float] | None = None, template: str = "label", **params: Any):
        super().__init__(**params)
        labels = {"correct": 1.0, "partially correct": 0.5, "incorrect": 0.0} if labels is None else labels
        if not isinstance(labels, Mapping) or len(labels) < 2:
            raise JudgeConfigError(f"judge label mode: labels must map two or more labels to scores; got {labels!r}")
        self.labels: dict[str, float] = {}
        for label, value in labels.items():
            if not isinstance(label, str) or not label.strip() or isinstance(value, bool) \
                    or not isinstance(value, int | float) or not math.isfinite(value):
                raise JudgeConfigError(f"judge label mode: label {label!r} needs a finite score; got {value!r}")
            self.labels[" ".join(label.lower().split())] = float(value)
        self.template = JudgeTemplate.load(template)
        listing = "\n".join(f"- {label}" for label in labels)
        self._fill = {"labels": listing}
        self._best, self._worst = max(self.labels.values()), min(self.labels.values())

    def _messages(self, batch: Batch, index: int) -> list[dict[str, str]]:
        return self._conversation(self.template.render(batch.row(index), self.reference_column, self._fill))

    def _score(self, answer: Answer) -> Score:
        said = shorten(answer.content)
        label = read_label(answer.content, list(self.labels))
        if label is None:
            return Score(None, f"unparsable judge answer (not exactly one of the labels): {said!r}", None, "error")
        value = self.labels[label]
        verdict = True if value == self._best else False if value == self._worst else None
        return Score(value, f"judge label {label!r}: {said}", verdict)


def read_label(text: str, labels: list[str]) -> str | None:
    """The one label ``text`` gives: a JSON ``label`` field, the last ``Label: ...`` line, the whole answer,
    else the only label it mentions (longest match; a negated mention does not count). Quoted text
    (``"..."``, ``>`` lines, backticks, fences) gives no label. The answer is read canonically."""
    text = canonical(text)
    try:
        data = json.loads(text.strip().removeprefix("```json").removesuffix("```"))
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, Mapping):
        value = next((data[k] for k in ("label", "verdict", "classification") if isinstance(data.get(k), str)), None)
        return _exact_label(value, labels) if value is not None else None
    outside = unquoted(text)  # what the judge quotes is the response's text, not its label
    lines = _LABEL_LINE.findall(unquoted(text, spans=False)[-5000:])  # 'Label: "correct"' is the judge's
    if lines:
        return _exact_label(lines[-1], labels)
    exact = _exact_label(text, labels)
    if exact is not None:
        return exact
    mentioned = _mentioned(" ".join(outside.lower().split()), labels)
    return mentioned.pop() if len(mentioned) == 1 else None


def _exact_label(text: str, labels: list[str]) -> str | None:
    cleaned = " ".join(re.sub(r"[*_`\"'.!\[\]()<>]", " ", text).lower().split())
    return cleaned if cleaned in labels else None


def _mentioned(text: str, labels: list[str]) -> set[str]:
    spans = []
    for label in labels:
        for match in re.finditer(rf"(?<![\w-]){re.escape(label)}(?![\w-])", text):
            before = text[max(0, match.start() - 12) : match.start()]
            if not re.search(r"\b(?:not|n't|never|no)\s+(?:\w+\s+)?$", before):
                spans.append((match.start(), match.end(), label))
    return {label for s, e, label in spans if not any(s2 <= s and e <= e2 and e2 - s2 > e - s for s2, e2, _ in spans)}


# ----- rubric -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Criterion:
    text: str
    weight: float


def parse_rubric(value: Any, where: str) -> list[Criterion]:
    """Criteria from a list of texts (weight 1), of ``{criterion, weight}`` mappings, a ``{text: weight}``
    mapping, or the same as JSON text. Negative weights are penalties; one weight must be positive."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = [value]  # one criterion written as plain text
    if isinstance(value, Mapping):
        value = [{"criterion": k, "weight": v} for k, v in value.items()]
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise JudgeInputError(f"{where}: a rubric is a non-empty list of criteria; got {value!r}")
    criteria = []
    for item in value:
        text, weight = (item, 1.0) if isinstance(item, str) else _criterion_fields(item, where)
        if not isinstance(text, str) or not text.strip():
            raise JudgeInputError(f"{where}: a criterion needs its text; got {item!r}")
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
            raise JudgeInputError(f"{where}: criterion {text!r} has weight {weight!r}; a finite number is needed")
        criteria.append(Criterion(text.strip(), float(weight)))
    if not any(c.weight > 0 for c in criteria):
        raise JudgeInputError(f"{where}: no criterion has a positive weight, so nothing can be earned")
    return criteria


def _criterion_fields(item: Any, where: str) -> tuple[Any, Any]:
    if not isinstance(item, Mapping):
        raise JudgeInputError(f"{where}: a criterion is a text or a mapping with 'criterion' and 'weight'; got {item!r}")
    text = next((item[k] for k in ("criterion", "description", "text", "title") if k in item), None)
    return text, item.get("weight", item.get("points", 1.0))


def rubric_score(criteria: list[Criterion], met: list[bool]) -> float:
    """Weighted share met: earned weight, less the weight of the pitfalls met (negative criteria), over
    the positive weights, in [0, 1]."""
    penalties = sum(-c.weight for c, ok in zip(criteria, met, strict=True) if c.weight < 0 and ok)
    positive = sum(c.weight for c in criteria if c.weight > 0)
    earned = sum(c.weight for c, ok in zip(criteria, met, strict=True) if c.weight > 0 and ok)
    return min(max((earned - penalties) / positive, 0.0), 1.0)


class RubricJudge(JudgeReward):
    """Each criterion of a weighted rubric judged yes/no on its own; the weighted share met is the reward."""

    def __init__(self, *, rubric: Any = None, rubric_column: str = "rubric", template: str = "criterion",
                 **params: Any):
        super().__init__(**params)
        try:
            self.rubric = None if rubric is None else parse_rubric(rubric, "judge rubric param")
        except JudgeInputError as exc:
            raise JudgeConfigError(str(exc)) from None
        self.rubric_column = rubric_column
        self.template = JudgeTemplate.load(template)
        if "criterion" not in self.template.fields:
            raise JudgeConfigError(f"{self.template.origin} never shows the judge the criterion: add {{criterion}}")
        self.parse, self.scale = "yes_no", ScoreScale(0.0, 1.0)

    async def _score_rows(self, batch: Batch, stats: JudgeStats, deadline: float) -> list[Score]:
        plans: list[Score | list[tuple[Criterion, tuple[str, ...]]]] = []
        requests: dict[tuple[str, ...], list[dict[str, str]]] = {}
        for i in range(len(batch)):
            if batch.texts[i] is None:
                plans.append(Score(None, batch.text_errors[i]))
                continue
            try:
                row = batch.row(i)
                criteria = self.rubric or parse_rubric(row[self.rubric_column], f"column {self.rubric_column!r}")
                hollow = self._hollow(batch, i)
                if hollow is not None:  # nothing to judge: no criterion is met (hollow.py)
                    plans.append(hollow)
                    continue
                plan = []
                for criterion in criteria:
                    messages = self._conversation(
                        self.template.render(row, self.reference_column, {"criterion": criterion.text}))
                    key = tuple(m["content"] for m in messages)
                    stats.deduplicated += key in requests
                    requests[key] = messages
                    plan.append((criterion, key))
            except (MissingColumnError, JudgeInputError) as exc:
                plans.append(self._failure(exc))
                continue
            plans.append(plan)
        answers = await self._judged(requests, stats, deadline)
        return [plan if isinstance(plan, Score) else self._combine(plan, answers) for plan in plans]

    @staticmethod
    def _combine(plan: list[tuple[Criterion, tuple[str, ...]]], answers: dict[tuple[str, ...], Score]) -> Score:
        judged = [(criterion, answers[key]) for criterion, key in plan]
        for criterion, score in judged:
            if score.value is None:  # one unanswered criterion: no partial number from missing information
                return Score(None, f"criterion {_short(criterion.text)!r}: {score.reason}", None, score.outcome)
        criteria = [c for c, _ in judged]
        met = [score.verdict is True for _, score in judged]
        value = rubric_score(criteria, met)
        failed = [f"{_short(c.text)!r} (weight {c.weight:g})" for c, ok in zip(criteria, met, strict=True)
                  if ok != (c.weight > 0)]
        summary = f"rubric {value:.2f}: {sum(met)}/{len(met)} criteria met"
        return Score(value, summary + (f"; failed: {', '.join(failed)}" if failed else ""), not failed)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----- trajectory -------------------------------------------------------------------------------------------
class TrajectoryJudge(JudgeReward):
    """The pointwise judge shown an agent's whole episode and final state (template ``trajectory``)."""

    def __init__(self, *, template: str = "trajectory", **params: Any):
        super().__init__(template=template, **params)
        if "episode" not in self.template.fields:
            raise JudgeConfigError(f"judge mode 'trajectory': {self.template.origin} never shows the judge the "
                                   f"episode: add {{episode}}")

    def required_columns(self) -> tuple[str, ...]:
        """The parts of the trajectory view the template shows (``{episode}`` is drawn from ``messages``)."""
        shown = {"episode": "messages", "env_state": "env_state"}
        return tuple(column for field, column in shown.items() if field in self.template.fields)
