"""A TRL environment that scores its own episode with a rewardhub config: ``get_reward()``.

TRL 1.16 (``GRPOTrainer(environment_factory=...)`` and the experimental async GRPO) calls an
environment's ``get_reward()`` once per finished rollout and adds it as a reward of weight 1. In async
GRPO it is the only way the environment's state reaches a reward (its reward functions get no
``environments``). Mix :class:`ScoredEnvironment` into the environment class and name a config::

    class Shop(ScoredEnvironment):
        rewardhub_config = "episode_rewards.yaml"      # final_state_match, tool_call_match, ...

        def reset(self, **row):                        # the row (prompt, expected columns) is recorded
            self.cart = {}

        def add_to_cart(self, item: str) -> str:       # a tool: recorded with its arguments and result
            ...

Tool methods (public methods other than ``reset``, ``get_reward`` and ``state_dict``; TRL exposes
every public method but those two as a tool, so keep helpers private) are recorded as
they run: name, arguments, result or the error they raised. ``get_reward()`` then scores one row: the
row's columns from ``reset``, the prompt, an episode of the recorded calls and results, and this
environment as ``env`` (so ``env_state`` is its state). The environment does not see the model's
final message, so text rewards (``math`` on the answer) belong in ``reward_funcs``; ``final_text`` is
empty here. The set's weighted total is returned; ``None`` (every reward abstained) becomes NaN in
TRL, which it skips.
"""

from __future__ import annotations

import functools
import inspect
import json
from typing import Any, ClassVar

from rewardhub import Batch, RewardSet, load

__all__ = ["NOT_TOOLS", "ScoredEnvironment"]

# Methods of an environment that TRL does not expose as tools.
NOT_TOOLS = ("reset", "get_reward", "state_dict")


class ScoredEnvironment:
    """Mixin for TRL environments: records tool calls, and ``get_reward()`` scores them with ``rewardhub_config``."""

    rewardhub_config: ClassVar[Any] = None
    rewardhub_scores_itself: ClassVar[bool] = True  # the view never calls this get_reward() from inside the set
    _rewardhub_sets: ClassVar[dict[type, RewardSet]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, member in list(vars(cls).items()):
            if inspect.isfunction(member) and not name.startswith("_") and name not in NOT_TOOLS:
                setattr(cls, name, _recorded(name, member))
        if inspect.isfunction(vars(cls).get("reset")):
            cls.reset = _starting(vars(cls)["reset"])

    def reset(self, **row: Any) -> str | None:
        """Start an episode (a subclass's own ``reset`` does this first, without calling super)."""
        self._start_episode(row)
        return None

    def _start_episode(self, row: dict[str, Any]) -> None:
        """Forget the last episode's calls and keep the dataset row for scoring."""
        self._rewardhub_row = dict(row)
        self._rewardhub_calls: list[dict[str, Any]] = []

    @property
    def recorded_calls(self) -> list[dict[str, Any]]:
        """This episode's tool calls so far: ``{name, arguments, result, error}`` in call order."""
        return list(getattr(self, "_rewardhub_calls", []))

    def _episode_batch(self) -> Batch:
        """This episode as a one-row rewardhub batch (what ``get_reward()`` scores)."""
        row = dict(getattr(self, "_rewardhub_row", {}))
        prompt = row.pop("prompt", None)
        steps: list[dict[str, Any]] = []
        for i, call in enumerate(self.recorded_calls):
            call_id = f"call_{i}"
            steps.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}]})
            content = str({"error": call["error"]}) if call["error"] is not None else str(call["result"])
            steps.append({"role": "tool", "tool_call_id": call_id, "name": call["name"], "content": content})
        return Batch([prompt], [steps], {k: [v] for k, v in row.items()}, live={"env": [self]},
                     reward_name=type(self).__name__)

    def get_reward(self) -> float | None:
        """The weighted total of ``rewardhub_config`` on this episode (``None`` when every reward abstained)."""
        return self.reward_set().evaluate_batch(self._episode_batch()).totals[0]

    @classmethod
    def reward_set(cls) -> RewardSet:
        """The class's reward set, loaded once per process."""
        if cls.rewardhub_config is None:
            raise TypeError(f"{cls.__name__} needs a rewardhub_config (a config path, dict or RewardSet) to score with")
        if cls not in ScoredEnvironment._rewardhub_sets:
            config = cls.rewardhub_config
            ScoredEnvironment._rewardhub_sets[cls] = config if isinstance(config, RewardSet) else load(config)
        return ScoredEnvironment._rewardhub_sets[cls]


def _starting(reset: Any) -> Any:
    """A subclass's ``reset`` that starts a new recorded episode first (once, however deep the chain)."""
    if getattr(reset, "_rewardhub_starts", False):
        return reset

    @functools.wraps(reset)
    def wrapper(self: Any, *args: Any, **row: Any) -> Any:
        self._start_episode(row)
        return reset(self, *args, **row)

    wrapper._rewardhub_starts = True
    return wrapper


def _recorded(name: str, method: Any) -> Any:
    """``method`` recording each call on its instance: arguments, then the result or the error it raised."""
    signature = inspect.signature(method)

    def record(self: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
        try:
            bound = signature.bind(self, *args, **kwargs)
            arguments = {k: v for k, v in bound.arguments.items() if k != "self"}
        except TypeError:
            arguments = {"args": list(args), **kwargs}
        entry = {"name": name, "arguments": _plain(arguments), "result": None, "error": None}
        if not hasattr(self, "_rewardhub_calls"):
            self._rewardhub_calls = []
        self._rewardhub_calls.append(entry)
        return entry

    if inspect.iscoroutinefunction(method):
        @functools.wraps(method)
        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            entry = record(self, args, kwargs)
            try:
                entry["result"] = await method(self, *args, **kwargs)
            except Exception as exc:
                entry["error"] = str(exc) or type(exc).__name__
                raise
            return entry["result"]
    else:
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            entry = record(self, args, kwargs)
            try:
                entry["result"] = method(self, *args, **kwargs)
            except Exception as exc:
                entry["error"] = str(exc) or type(exc).__name__
                raise
            return entry["result"]
    return wrapper


def _plain(arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments as JSON data (a value that is not is kept as its text)."""
    try:
        return json.loads(json.dumps(arguments))
    except (TypeError, ValueError):
        return {k: v if isinstance(v, str | int | float | bool | type(None)) else str(v) for k, v in arguments.items()}
