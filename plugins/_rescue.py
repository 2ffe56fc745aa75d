"""Rescue by a model verifier: an entry's ``rescue`` asks a second reward about the rows its rule scored a plain 0.

    - name: math
      rescue: {name: judge, params: {mode: verify, base_url: "http://127.0.0.1:8000/v1", model: verifier},
               max_share: 0.25, max_chars: 8000}

Rule verifiers miss right answers written in forms they do not read; a model verifier (CompassVerifier,
xVerify, a judge in ``mode: verify``) recovers many of them, and is consulted only where the rule says no:

- sent: rows the rule scored exactly 0.0 with outcome ``ok`` and not ``final`` (a hedge, several disagreeing
  answers or no answer at all stay 0 whatever a model says), whose completion is at most ``max_chars``
  characters, at most ``max_share`` of the batch's rows (in batch order): the cost cap per batch;
- never sent: a row the rule passed, an abstention or failure of the rule, a ``final`` 0, a longer completion;
- the verifier can only turn a 0 into 1.0, when its verdict is a pass; when it fails, times out, abstains
  or says no, the rule's 0 stands and the reason says why. Rescued rows say ``rescued by ...`` in their
  reason; each call logs ``<alias>/rescued`` and ``<alias>/rescue_sent`` (counts) and ``<alias>/rescued_share``
  (of the batch's rows) through ``log_metric``, which the report plots over training steps; ``totals`` keeps
  the running counts.
"""

from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass, field
from typing import Any

from ._batch import Batch, Score
from ._reward import AsyncReward, BatchResult, Reward, aevaluate_any
from .errors import ConfigError, shown, unknown_keys_message

__all__ = ["RESCUE_KEYS", "AsyncRescuedReward", "Rescue", "RescueResult", "RescuedReward", "parse_rescue",
           "with_rescue"]

RESCUE_KEYS = ("name", "params", "max_share", "max_chars")
# (sent, rescued) of the batch being scored, read by ``_finish`` in the same call
_counts: contextvars.ContextVar[tuple[int, int]] = contextvars.ContextVar("rescue_counts", default=(0, 0))


@dataclass(frozen=True)
class Rescue:
    """The model verifier an entry consults on its plain 0s, and the bounds on what it is sent."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    max_share: float = 0.25
    max_chars: int = 8000


def parse_rescue(where: str, raw: Any) -> Rescue | None:
    """A :class:`Rescue` from an entry's ``rescue`` mapping (``None`` when absent)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: 'rescue' must be a mapping with {', '.join(RESCUE_KEYS)}, got {shown(raw)}")
    unknown = [k for k in raw if k not in RESCUE_KEYS]
    if unknown:
        raise ConfigError(unknown_keys_message(f"{where}: rescue", unknown, RESCUE_KEYS))
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: rescue needs 'name': the model verifier's reward name (e.g. judge)")
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: rescue 'params' must be a mapping, got {type(params).__name__}")
    share = raw.get("max_share", 0.25)
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
        raise ConfigError(f"{where}: rescue 'max_share' must be a share of the batch in (0, 1], got {shown(share)}")
    chars = raw.get("max_chars", 8000)
    if isinstance(chars, bool) or not isinstance(chars, int) or chars < 1:
        raise ConfigError(f"{where}: rescue 'max_chars' must be a positive whole number of characters, "
                          f"got {shown(chars)}")
    return Rescue(name, dict(params), float(share), chars)


def with_rescue(rule: Reward, rescue: Rescue, alias: str, rescuer: Reward) -> Reward:
    """``rule`` wrapped so that ``rescuer`` sees its plain 0s (async when either is)."""
    cls = AsyncRescuedReward if isinstance(rule, AsyncReward) or isinstance(rescuer, AsyncReward) else RescuedReward
    return cls(rule, rescuer, rescue, alias)


@dataclass(frozen=True)
class RescueResult(BatchResult):
    """A batch result with how many rows were sent to the verifier and how many it rescued."""

    rescue_sent: int = 0
    rescued: int = 0


def plain_zero(score: Score) -> bool:
    """A 0 a verifier may overturn: a scored 0.0 (outcome ``ok``) the rule did not mark ``final``."""
    return score.value == 0.0 and score.outcome == "ok" and not score.final


