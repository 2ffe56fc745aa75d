"""The reward-hacking monitor in a TRL run: a ``TrainerCallback`` over the set's reward functions.

    rewards = rewardhub.load("rewards.yaml")
    trainer = GRPOTrainer(..., reward_funcs=rewards.reward_funcs, callbacks=[HackingCallback(rewards)])
    # or: GRPOTrainer(..., **trainer_rewards("rewards.yaml", args, monitor=True))

The set reports each batch TRL scores (every reward function's values and outcomes, at
``trainer_state.global_step``); once all of a step's rewards are in, the monitor reads the step and
logs its figures through TRL's ``log_metric`` as ``rewardhub/hacking/...`` (they appear in TRL's logs
with the step's other metrics). An alarm is a :class:`~rewardhub.hacking.RewardHackingWarning`, once
per signal; with ``stop_on`` naming signals (or ``"any"``) the callback stops training when one of
them raises. At the end of training the alarms are logged once more and kept in :attr:`alarms`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from transformers import TrainerCallback

from rewardhub import RewardSet
from rewardhub.hacking import SIGNALS, Alarm, HackingMonitor

from .errors import TrainerIntegrationError

logger = logging.getLogger("rewardhub.trainers")


class HackingCallback(TrainerCallback):
    """Watch ``rewards`` (the set whose ``reward_funcs`` or ``weighted`` TRL calls) for reward hacking."""

    def __init__(self, rewards: RewardSet, *, stop_on: Iterable[str] = (), warn: bool = True):
        stop = set(stop_on)
        unknown = stop - {*SIGNALS, "any"}
        if unknown:
            raise TrainerIntegrationError(f"stop_on names unknown signal(s) {sorted(unknown)}; "
                                          f"signals: {', '.join(SIGNALS)} (or 'any')")
        self.stop_on = stop
        self.monitor = HackingMonitor.for_set(rewards, warn=warn)
        self.monitor.on_alarm.append(self._alarmed)
        self._stop: Alarm | None = None

    @property
    def alarms(self) -> list[Alarm]:
        return self.monitor.alarms

    def _alarmed(self, alarm: Alarm) -> None:
        if self._stop is None and ("any" in self.stop_on or alarm.signal in self.stop_on):
            self._stop = alarm

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self._stop is not None and not control.should_training_stop:
            logger.warning("rewardhub: stopping training at step %s: %s", state.global_step, self._stop)
            control.should_training_stop = True
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.monitor.flush()
        if self.alarms:
            logger.warning("rewardhub: %d reward-hacking alarm(s) in this run:\n%s", len(self.alarms),
                           "\n".join(f"  - {alarm}" for alarm in self.alarms))
        return control
