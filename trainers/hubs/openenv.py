"""A rewardhub reward or set as an OpenEnv ``Rubric``: give it to an environment (``Environment(rubric=...)``) or
compose it with OpenEnv's containers (``WeightedSum``, ``Gate``, ``Sequential``).

``forward(action, observation)`` scores one row: the completion is the action's ``completion_field`` (default
``message``: text or chat messages), the prompt the observation's ``prompt_field`` when it has one, and the
columns the observation's fields and ``metadata`` (then the action's ``metadata``). It returns the set's
weighted total (``abstain_value`` where every reward abstained); each reward of the set is a child rubric
(``named_rubrics()``) whose ``last_score`` is its value, and ``last_reasons`` keeps why. Imports OpenEnv
(``pip install openenv``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openenv.core.rubrics import Rubric

import rewardhub
from rewardhub import Batch, RewardSet, SetResult

__all__ = ["RewardhubRubric", "RewardhubComponent"]

_OBSERVATION_OWN = ("done", "reward", "metadata")  # OpenEnv's bookkeeping fields, not row columns


class RewardhubComponent(Rubric):
    """One reward of the set, as a child rubric: its ``last_score`` is the reward's value in the last forward."""

    def __init__(self, parent: RewardhubRubric, alias: str):
        super().__init__()
        object.__setattr__(self, "_parent", parent)  # not a child of its own: plain attribute
        self.alias = alias

    def forward(self, action: Any, observation: Any) -> float:
        scored = self._parent.score(action, observation)
        value = scored[self.alias].scores[0].value
        return self._parent.abstain_value if value is None else value


class RewardhubRubric(Rubric):
    """A rewardhub set (a ``RewardSet``, or a config as ``rewardhub.load`` takes it) as an OpenEnv rubric."""

    def __init__(self, rewards: Any, *, completion_field: str = "message", prompt_field: str = "prompt",
                 abstain_value: float = 0.0):
        super().__init__()
        self.rewards: RewardSet = rewards if isinstance(rewards, RewardSet) else rewardhub.load(rewards)
        self.completion_field = completion_field
        self.prompt_field = prompt_field
        self.abstain_value = abstain_value
        self.last_reasons: dict[str, str] = {}
        for alias in self.rewards.aliases:
            setattr(self, _attribute(alias), RewardhubComponent(self, alias))

    def row(self, action: Any, observation: Any) -> dict[str, Any]:
        """The rewardhub row for an (action, observation) pair."""
        columns: dict[str, Any] = {}
        if hasattr(observation, "model_dump"):
            columns.update({k: v for k, v in observation.model_dump().items() if k not in _OBSERVATION_OWN})
        columns.update(_metadata(observation))
        columns.update({k: v for k, v in _metadata(action).items() if k not in columns})
        prompt = getattr(observation, self.prompt_field, None) or columns.pop(self.prompt_field, None)
        columns.pop(self.prompt_field, None)
        completion = getattr(action, self.completion_field, None)
        if completion is None:
            raise AttributeError(f"the action ({type(action).__name__}) has no {self.completion_field!r}: pass "
                                 f"completion_field= the field that holds the model's text")
        return {**columns, "prompt": prompt, "completion": completion}

    def score(self, action: Any, observation: Any) -> SetResult:
        scored = self.rewards.evaluate_batch(Batch.from_rows([self.row(action, observation)]))
        self.last_reasons = {alias: r.scores[0].reason for alias, r in scored.components.items()}
        for alias, result in scored.components.items():
            child = getattr(self, _attribute(alias))
            value = result.scores[0].value
            child.last_score = self.abstain_value if value is None else value
        return scored

    def forward(self, action: Any, observation: Any) -> float:
        total = self.score(action, observation).totals[0]
        return self.abstain_value if total is None else total


def _metadata(thing: Any) -> Mapping[str, Any]:
    metadata = getattr(thing, "metadata", None)
    return metadata if isinstance(metadata, Mapping) else {}


def _attribute(alias: str) -> str:
    """A child rubric's attribute name for an alias (aliases may hold characters attributes cannot)."""
    return "".join(ch if ch.isalnum() else "_" for ch in alias)
