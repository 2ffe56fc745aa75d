"""``openenv_rubric``: an OpenEnv ``Rubric`` (``openenv.core.rubrics``) as a rewardhub reward.

An OpenEnv rubric scores ``(action, observation)``. For each row the reward builds the action from the
completion (its text in ``completion_field``, by default an object with ``.message``; or your environment's
action class) and the observation from the row's columns (OpenEnv's ``Observation`` with ``done=True`` and the
columns in ``metadata``; or your observation class with the named columns as fields), calls the rubric, as an
environment's ``_apply_rubric`` does, awaiting an async one, and gives its value; the reason names the value of
each child rubric (``named_rubrics``). The rubric is ``reset()`` before each row (one row, one episode).
OpenEnv is imported only when the reward is built (``pip install openenv``).
"""

from __future__ import annotations

import inspect
import math
from types import SimpleNamespace
from typing import Any

from rewardhub import AsyncReward, ConfigError, Row, Score, hookimpl

from ..deps import MissingExtraError
from .importing import load_object

__all__ = ["OpenEnvRubric", "instantiate"]


class OpenEnvRubric(AsyncReward):
    """The value an OpenEnv rubric gives the row's (action, observation)."""

    name = "openenv_rubric"
    description = "an OpenEnv Rubric (import path) scoring the completion as an action and the row as an observation"

    def __init__(
        self,
        *,
        rubric: str,
        completion_field: str = "message",
        action_class: str | None = None,
        observation_class: str | None = None,
        columns: list[str] | None = None,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        try:
            from openenv.core.env_server.types import Observation
            from openenv.core.rubrics import Rubric
        except ImportError as exc:
            raise MissingExtraError(f"reward 'openenv_rubric' needs OpenEnv: pip install openenv ({exc})") from exc
        self.rubric = instantiate(load_object(rubric, "openenv_rubric: rubric"), Rubric, "openenv_rubric: rubric")
        self.rubric_path = rubric
        self.completion_field = completion_field
        self.action_class = load_object(action_class, "openenv_rubric: action_class") if action_class else None
        self.observation_class = load_object(observation_class, "openenv_rubric: observation_class") \
            if observation_class else Observation
        self.columns = None if columns is None else list(columns)
        self.custom_observation = observation_class is not None

    def required_columns(self) -> tuple[str, ...]:
        return tuple(self.columns or ())

    def action(self, text: str) -> Any:
        if self.action_class is None:
            return SimpleNamespace(**{self.completion_field: text, "metadata": {}})
        return self.action_class(**{self.completion_field: text})

    def observation(self, row: Row) -> Any:
        names = self.columns if self.columns is not None else [c for c in row if c != "completion_ids"]
        values = {name: row[name] for name in names}
        if self.custom_observation:
            return self.observation_class(**values)
        return self.observation_class(done=True, metadata=values)

    async def score_batch_async(self, batch: Any) -> list[Score]:
        # one row at a time: a rubric keeps state between reset() and its answer (last_score, a trajectory)
        return [await self._sample_outcome_async(batch, i) for i in range(len(batch))]

    async def score_sample_async(self, text: str, row: Row) -> Score:
        action, observation = self.action(text), self.observation(row)
        self.rubric.reset()
        value = self.rubric(action, observation)
        if inspect.isawaitable(value):
            value = await value
        if value is None:
            return Score(None, f"{self.rubric_path} gave no score")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return Score(None, f"{self.rubric_path} gave {value!r}, not a finite number", outcome="error")
        children = ", ".join(f"{name}={child.last_score:g}" for name, child in self.rubric.named_rubrics()
                             if isinstance(child.last_score, int | float))
        return Score(float(value), f"{type(self.rubric).__name__}: {value:g}" + (f" ({children})" if children else ""))


def instantiate(target: Any, kind: type, what: str) -> Any:
    """``target`` when it is a ``kind`` instance, else what calling it (a class or factory, no arguments) gives."""
    if isinstance(target, kind):
        return target
    if not callable(target):
        raise ConfigError(f"{what}: {target!r} is neither a {kind.__name__} nor something that makes one")
    try:
        made = target()
    except Exception as exc:
        raise ConfigError(f"{what}: {target!r} is not a {kind.__name__}, and calling it without arguments failed: "
                          f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(made, kind):
        raise ConfigError(f"{what}: calling {target!r} gave a {type(made).__name__}, not a {kind.__name__}")
    return made


@hookimpl
def register_rewards(register):
    register(OpenEnvRubric)
