"""What every signal shares (:class:`Context`, :class:`Finding`, trend helpers) and the two signals read from the
trainer's side of the set: abstention spikes and one reward dominating the advantage.

Each signal function takes the window of :class:`~rewardhub.hacking.steps.StepSummary` (oldest
first) and the :class:`Context` (roles, weights, change trackers) and returns the :class:`Finding` s that hold
at the latest step. A finding becomes an alarm in :mod:`rewardhub.hacking.monitor` once it has held at
``PERSIST`` of the last ``PERSIST_OF`` steps (a spike of abstentions at once). The signals that read how
what is paid relates to what is right live in :mod:`rewardhub.hacking.relations`.

The thresholds are relative (trend t-statistics against the series' own noise, effects in units of
the reward's spread, rates against their earlier level), so they do not depend on a reward's scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .changes import Change
from .steps import Row, StepSummary
from .trends import Trend, trend

__all__ = ["Context", "Finding", "abstentions", "dominance", "series", "steps_text", "trend_of"]

MIN_STEPS = 5  # steps seen before any trend is read
PERSIST = 2  # a trend finding raises an alarm once it holds at this many of the last PERSIST_OF steps
PERSIST_OF = 3
RISE_T = 3.0  # a trend's t-statistic for "rises" (about p < 0.01 over 8 steps)
SPIKE_RISE = 0.1  # abstention / failure rate: absolute rise over its earlier level
SPIKE_Z = 4.0  # and its z against both steps' sampling errors
DOMINANT_SHARE = 0.8  # one reward's share of the advantage
DOMINANT_EXCESS = 0.3  # above the share its weight gives it
DOMINANT_RISE = 0.25  # and risen this much over the window (a share fixed by the config is no hack)
VARYING = 0.25  # a reward has signal of its own when it varies in this fraction of groups


@dataclass(frozen=True)
class Context:
    """What the signals need to know of the set: each alias's role and weight (at the latest step), the aliases
    that say what is right (``truth``), and the change trackers of the monitored series (by series name)."""

    roles: Mapping[str, str | None]
    weights: Mapping[str, float]
    truth: Sequence[str] = ()
    changes: Mapping[str, Change] = field(default_factory=dict)
    history: Sequence[StepSummary] = ()  # every step seen (the window is its end)

    def having(self, role: str) -> list[str]:
        return [a for a, r in self.roles.items() if r == role]

    @property
    def paid(self) -> list[str]:
        return [a for a, w in self.weights.items() if w != 0 and self.roles.get(a) != "audit"]


@dataclass(frozen=True)
class Finding:
    """A signal holding at a step: which (``signal``, ``subject``), a sentence with the numbers, the numbers."""

    signal: str
    subject: str
    message: str
    figures: dict[str, float] = field(default_factory=dict)
    immediate: bool = False  # raise at once (a spike), without waiting for it to persist
    exemplary: Callable[[Row], float] | None = None  # ranks the step's rows: the top ones are quoted as examples
    since: float | None = None  # the step the change began, when known

    @property
    def key(self) -> str:
        return f"{self.signal}:{self.subject}" if self.subject else self.signal


def series(window: Sequence[StepSummary], name: str) -> tuple[list[float], list[float], list[float]]:
    """A figure's means, standard errors and spreads over the steps of ``window`` that have it."""
    have = [s for s in window if name in s.means]
    return ([s.means[name] for s in have], [s.errors.get(name, 0.0) for s in have],
            [s.spreads.get(name, 0.0) for s in have])


def trend_of(window: Sequence[StepSummary], name: str) -> tuple[Trend, float] | None:
    """The trend of ``name`` and its mean per-sample spread; None with too few steps."""
    means, errors, spreads = series(window, name)
    if len(means) < MIN_STEPS:
        return None
    return trend(means, errors), math.fsum(spreads) / len(spreads)


def steps_text(window: Sequence[StepSummary]) -> str:
    return f"steps {window[0].step:g}-{window[-1].step:g}"


def abstentions(window: Sequence[StepSummary], ctx: Context) -> list[Finding]:
    """A reward's abstention or failure (error, timeout) rate jumps above its earlier level, or climbs."""
    if len(window) < MIN_STEPS:
        return []
    latest, before = window[-1], window[:-1]
    found = []
    for alias in ctx.weights:
        for kind in ("abstained", "failed"):
            name = f"{kind}/{alias}"
            means, errors, _ = series(before, name)
            if name not in latest.means or len(means) < MIN_STEPS - 1:
                continue
            ref = math.fsum(means) / len(means)
            ref_error = math.sqrt(math.fsum(e * e for e in errors)) / len(errors)
            now, now_error = latest.means[name], latest.errors.get(name, 0.0)
            scale = math.hypot(now_error, ref_error)
            z = (now - ref) / scale if scale > 0 else (math.inf if now > ref else 0.0)
            spike = now - ref >= SPIKE_RISE and now >= 2 * ref + 0.02 and z >= SPIKE_Z
            climb = trend(*series(window, name)[:2])
            climbs = climb.t >= RISE_T and climb.now - climb.before >= SPIKE_RISE and climb.now >= 2 * climb.before + 0.02
            if spike or climbs:
                what = "abstains on" if kind == "abstained" else "fails (errors or timeouts) on"
                since = (f"up from {ref:.0%} over the previous {len(means)} steps (z={z:.1f})" if spike else
                         f"climbing from {climb.before:.0%} over {steps_text(window)} (t={climb.t:.1f})")
                found.append(Finding("abstentions", f"{alias}/{kind}", (
                    f"{alias!r} {what} {now:.0%} of its rows at step {latest.step:g}, {since}"),
                    {"rate": now, "before": ref if spike else climb.before, "z": z if spike else climb.t},
                    immediate=spike))
    return found


def dominance(window: Sequence[StepSummary], ctx: Context) -> list[Finding]:
    """One reward comes to make most of the advantage although others with signal of their own are weighted in."""
    recent = window[-3:]
    if len(window) < MIN_STEPS or any(not s.shares for s in window):
        return []
    found = []
    for alias in ctx.paid:
        excess, drowned = [], set()
        for summary in recent:
            live = [a for a in ctx.paid if summary.varying.get(a, 0.0) >= VARYING]
            if alias not in live or len(live) < 2:
                break
            intended = ctx.weights[alias] ** 2 / math.fsum(ctx.weights[a] ** 2 for a in live)
            share = summary.shares.get(alias, 0.0)
            if share < DOMINANT_SHARE or share - intended < DOMINANT_EXCESS:
                break
            excess.append((share, intended))
            drowned.update(a for a in live if a != alias)
        earlier = [s.shares.get(alias, 0.0) for s in window[:2]]
        before = math.fsum(earlier) / len(earlier)
        if len(excess) == len(recent) and excess[-1][0] - before >= DOMINANT_RISE:
            share, intended = excess[-1]
            others = ", ".join(repr(a) for a in sorted(drowned))
            found.append(Finding("dominance", alias, (
                f"{alias!r} has come to make {share:.0%} of the advantage (from {before:.0%} at step "
                f"{window[0].step:g}; its weight gives it {intended:.0%}); {others} vary within prompts but barely "
                f"move it: consider aggregate: normalize_then_sum or rescaling {alias!r}"),
                {"share": share, "before": before, "intended": intended}))
    return found