class RescuedReward(Reward):
    """A rule reward whose plain 0s a model verifier may turn into 1.0 (see the module)."""

    watched = False  # the rule and the verifier say for themselves when they are not scoring

    def __init__(self, rule: Reward, rescuer: Reward, rescue: Rescue, alias: str):
        super().__init__(on_error="raise")  # the rule and the verifier contain their own errors
        self.rule, self.rescuer, self.rescue = rule, rescuer, rescue
        self.__name__ = alias
        rescuer.__name__ = f"{alias}/rescue"
        self.totals.update(rescue_sent=0, rescued=0)

    # the rule's interface, seen through the wrapper
    def required_columns(self) -> tuple[str, ...]:
        return self.rule.required_columns()

    def dependencies(self) -> dict[str, str]:
        return self.rule.dependencies()

    def bind(self, role: str, reward: Reward) -> None:
        self.rule.bind(role, reward)

    def score_batch(self, batch: Batch) -> list[Score]:
        scores = self.rule.evaluate_batch(batch).scores
        sent, over = self._to_send(batch, scores)
        verdicts = self.rescuer.evaluate_batch(batch.subset(sent)).scores if sent else []
        return self._merge(scores, sent, over, verdicts)

    def _to_send(self, batch: Batch, scores: list[Score]) -> tuple[list[int], list[int]]:
        """The rows the verifier sees (plain 0s of bounded length, at most ``max_share`` of the batch, in
        batch order) and the plain 0s left out by the cap."""
        plain = [i for i, s in enumerate(scores)
                 if plain_zero(s) and batch.texts[i] is not None and len(batch.texts[i]) <= self.rescue.max_chars]
        cap = math.floor(self.rescue.max_share * len(batch))
        return plain[:cap], plain[cap:]

    def _merge(self, scores: list[Score], sent: list[int], over: list[int], verdicts: list[Score]) -> list[Score]:
        merged = list(scores)
        name = self.rescuer.__name__
        rescued = 0
        for i, verdict in zip(sent, verdicts, strict=True):
            rule = scores[i]
            if verdict.verdict is True and verdict.value is not None:
                merged[i] = Score(1.0, f"rescued by {name} ({verdict.reason}); the rule said: {rule.reason}", True)
                rescued += 1
            else:  # a no, an abstention, a failure or a timeout of the verifier: the rule's 0 stands
                said = verdict.reason or verdict.outcome
                merged[i] = Score(rule.value, f"{rule.reason}; {name} did not rescue it: {said}", rule.verdict)
        for i in over:
            rule = scores[i]
            merged[i] = Score(rule.value, f"{rule.reason}; not sent to {name}: the batch's max_share "
                                          f"{self.rescue.max_share:g} was reached", rule.verdict)
        _counts.set((len(sent), rescued))
        return merged

    def _finish(self, batch: Batch, scores: list[Score], seconds: float, key: tuple | None) -> BatchResult:
        result = super()._finish(batch, scores, seconds, key)
        sent, rescued = _counts.get()
        _counts.set((0, 0))
        self.totals["rescue_sent"] += sent
        self.totals["rescued"] += rescued
        return RescueResult(result.scores, result.seconds, result.errors, sent, rescued)

    def _report(self, result: BatchResult, log_extra: Any = None, log_metric: Any = None) -> None:
        super()._report(result, log_extra=log_extra, log_metric=log_metric)
        if log_metric is not None and isinstance(result, RescueResult):
            log_metric(f"{self.__name__}/rescue_sent", float(result.rescue_sent))
            log_metric(f"{self.__name__}/rescued", float(result.rescued))
            log_metric(f"{self.__name__}/rescued_share", result.rescued / max(len(result.scores), 1))

    def close(self) -> None:
        for reward in (self.rule, self.rescuer):
            closing = getattr(reward, "close", None)
            if closing is not None:
                closing()

    def __repr__(self) -> str:
        return f"<RescuedReward {self.__name__!r}: {self.rule!r} rescued by {self.rescuer!r}>"


class AsyncRescuedReward(AsyncReward, RescuedReward):
    """:class:`RescuedReward` when the rule or the verifier is async (a judge): awaited, never blocking the loop."""

    async def score_batch_async(self, batch: Batch) -> list[Score]:
        scores = (await aevaluate_any(self.rule, batch)).scores
        sent, over = self._to_send(batch, scores)
        verdicts = (await aevaluate_any(self.rescuer, batch.subset(sent))).scores if sent else []
        return self._merge(scores, sent, over, verdicts)
