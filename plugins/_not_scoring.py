"""Say it, once per reward and loudly, when a reward is not scoring: a column it needs is missing, or
every sample of its batches fails (an endpoint down, a broken scorer).

Abstentions are quiet by design (TRL leaves NaN out of its means), so a misspelled column or a judge
that is down would otherwise train on the other rewards alone with nothing on the console. Every
caller (TRL's ``reward_funcs``, the weighted callable, PPO, the shims, the CLI, the server) goes
through the reward base, which reports here.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence

from ._batch import Score
from .errors import MissingColumnError, RewardNotScoringWarning

__all__ = ["FAILED", "FAILING_STREAK", "ScoringWatch"]

FAILED = ("error", "timeout")
# Failed samples in a row (over one-sample batches, as verl and OpenRLHF send them) that say the
# reward is down rather than one row being bad; a whole batch of two or more failing says it at once.
FAILING_STREAK = 8


class ScoringWatch:
    """One reward's record: whether it has been said, and how many samples in a row failed."""

    def __init__(self) -> None:
        self.said = False
        self.streak = 0
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple:
        return (ScoringWatch, ())  # a copy in another process says it there again

    def missing_column(self, reward: str, exc: MissingColumnError) -> None:
        """The reward needs a column the batch does not have: say so now (the rows all lack it)."""
        if self._first():
            _warn(f"rewardhub: not scoring: {exc} Until then each of its samples is None (outcome 'error'), "
                  f"which trainers leave out of their means.")

    def batch_done(self, reward: str, scores: Sequence[Score]) -> None:
        """Count a finished batch; say it when no sample was scored because they failed."""
        failed = [s for s in scores if s.outcome in FAILED]
        with self._lock:
            if not failed or any(s.outcome == "ok" for s in scores):
                self.streak = 0
                return
            self.streak += len(scores)
            if self.said or (len(scores) < 2 and self.streak < FAILING_STREAK):
                return
            self.said = True
        kinds = " or ".join(sorted({s.outcome for s in failed}))
        _warn(f"rewardhub: reward {reward!r} is not scoring: none of its last {self.streak} samples got a score "
              f"(outcome {kinds}; first reason: {failed[0].reason or 'none given'}). Its samples are None (or "
              f"its error/timeout score), which trainers leave out of their means; the counts are logged as "
              f"{reward}/errors and {reward}/timeouts.")

    def _first(self) -> bool:
        with self._lock:
            first, self.said = not self.said, True
            return first


def _warn(message: str) -> None:
    warnings.warn(message + " (said once per reward)", RewardNotScoringWarning, stacklevel=2)
