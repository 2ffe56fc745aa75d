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
  (of the batch's rows) through the trainer's ``log_metric``, which the report plots over training steps;
  ``counts`` keeps the running totals. The wrapper is one of the set's scorers (``scorers``), not a reward.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from .._batch import Batch, Score
from .._call import Call
from .._reward import BatchResult, aevaluate_any
from ..errors import ConfigError, shown, unknown_keys_message
from .scorers import Scorer, _Awaited

__all__ = ["RESCUE_KEYS", "AsyncRescued", "Rescue", "RescueResult", "Rescued", "parse_rescue", "plain_zero",
           "rescued"]

RESCUE_KEYS = ("name", "params", "max_share", "max_chars")


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


@dataclass(frozen=True)
class RescueResult(BatchResult):
    """A batch result with how many rows were sent to the verifier and how many it rescued."""

    rescue_sent: int = 0
    rescued: int = 0


def plain_zero(score: Score) -> bool:
    """A 0 a verifier may overturn: a scored 0.0 (outcome ``ok``) the rule did not mark ``final``."""
    return score.value == 0.0 and score.outcome == "ok" and not score.final


class Rescued(Scorer):
    """A rule's scorer whose plain 0s a model verifier (``rescuer``) may turn into 1.0 (see the module)."""

    def __init__(self, inner: Any, rescuer: Any, rescue: Rescue):
        super().__init__(inner)
        self.rescuer, self.rescue = rescuer, rescue
        rescuer.__name__ = f"{self.__name__}/rescue"
        self.counts = {"rescue_sent": 0, "rescued": 0}

    @property
    def is_async(self) -> bool:
        return bool(getattr(self.inner, "is_async", False) or getattr(self.rescuer, "is_async", False))

    def _evaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        start = time.perf_counter()
        rule = self.inner.evaluate_batch(batch, call)
        sent, over = self._to_send(batch, rule.scores)
        verdicts = self.rescuer.evaluate_batch(batch.subset(sent), call).scores if sent else []
        return self._merge(rule, sent, over, verdicts, call, time.perf_counter() - start)

    async def _aevaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        start = time.perf_counter()
        rule = await aevaluate_any(self.inner, batch, call)
        sent, over = self._to_send(batch, rule.scores)
        verdicts = (await aevaluate_any(self.rescuer, batch.subset(sent), call)).scores if sent else []
        return self._merge(rule, sent, over, verdicts, call, time.perf_counter() - start)

    def _to_send(self, batch: Batch, scores: list[Score]) -> tuple[list[int], list[int]]:
        """The rows the verifier sees (plain 0s of bounded length, at most ``max_share`` of the batch, in
        batch order) and the plain 0s left out by the cap."""
        plain = [i for i, s in enumerate(scores)
                 if plain_zero(s) and batch.texts[i] is not None and len(batch.texts[i]) <= self.rescue.max_chars]
        cap = math.floor(self.rescue.max_share * len(batch))
        return plain[:cap], plain[cap:]

    def _merge(self, rule: BatchResult, sent: list[int], over: list[int], verdicts: list[Score], call: Call | None,
               seconds: float) -> RescueResult:
        merged = list(rule.scores)
        name = self.rescuer.__name__
        rescued = 0
        for i, verdict in zip(sent, verdicts, strict=True):
            said = rule.scores[i]
            if verdict.verdict is True and verdict.value is not None:
                merged[i] = Score(1.0, f"rescued by {name} ({verdict.reason}); the rule said: {said.reason}", True)
                rescued += 1
            else:  # a no, an abstention, a failure or a timeout of the verifier: the rule's 0 stands
                merged[i] = Score(said.value, f"{said.reason}; {name} did not rescue it: {verdict.reason or verdict.outcome}",
                                  said.verdict)
        for i in over:
            said = rule.scores[i]
            merged[i] = Score(said.value, f"{said.reason}; not sent to {name}: the batch's max_share "
                                          f"{self.rescue.max_share:g} was reached", said.verdict)
        self.counts["rescue_sent"] += len(sent)
        self.counts["rescued"] += rescued
        log_metric = call.log_metric if call is not None else None
        if log_metric is not None:
            log_metric(f"{self.__name__}/rescue_sent", float(len(sent)))
            log_metric(f"{self.__name__}/rescued", float(rescued))
            log_metric(f"{self.__name__}/rescued_share", rescued / max(len(merged), 1))
        return RescueResult(merged, seconds, rule.errors, len(sent), rescued)

    def close(self) -> None:
        for scorer in (self.inner, self.rescuer):
            closing = getattr(scorer, "close", None)
            if callable(closing):
                closing()

    def __repr__(self) -> str:
        return f"<Rescued {self.__name__!r}: {self.inner!r} rescued by {self.rescuer!r}>"


class AsyncRescued(_Awaited, Rescued):
    """A rescue where the rule or the verifier is async (a judge): awaited with TRL's other async rewards."""


def rescued(inner: Any, rescuer: Any, rescue: Rescue) -> Rescued:
    """``inner`` whose plain 0s ``rescuer`` sees (an awaitable scorer when either is async)."""
    is_async = getattr(inner, "is_async", False) or getattr(rescuer, "is_async", False)
    return (AsyncRescued if is_async else Rescued)(inner, rescuer, rescue)
