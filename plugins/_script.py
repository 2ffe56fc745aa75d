"""Rewards defined in a training script, named in a config like any installed reward.

    @rewardhub.register                      # a TRL reward function, as GRPOTrainer takes it
    def has_answer_tag(completions, **kwargs):
        return [1.0 if "<answer>" in c else 0.0 for c in completions]

    rewards = rewardhub.load("rewards.yaml")   # rewards: [{name: has_answer_tag, weight: 0.5}, ...]

``register`` takes a plain TRL reward function (``f(prompts, completions, **kwargs) -> list``, sync
or async), a ``sample_reward``/``batch_reward`` factory or a ``Reward`` subclass, and returns it
unchanged. Registration runs when the script's module runs, so a process that re-imports the script
(a spawned worker of async GRPO) registers it again by itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ._batch import Batch
from ._decorators import FunctionRewardFactory
from ._registry import Param, registry
from ._reward import AsyncReward, Reward
from .errors import DuplicateRewardError

__all__ = ["AsyncTRLFunctionReward", "TRLFunctionFactory", "TRLFunctionReward", "TRL_ARGUMENTS", "register"]

# What TRL passes besides the dataset columns (``completion_ids`` only from trainers, not from files).
TRL_ARGUMENTS = ("prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric")


def register(reward: Any = None, *, name: str | None = None) -> Any:
    """Register ``reward`` for configs (usable as ``@register`` or ``@register(name=...)``).

    ``name`` renames a plain function (default: its ``__name__``); factories and ``Reward``
    subclasses keep the name they were given. Registering the same object, or the same function of
    the same module again (a re-run notebook cell), replaces the earlier one; another reward's name
    is an error.
    """

    def add(obj: Any) -> Any:
        factory = _factory(obj, name)
        if factory.name in registry:  # (loads the installed rewards first: a clash is said now, not later)
            taken = registry.spec(factory.name)
            if not _same_definition(taken.factory, factory):
                raise DuplicateRewardError(
                    f"{factory.name!r} is already the name of a reward from {taken.source!r}; register yours "
                    f"under another name (register(func, name=...)) and use that name in the config"
                )
        registry.add(factory, source=factory.__module__, replace=True)
        return obj

    return add(reward) if reward is not None else add


def _factory(obj: Any, name: str | None) -> Any:
    if isinstance(obj, FunctionRewardFactory) or inspect.isclass(obj) and issubclass(obj, Reward):
        if name is not None and name != obj.name:
            raise TypeError(f"{obj!r} is named {obj.name!r}; give the name where it is made "
                            f"(sample_reward(name=...), batch_reward(name=...) or the class's `name`)")
        return obj
    if inspect.isclass(obj) or not callable(obj):
        raise TypeError(f"register takes a TRL reward function, a sample_reward/batch_reward factory or a "
                        f"Reward subclass; got {obj!r}")
    return TRLFunctionFactory(obj, name or getattr(obj, "__name__", None))


def _same_definition(a: Any, b: Any) -> bool:
    """Two factories of the same module and qualified name: one definition, run again."""
    where = ("__module__", "__qualname__")
    return a is b or all(getattr(a, k, None) is not None and getattr(a, k, None) == getattr(b, k, None) for k in where)


class TRLFunctionFactory:
    """A registry factory around a TRL reward function; its only param is ``on_error``."""

    def __init__(self, func: Callable[..., Any], name: str | None):
        if not name or name == "<lambda>":
            raise TypeError(f"{func!r} has no name: register(func, name='...')")
        self.func = func
        self.name = name
        self.__module__ = getattr(func, "__module__", None) or "__main__"
        self.__qualname__ = getattr(func, "__qualname__", name)
        doc = (inspect.getdoc(func) or "").strip()
        self.description = doc.split("\n")[0] if doc else f"TRL reward function {self.__module__}.{self.__qualname__}"
        self.signature_target = func

    def params(self) -> dict[str, Param]:
        return {"on_error": Param("on_error", "none", "str")}

    def __call__(self, *, on_error: str = "none") -> Reward:
        cls = AsyncTRLFunctionReward if inspect.iscoroutinefunction(self.func) else TRLFunctionReward
        return cls(self, on_error=on_error)

    def __repr__(self) -> str:
        return f"<TRL reward function {self.name!r} from {self.__module__}.{self.__qualname__}>"


class TRLFunctionReward(Reward):
    """A TRL reward function called as TRL calls it (keywords: prompts, completions, columns), with
    rewardhub's contract check, error policy and reasons around it."""

    def __init__(self, factory: TRLFunctionFactory, *, on_error: str = "none"):
        super().__init__(on_error=on_error)
        self.factory = factory
        self.__name__ = factory.name
        parameters = inspect.signature(factory.func).parameters.values()
        self._takes_all = any(p.kind is p.VAR_KEYWORD for p in parameters)
        self._accepted = {p.name for p in parameters}
        self._required = tuple(p.name for p in parameters if p.default is p.empty and p.name not in TRL_ARGUMENTS
                               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))

    def required_columns(self) -> tuple[str, ...]:
        """The function's named parameters without a default (beyond TRL's own arguments)."""
        return self._required

    def _kwargs(self, batch: Batch) -> dict[str, Any]:
        given = {"prompts": batch.prompts, "completions": batch.completions, **batch.columns, **batch.extras}
        return given if self._takes_all else {k: v for k, v in given.items() if k in self._accepted}

    def score_batch(self, batch: Batch) -> list[Any]:
        return self.factory.func(**self._kwargs(batch))


class AsyncTRLFunctionReward(AsyncReward, TRLFunctionReward):
    """The async twin, for ``async def`` TRL reward functions."""

    async def score_batch_async(self, batch: Batch) -> list[Any]:
        return await self.factory.func(**self._kwargs(batch))
