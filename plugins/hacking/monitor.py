"""The reward-hacking monitor: reads what a reward set scored, step by step, and says when a hack shows.

    monitor = HackingMonitor.for_set(rewards)       # rewards.watch(monitor) is done for you
    ...                                              # TRL, the server, the shims report their batches
    monitor.alarms                                   # [Alarm(signal="length", step=14, message=...)]
    monitor.metrics()                                # {"rewardhub/hacking/length": 1.0, ...}

It never rescores: the values, outcomes and texts come from the calls the set already made (a
``RewardSet`` reports them to its watchers). Each step's rows are summarised
(:mod:`rewardhub.hacking.steps`), each step figure feeds a change tracker against the run's own baseline
(:mod:`rewardhub.hacking.changes`), and the signals (:mod:`rewardhub.hacking.relations`,
:mod:`rewardhub.hacking.signals`) read the trackers and the last ``window`` summaries. An alarm is raised
once per signal and subject, as a :class:`RewardHackingWarning` with its figures, its steps and three example
completions, and stays in :attr:`HackingMonitor.alarms`. With a state file (``monitor: {state: ...}``) the
monitor saves itself at every step and resumes from the file when it starts again.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._set.groups import group_key
from .._set.routing import Route
from ..errors import RewardhubWarning
from . import relations, signals
from .alarms import Alarm
from .changes import Change
from .persist import load_state, save_state
from .settings import SIGNALS, MonitorSettings
from .signals import PERSIST, PERSIST_OF, Context, Finding
from .signatures import SIGNATURES, signatures_of
from .steps import Row, StepRows, StepSummary, Weighting
from .text import shape

__all__ = [
    "BUILTIN_ROLES",
    "EXAMPLES",
    "EXAMPLE_CHARS",
    "FIGURES",
    "HackingMonitor",
    "KEPT_STEPS",
    "PREFIX",
    "READERS",
    "RewardHackingWarning",
    "role_of",
]

if TYPE_CHECKING:
    from .._batch import Batch
    from .._reward import BatchResult
    from .._set.compose import RewardSet

PREFIX = "rewardhub/hacking"
# The signal readers (``divergence`` raises a rising format reward under the signal name ``format``).
READERS: tuple[Callable[[Sequence[StepSummary], Context], list[Finding]], ...] = (
    relations.audit, relations.divergence, relations.length, relations.templated, relations.signatures,
    signals.abstentions, signals.dominance)
EXAMPLES = 3  # completions an alarm quotes
EXAMPLE_CHARS = 400  # of each, at most
KEPT_STEPS = 512  # step summaries kept in memory and in the state file
# The role of built-in families by registry name (a third-party reward says its own with a ``role``
# attribute; an entry's ``role`` key overrides both).
BUILTIN_ROLES = {
    "math": "correctness", "code": "correctness", "exact_match": "correctness", "format_regex": "format",
    "length_penalty": "shaping", "repetition_penalty": "shaping", "heuristic": "shaping",
}
# Step figures logged under rewardhub/hacking/<metric name> (the signals' flags take the signals' own names).
FIGURES = {"reward": "paid_reward", "truth": "truth", "length": "completion_length", "repeat": "repeat", "dup_group": "dup_group",
           "dup_across": "dup_across", "template_share": "template_share"}


class RewardHackingWarning(RewardhubWarning):
    """The monitor suspects reward hacking; the message names the signal and the figures behind it."""


class HackingMonitor:
    """Watch scored batches step by step; raise an :class:`Alarm` when a hacking signal holds.

    ``roles``: alias -> ``correctness`` / ``format`` / ``audit`` / ``shaping`` (or None);
    ``weights_at``: step -> alias -> weight; ``routes``: alias -> route (rows outside it are not the
    reward's abstentions). ``eager``: every complete batch closes its step (TRL, PPO loops: one batch
    per step); else a step closes when a later one arrives (the server, whose calls interleave).
    Steps not given are counted: one per batch when eager, else one per ``samples_per_step`` samples.
    """

    def __init__(
        self,
        roles: Mapping[str, str | None],
        weights_at: Callable[[float], Mapping[str, float]],
        *,
        aggregate: str = "sum",
        routes: Mapping[str, Route | None] | None = None,
        settings: MonitorSettings | None = None,
        eager: bool = True,
        samples_per_step: int = 256,
        warn: bool = True,
    ):
        self.roles = dict(roles)
        self.aliases = list(self.roles)
        self.weights_at = weights_at
        self.aggregate = aggregate
        self.routes = dict(routes or {})
        self.settings = settings or MonitorSettings()
        self.eager = eager
        self.samples_per_step = samples_per_step
        self.warn = warn
        self.history: list[StepSummary] = []
        self.changes: dict[str, Change] = {}  # step figure -> its change tracker
        self.coupling: dict[str, list[float]] = {}  # alias -> pooled within-prompt moments with the truth
        self.alarms: list[Alarm] = []
        self.active: dict[str, list[Finding]] = {}  # signal -> findings at the latest step
        self.late_rows = 0  # rows that arrived for a step already closed (not counted)
        self.on_alarm: list[Callable[[Alarm], None]] = []
        self._open: StepRows | None = None
        self._pending: dict[tuple, tuple[Batch, dict[str, BatchResult], Any]] = {}
        self._recent: list[set[str]] = []  # the finding keys of the last PERSIST_OF evaluations
        self._raised: set[str] = set()
        self._batches = 0
        self._samples = 0
        self._lock = threading.RLock()
        self.audits = [a for a, r in self.roles.items() if r == "audit"]
        correctness = [a for a, r in self.roles.items() if r == "correctness"]
        self.truth = self.audits or correctness
        self.checked = tuple((c, a) for c in correctness for a in self.audits)
        if self.settings.state is not None:
            load_state(self, self.settings.state)

    @classmethod
    def for_set(cls, rewards: RewardSet, **options: Any) -> HackingMonitor:
        """A monitor of ``rewards`` (roles, weights, routes and settings from its config), watching it."""
        monitor = cls(
            {m.alias: role_of(m.entry, m.reward) for m in rewards.members},
            lambda step: rewards.weights_at(step),
            aggregate=rewards.aggregate,
            routes={m.alias: m.entry.when for m in rewards.members},
            settings=rewards.config.monitor,
            **options,
        )
        rewards.watch(monitor)
        return monitor

    # ----- what the set reports -----------------------------------------------------------------
    def observe(self, step: float | None, batch: Batch, results: Mapping[str, BatchResult],
                log_metric: Callable[[str, float], Any] | None = None, keys: Sequence[Hashable] | None = None,
                log_extra: Callable[[str, list], Any] | None = None) -> None:
        """Take a scored batch (all members' results, or some: TRL calls each reward on its own). With
        ``log_extra`` (TRL's), each completion's hack signatures and the alarms raised at its step go into TRL's
        completions table (``rewardhub/hacking/signatures``, ``rewardhub/hacking/alarms``)."""
        with self._lock:
            complete = self._join(step, batch, dict(results), keys)
            if complete is None:
                return
            batch, results, keys = complete
            step = self._step_of(step, len(batch))
            rows = self._rows(batch, results, keys)
            raised = len(self.alarms)
            self.add_rows(step, rows, log_metric)
            if log_extra is not None:
                said = "; ".join(str(a) for a in self.alarms[raised:])
                log_extra(f"{PREFIX}/signatures", [", ".join(r.signatures) for r in rows])
                log_extra(f"{PREFIX}/alarms", [said] * len(rows))

    def add_rows(self, step: float, rows: Sequence[Row], log_metric: Callable[[str, float], Any] | None = None) -> None:
        """Add the rows of a step (the report feeds scored files through here)."""
        with self._lock:
            if self._open is not None and step < self._open.step or self._closed(step):
                self.late_rows += len(rows)
                return
            if self._open is not None and step > self._open.step:
                self._close(log_metric)
            if self._open is None:
                self._open = StepRows(step)
            self._open.add(rows)
            if self.eager:
                self._close(log_metric)

    def flush(self, log_metric: Callable[[str, float], Any] | None = None) -> None:
        """Close the open step now (end of training, end of a scored file)."""
        with self._lock:
            if self._open is not None:
                self._close(log_metric)

    # ----- what it says ---------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        """The latest step's figures and flags under ``rewardhub/hacking/...`` (see :attr:`metric_names`)."""
        with self._lock:
            out = {f"{PREFIX}/alarms": float(len(self.alarms))}
            for signal in SIGNALS:
                out[f"{PREFIX}/{signal}"] = 1.0 if self.active.get(signal) else 0.0
            if not self.history:
                return out
            latest = self.history[-1]
            for name, metric in FIGURES.items():
                if name in latest.means:
                    out[f"{PREFIX}/{metric}"] = latest.means[name]
            if "reward" in latest.length_correlation:
                out[f"{PREFIX}/length_correlation"] = latest.length_correlation["reward"]
            for name in SIGNATURES:
                out[f"{PREFIX}/signature/{name}"] = latest.means.get(f"signature/{name}", 0.0)
            for alias in self.aliases:
                for kind in ("abstained", "failed"):
                    if f"{kind}/{alias}" in latest.means:
                        out[f"{PREFIX}/{kind}/{alias}"] = latest.means[f"{kind}/{alias}"]
                if alias in latest.shares:
                    out[f"{PREFIX}/share/{alias}"] = latest.shares[alias]
            return out

    @property
    def metric_names(self) -> list[str]:
        """Every name :meth:`metrics` may return (for loggers that need a fixed set of keys)."""
        names = [f"{PREFIX}/alarms", *(f"{PREFIX}/{s}" for s in SIGNALS), *(f"{PREFIX}/{f}" for f in FIGURES.values()),
                 f"{PREFIX}/length_correlation", *(f"{PREFIX}/signature/{n}" for n in SIGNATURES)]
        for alias in self.aliases:
            names += [f"{PREFIX}/abstained/{alias}", f"{PREFIX}/failed/{alias}", f"{PREFIX}/share/{alias}"]
        return names

    def report(self) -> dict[str, Any]:
        """Alarms, the latest metrics and the step count, as JSON-ready data (the server's ``/hacking``)."""
        with self._lock:
            return {
                "steps": len(self.history),
                "last_step": self.history[-1].step if self.history else None,
                "alarms": [a.as_dict() for a in self.alarms],
                "metrics": self.metrics(),
                "open_step": None if self._open is None else {"step": self._open.step, "rows": len(self._open.rows)},
                "late_rows": self.late_rows,
            }

    # ----- inside -------------------------------------------------------------------------------------
    def _join(self, step: float | None, batch: Batch, results: dict[str, BatchResult], keys: Any):
        """The batch with every member's results once they have all arrived (else None, kept pending)."""
        if set(results) >= set(self.aliases):
            return batch, results, keys
        token = (step, len(batch), hash(tuple(batch.texts)))
        _, have, have_keys = self._pending.get(token, (batch, {}, keys))
        have.update(results)
        if set(have) >= set(self.aliases):
            del self._pending[token]
            return batch, have, have_keys
        self._pending[token] = (batch, have, have_keys)
        while len(self._pending) > 8:  # a member that never reports must not hold batches forever
            self._pending.pop(next(iter(self._pending)))
        return None

    def _step_of(self, step: float | None, samples: int) -> float:
        self._batches += 1
        self._samples += samples
        if step is not None:
            return float(step)
        if self.eager:
            return float(self._batches - 1)
        return float((self._samples - samples) // self.samples_per_step)

    def _rows(self, batch: Batch, results: Mapping[str, BatchResult], keys: Sequence[Hashable] | None) -> list[Row]:
        covered = {alias: route.applies(batch) for alias, route in self.routes.items() if route is not None
                   and batch.lookup(route.column) is not None}
        rows = []
        for i, text in enumerate(batch.texts):
            key = keys[i] if keys is not None else group_key(None, batch.prompts[i], f"\x00row:{i}")
            rows.append(Row(
                key,
                shape(text) if text is not None else None,
                {alias: results[alias].scores[i].value for alias in self.aliases},
                {alias: results[alias].scores[i].outcome for alias in self.aliases},
                frozenset(a for a in self.aliases if covered.get(a, [True] * len(batch))[i]),
                signatures_of(text) if text is not None else (),
                text[:EXAMPLE_CHARS] if text is not None else "",
            ))
        return rows

    def _closed(self, step: float) -> bool:
        return bool(self.history) and step <= self.history[-1].step

    def _close(self, log_metric: Callable[[str, float], Any] | None) -> None:
        rows, self._open = self._open, None
        if rows is None or not rows.rows:
            return
        weights = dict(self.weights_at(rows.step))
        truth = [a for a in self.truth if a in self.audits or weights.get(a, 0.0) != 0]
        summary = rows.summary(Weighting(weights, self.aggregate, frozenset(self.audits), frozenset(truth),
                                         self.checked, self.coupling))
        self.history = [*self.history[-(KEPT_STEPS - 1):], summary]
        self._track(summary)
        self._evaluate(Context(self.roles, weights, truth, self.changes, self.history), rows.rows)
        if log_metric is not None:
            for name, value in self.metrics().items():
                if math.isfinite(value):
                    log_metric(name, value)
        if self.settings.state is not None:
            save_state(self, self.settings.state)

    def _track(self, summary: StepSummary) -> None:
        """Pool each reward's within-prompt moments with the truth (the slope its ``excess/<alias>`` is taken beyond)
        and feed each step figure to its change tracker (created at its first step)."""
        for alias, (sxy, sxx) in summary.coupling.items():
            pooled = self.coupling.setdefault(alias, [0.0, 0.0])
            pooled[0], pooled[1] = pooled[0] + sxy, pooled[1] + sxx
        for name, mean in summary.means.items():
            if relations.tracked(name) and math.isfinite(mean):
                if name not in self.changes:
                    self.changes[name] = relations.tracker(name, self.settings.baseline, self.settings.threshold,
                                                           summary.rows)
                self.changes[name].add(summary.step, mean, summary.errors.get(name, 0.0), summary.ranges.get(name))

    def _evaluate(self, ctx: Context, rows: Sequence[Row]) -> None:
        window = self.history[-self.settings.window:]
        found = [f for read in READERS for f in read(window, ctx) if self.settings.watches(f.signal)]
        self.active = {}
        for finding in found:
            self.active.setdefault(finding.signal, []).append(finding)
        self._recent = [*self._recent[-(PERSIST_OF - 1):], {f.key for f in found}]
        for finding in found:
            held = sum(finding.key in keys for keys in self._recent)
            if finding.key in self._raised or not (finding.immediate or held >= PERSIST):
                continue
            self._raised.add(finding.key)
            alarm = Alarm(finding.signal, finding.subject, window[-1].step, finding.message, finding.figures,
                          finding.since, _examples(rows, finding))
            self.alarms.append(alarm)
            if self.warn:
                warnings.warn(str(alarm), RewardHackingWarning, stacklevel=2)
            for callback in self.on_alarm:
                callback(alarm)


def _examples(rows: Sequence[Row], finding: Finding) -> tuple[str, ...]:
    """The step's completions that show the finding best (by its ranking; the first ones without one)."""
    texts = [r for r in rows if r.text]
    if finding.exemplary is not None:  # the best-ranked first (the ones that show it), then the next ones
        ranked = sorted(((finding.exemplary(r), i) for i, r in enumerate(texts)), reverse=True)
        texts = [texts[i] for _, i in ranked]
    chosen: list[str] = []
    for row in texts:
        if row.text not in chosen:
            chosen.append(row.text)
        if len(chosen) == EXAMPLES:
            break
    return tuple(chosen)


def role_of(entry: Any, reward: Any) -> str | None:
    """An entry's role for the monitor: its ``role`` key, else ``audit`` for a fixed weight of 0, else the
    reward's own ``role`` attribute, else the built-in family's."""
    if entry.role is not None:
        return entry.role
    if entry.schedule is None and entry.weight == 0:
        return "audit"
    declared = reward.role
    if isinstance(declared, str):
        return declared
    return BUILTIN_ROLES.get(entry.name)
