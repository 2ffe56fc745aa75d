"""Abstentions in framework logs: never a silent 0.0, and one warning when a reward abstains on a whole batch.

(A reward whose samples *fail*, a missing column among the causes, is said by the reward itself:
``rewardhub.RewardNotScoringWarning``. This one is for rewards that do not apply, as below.)

A reward abstains (``None``) when it does not apply or its infrastructure failed, e.g. ``math`` with
no gold answer because the trainer sent no labels. Logged as 0.0 that looks like 0% accuracy, so the
shims log abstentions as values the frameworks leave out of their means (OpenRLHF: NaN, verl: None)
next to an ``<alias>/abstained`` indicator, and say once per reward when a batch had nothing to score.
"""

from __future__ import annotations

import logging
import threading

from rewardhub import SetResult

__all__ = ["logger", "warn_if_all_abstained"]

logger = logging.getLogger("rewardhub.trainers")

_warned: set[str] = set()
_lock = threading.Lock()


def warn_if_all_abstained(scored: SetResult) -> None:
    """Log a warning (once per reward alias and process) when ``alias`` abstained on every sample
    (failures are said by the reward itself)."""
    for alias, result in scored.components.items():
        if not result.scores or any(s.value is not None or s.outcome != "abstain" for s in result.scores):
            continue
        with _lock:
            if alias in _warned:
                continue
            _warned.add(alias)
        reason = result.scores[0].reason or "no reason given"
        logger.warning(
            "rewardhub: %r abstained on every sample of a batch of %d (first reason: %s). Its logged mean "
            "leaves abstentions out; where every reward abstains the trainer gets abstain_value. Check that "
            "the columns it needs reach it (OpenRLHF: --data.label_key; verl: reward_model.ground_truth). "
            "This warning is shown once per reward.",
            alias, len(result.scores), reason,
        )
