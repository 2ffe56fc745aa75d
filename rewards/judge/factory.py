"""The ``judge`` registry entry: one name whose ``mode`` picks the judging scheme (see :mod:`.modes`).

Registered by this module's hook, so that the modes (which build on :class:`~.reward.JudgeReward`) are
imported here and the reward module never imports them back.
"""

from __future__ import annotations

from typing import Any

from rewardhub import Param, factory_params, hookimpl

from .errors import JudgeConfigError
from .modes import LabelJudge, RubricJudge, TrajectoryJudge
from .ranking import GroupwiseJudge, PairwiseJudge
from .reward import JudgeReward
from .ruler import RulerJudge
from .verify import VerifyJudge

__all__ = ["JUDGE", "JudgeFactory", "register_rewards"]


def _mode_classes() -> dict[str, type[JudgeReward]]:
    return {"pointwise": JudgeReward, "label": LabelJudge, "rubric": RubricJudge,
            "pairwise": PairwiseJudge, "groupwise": GroupwiseJudge, "trajectory": TrajectoryJudge,
            "verify": VerifyJudge, "ruler": RulerJudge}


class JudgeFactory:
    """The ``judge`` registry entry: ``mode`` picks the class; the other params are that mode's."""

    name = "judge"
    description = ("LLM-as-judge via an OpenAI-compatible endpoint (modes: pointwise, label, rubric, pairwise, "
                   "groupwise, trajectory, verify, ruler): async, rate-limited, retried, cached")

    def params(self) -> dict[str, Param]:
        merged = {"mode": Param("mode", "pointwise", "str")}
        for cls in _mode_classes().values():
            for name, param in factory_params(cls).items():
                merged.setdefault(name, param)
        return merged

    def __call__(self, *, mode: str = "pointwise", **params: Any) -> JudgeReward:
        classes = _mode_classes()
        if mode not in classes:
            raise JudgeConfigError(f"judge mode must be one of {', '.join(classes)}; got {mode!r}")
        cls = classes[mode]
        accepted = set(factory_params(cls)) | set(factory_params(JudgeReward))
        foreign = sorted(set(params) - accepted)
        if foreign:
            raise JudgeConfigError(f"judge mode {mode!r} takes no param(s) {', '.join(foreign)}")
        return cls(**params)

    def __repr__(self) -> str:
        return f"<reward factory 'judge' (modes: {', '.join(_mode_classes())})>"


JUDGE = JudgeFactory()


@hookimpl
def register_rewards(register):
    register(JUDGE)
