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
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from rewardhub import RewardSet
from rewardhub.hacking import SIGNALS, Alarm, HackingMonitor
from rewardhub.hacking.persist import load_state, save_state

from .errors import TrainerIntegrationError

__all__ = ["CHECKPOINT_FILE", "HackingCallback", "logger"]

logger = logging.getLogger("rewardhub.trainers")
CHECKPOINT_FILE = "rewardhub_hacking.json"


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

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Resuming from a checkpoint (``state.global_step`` > 0): take the monitor's state saved with it."""
        saved = _checkpoint(args, state) / CHECKPOINT_FILE
        if state.global_step > 0 and load_state(self.monitor, saved):
            logger.info("rewardhub: hacking monitor resumed from %s (%d steps, %d alarms)", saved,
                        len(self.monitor.history), len(self.alarms))
        return control

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        folder = _checkpoint(args, state)
        if folder.is_dir():
            save_state(self.monitor, folder / CHECKPOINT_FILE)
        return control

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


def _checkpoint(args: Any, state: Any) -> Path:
    """The folder TRL saves the checkpoint of ``state.global_step`` in."""
    return Path(args.output_dir) / f"checkpoint-{state.global_step}"
