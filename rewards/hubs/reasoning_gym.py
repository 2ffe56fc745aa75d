"""``reasoning_gym``: a row of a reasoning-gym dataset scored by its own task's scorer.

Rows are what reasoning-gym's datasets produce (``question`` as the prompt, ``answer``, ``metadata`` with
``source_dataset`` naming the task; ``rewardhub hub reasoning-gym`` writes them). The answer is read the
way reasoning-gym's own training code reads it, the last ``<answer>...</answer>`` (``extract_answer``), and
the task's ``score_answer`` gives the value, so rewardhub and reasoning-gym give the same number. A
scorer that raises on the policy's answer (``prime_factorization`` on ``"x"``) scores 0.0 with the error.

Metadata read back from JSON has lists where the generator made tuples (JSON has none), and the ARC
scorers compare tuples: the tuple shapes each task's generator uses are restored before scoring.
reasoning-gym is imported only here (``pip install reasoning-gym``).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from ..deps import MissingExtraError
from ..exact_match import _quote

__all__ = ["ReasoningGym", "TaskScorer", "restore_tuples", "tuple_shape"]

COMPOSITE = "composite"  # reasoning-gym's mixture: its rows name their own task


class ReasoningGym(Reward):
    """The task's own ``score_answer`` on the ``<answer>`` the completion gives (verdict: it scored 1.0)."""

    name = "reasoning_gym"
    description = "reasoning-gym's own scorer for the row's task (metadata.source_dataset) on the <answer> tag"

    def __init__(
        self,
        *,
        answer_column: str = "answer",
        metadata_column: str = "metadata",
        task: str | None = None,
        task_config: dict[str, dict[str, Any]] | None = None,
        tag: str = "answer",
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        gym = _import_reasoning_gym()
        known = set(gym.factory.DATASETS) - {COMPOSITE}
        task_config = dict(task_config or {})
        unknown = sorted({task} - known - {None} | set(task_config) - known)
        if unknown:
            raise ConfigError(f"reasoning_gym: unknown task(s) {', '.join(map(repr, unknown))}; "
                              f"`rewardhub hub reasoning-gym --list` lists the {len(known)} tasks")
        for name, config in task_config.items():
            if not isinstance(config, dict):
                raise ConfigError(f"reasoning_gym: task_config[{name!r}] must be a mapping of the task's config "
                                  f"fields; got {type(config).__name__}")
        if not tag or not tag.replace("_", "").isalnum():
            raise ConfigError(f"reasoning_gym: tag must be a tag name such as 'answer'; got {tag!r}")
        self.answer_column = answer_column
        self.metadata_column = metadata_column
        self.task = task
        self.task_config = task_config
        self.tag = tag
        self._extract = gym.utils.extract_answer
        # The configured tasks' datasets are built now: a config they refuse fails here, not mid-training.
        self._scorers = {name: TaskScorer(name, config) for name, config in task_config.items()}
        self._lock = threading.Lock()

    def required_columns(self) -> tuple[str, ...]:
        return (self.answer_column,) if self.task else (self.answer_column, self.metadata_column)

    def score_sample(self, text: str, row: Row) -> Score:
        metadata = _metadata(row.get(self.metadata_column), self.metadata_column)
        if isinstance(metadata, str):
            return Score(None, metadata, outcome="error")
        task = metadata.get("source_dataset") or self.task
        if not task:
            return Score(None, f"no task: {self.metadata_column}.source_dataset is missing and no `task` param is set",
                         outcome="error")
        try:
            scorer = self._scorer(task)
        except ConfigError as exc:
            return Score(None, str(exc), outcome="error")
        answer = self._extract(text, tag_name=self.tag)
        entry = {"question": row.get("prompt"), "answer": row[self.answer_column],
                 "metadata": scorer.restore(metadata)}
        try:
            value = float(scorer.score_answer(answer, entry))
        except Exception as exc:  # the task's scorer choking on the policy's answer is the answer's failure
            return Score(0.0, f"{task}: its scorer rejected {_quote(str(answer))}: {type(exc).__name__}: {exc}", False)
        if answer is None:
            return Score(value, f"{task}: no <{self.tag}>...</{self.tag}> tag", value >= 1.0)
        return Score(value, f"{task}: {value:g} for {_quote(answer)}", value >= 1.0)

    def _scorer(self, task: str) -> TaskScorer:
        with self._lock:  # a dataset is built once per task, however many threads score at once
            if task not in self._scorers:
                self._scorers[task] = TaskScorer(task, self.task_config.get(task, {}))
            return self._scorers[task]


class TaskScorer:
    """One task's dataset (built with the config its rows were generated with) and its metadata's tuple shape."""

    def __init__(self, task: str, config: dict[str, Any]):
        gym = _import_reasoning_gym()
        if task not in gym.factory.DATASETS or task == COMPOSITE:
            raise ConfigError(f"reasoning_gym: rows name task {task!r}, which reasoning-gym "
                              f"{_version()} does not have")
        try:
            self.dataset = gym.create_dataset(task, **{"size": 1, "seed": 0, **config})
        except (TypeError, ValueError, AssertionError) as exc:
            raise ConfigError(f"reasoning_gym: task_config[{task!r}] is not a valid {task} config: {exc}") from exc
        self.score_answer = self.dataset.score_answer
        self.shape = tuple_shape(self.dataset[0]["metadata"])

    def restore(self, metadata: dict[str, Any]) -> dict[str, Any]:
        return restore_tuples(metadata, self.shape) if self.shape is not None else metadata


def tuple_shape(value: Any) -> Any:
    """Where ``value`` holds tuples: ``None`` when nowhere, else a mirror of it (``("tuple", item)``,
    ``("list", item)``, ``{key: shape}``), an item's shape taken from its first element."""
    if isinstance(value, dict):
        shapes = {key: shape for key, item in value.items() if (shape := tuple_shape(item)) is not None}
        return shapes or None
    if isinstance(value, tuple | list):
        item = tuple_shape(value[0]) if value else None
        if isinstance(value, tuple):
            return ("tuple", item)
        return ("list", item) if item is not None else None
    return None


def restore_tuples(value: Any, shape: Any) -> Any:
    """``value`` with the lists that ``shape`` says were tuples made tuples again."""
    if shape is None:
        return value
    if isinstance(shape, dict) and isinstance(value, dict):
        return {key: restore_tuples(item, shape.get(key)) for key, item in value.items()}
    if isinstance(shape, tuple) and isinstance(value, list | tuple):
        kind, item = shape
        items = [restore_tuples(element, item) for element in value]
        return tuple(items) if kind == "tuple" else items
    return value


def _metadata(value: Any, column: str) -> dict[str, Any] | str:
    """The row's metadata as a dict (a JSON text, as Parquet files keep it, is parsed), or what is wrong."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            return f"column {column!r} is text but not JSON: {exc}"
    if not isinstance(value, dict):
        return f"column {column!r} must be a mapping (reasoning-gym's metadata); got {type(value).__name__}"
    return value


def _import_reasoning_gym() -> Any:
    try:
        import reasoning_gym
        import reasoning_gym.factory
        import reasoning_gym.utils
    except ImportError as exc:
        raise MissingExtraError(f"reward 'reasoning_gym' needs reasoning-gym: pip install reasoning-gym ({exc})") from exc
    return reasoning_gym


def _version() -> str:
    import importlib.metadata

    return importlib.metadata.version("reasoning-gym")


@hookimpl
def register_rewards(register):
    register(ReasoningGym)
