"""One call of a reward: its deadline, the rows it settled, the trainer's step and logging hooks.

A call owns this context; the :class:`~rewardhub.Batch` it scores is input only. A batch scorer that
knows a row's final score early settles it into the context of the call scoring it
(``Reward.settle``), so when that call's deadline passes it keeps exactly the rows *it* finished:
two members of a set scoring the same batch never see each other's rows. The context travels with the
call through a context variable (copied into the deadline's scorer thread), so nested calls (a reward
reusing another's verdicts) each have their own.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Call", "current_call", "entered", "trainer_call", "trainer_step"]


@dataclass
class Call:
    """What one call of one reward carries besides its batch.

    ``seconds``: the call's deadline (``None``: none); ``step``: the trainer's step it is scored at
    (``None``: not known); ``log_extra`` / ``log_metric``: the trainer's logging hooks, when it gave them.
    """

    reward_name: str
    owner: Any = field(default=None, repr=False)  # the reward (or scorer) this call belongs to
    seconds: float | None = None
    step: float | None = None
    log_extra: Callable[..., Any] | None = None
    log_metric: Callable[..., Any] | None = None
    settled: dict[int, Any] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event, repr=False)

    def settle(self, index: int, score: Any) -> None:
        """Row ``index``'s final score, known before the batch is done: kept if the deadline passes."""
        self.settled[index] = score

    @property
    def abandoned(self) -> bool:
        """True once the deadline has passed: the caller stopped waiting, so work for it may stop."""
        return self.stop.is_set()

    def for_reward(self, owner: Any, reward_name: str, seconds: float | None) -> Call:
        """A call of another reward made on behalf of this one: the same step and hooks, its own rows and deadline."""
        return Call(reward_name, owner, seconds, self.step, self.log_extra, self.log_metric)


_current: contextvars.ContextVar[Call | None] = contextvars.ContextVar("rewardhub_call", default=None)


def current_call() -> Call | None:
    """The call being scored in this thread or task (``None`` outside any reward's call)."""
    return _current.get()


@contextmanager
def entered(call: Call) -> Iterator[Call]:
    """Make ``call`` the current one for the duration of the block."""
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def trainer_step(batch: Any) -> int | None:
    """The trainer's step a batch was scored at: TRL's ``trainer_state.global_step`` when it was passed."""
    state = batch.extras.get("trainer_state")
    step = getattr(state, "global_step", None)
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def trainer_call(owner: Any, batch: Any, kwargs: dict[str, Any], seconds: float | None = None) -> Call:
    """The context of a trainer's call of ``owner`` on ``batch``: the trainer's step and the logging hooks
    among the call's keyword arguments; ``seconds``: the owner's deadline."""
    return Call(owner.__name__, owner, seconds, trainer_step(batch), kwargs.get("log_extra"), kwargs.get("log_metric"))
