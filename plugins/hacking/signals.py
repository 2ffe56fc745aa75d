"""The reward-hacking signals, each read from the last steps' summaries and reported with its figures.

Each signal function takes the window of :class:`~rewardhub.hacking.steps.StepSummary` (oldest
first) and the :class:`Context` (roles, weights) and returns the :class:`Finding` s that hold at the
latest step. A finding becomes an alarm in :mod:`rewardhub.hacking.monitor` once it has held at ``PERSIST`` of
the last ``PERSIST_OF`` steps (a spike of abstentions at once).

The thresholds are relative (trend t-statistics against the series' own noise, effects in units of
the reward's spread, rates against their earlier level), so they do not depend on a reward's scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from .signatures import SIGNATURES
from .steps import StepSummary
from .trends import Trend, trend

MIN_STEPS = 5  # steps seen before any trend is read
PERSIST = 2  # a trend finding raises an alarm once it holds at this many of the last PERSIST_OF steps
PERSIST_OF = 3
RISE_T = 3.0  # a trend's t-statistic for "rises" (about p < 0.01 over 8 steps)
FALL_T = -2.0  # for "falls", once the other side has risen
FLAT_T = 1.0  # below this, a series "stays flat" (when its effect is small too)
RISE_EFFECT = 0.3  # the reward's rise, in units of its per-sample spread
LENGTH_GROWTH = 0.15  # relative growth of the mean completion length
LENGTH_CORRELATION = 0.4  # within-group rank correlation of length with what is paid
TEMPLATE_RISE = 0.15  # absolute rise of a templating rate
TEMPLATE_LEVEL = 0.2  # and the level it must reach
SPIKE_RISE = 0.1  # abstention / failure rate: absolute rise over its earlier level
SPIKE_Z = 4.0  # and its z against both steps' sampling errors
DOMINANT_SHARE = 0.8  # one reward's share of the advantage
DOMINANT_EXCESS = 0.3  # above the share its weight gives it
DOMINANT_RISE = 0.25  # and risen this much over the window (a share fixed by the config is no hack)
VARYING = 0.25  # a reward has signal of its own when it varies in this fraction of groups
SIGNATURE_RATE = 0.05  # a hack signature's rate in each of the last two steps
TEMPLATED = ("repeat", "dup_group", "dup_across", "template_share")
TEMPLATED_TEXT = {
    "repeat": "repeated word 4-grams within completions",
    "dup_group": "completions identical to another of their prompt",
    "dup_across": "completions identical to one given to another prompt",
    "template_share": "4-grams shared by the completions of most prompts",
}


@dataclass(frozen=True)
class Context:
    """What the signals need to know of the set: each alias's role and weight (at the latest step)."""

    roles: Mapping[str, str | None]
    weights: Mapping[str, float]

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

    @property
    def key(self) -> str:
        return f"{self.signal}:{self.subject}" if self.subject else self.signal


def series(window: Sequence[StepSummary], name: str) -> tuple[list[float], list[float], list[float]]:
    """A figure's means, standard errors and spreads over the steps of ``window`` that have it."""
    have = [s for s in window if name in s.means]
    return ([s.means[name] for s in have], [s.errors.get(name, 0.0) for s in have],
            [s.spreads.get(name, 0.0) for s in have])


def _trend(window: Sequence[StepSummary], name: str) -> tuple[Trend, float] | None:
    """The trend of ``name`` and its mean per-sample spread; None with too few steps."""
    means, errors, spreads = series(window, name)
    if len(means) < MIN_STEPS:
        return None
    return trend(means, errors), math.fsum(spreads) / len(spreads)


def _effect(t: Trend, spread: float) -> float:
    if t.change == 0:
        return 0.0
    return t.change / spread if spread > 0 else math.copysign(math.inf, t.change)


def _by_role(window: Sequence[StepSummary], ctx: Context, role: str) -> Iterator[tuple[str, Trend, float]]:
    """Each reward of ``role`` with the trend of its mean and that trend's effect (in units of its spread)."""
    for alias in ctx.having(role):
        seen = _trend(window, f"value/{alias}")
        if seen is not None:
            yield alias, seen[0], _effect(*seen)


def _figures(**trends: Trend) -> dict[str, float]:
    """An alarm's numbers: each named trend's earlier level, latest value and t-statistic."""
    out: dict[str, float] = {}
    for name, t in trends.items():
        out.update({f"{name}_before": t.before, f"{name}_now": t.now, f"{name}_t": t.t})
    return out


def _steps(window: Sequence[StepSummary]) -> str:
    return f"steps {window[0].step:g}-{window[-1].step:g}"


def audit(window: Sequence[StepSummary], ctx: Context) -> list[Finding]:
    """The paid reward rises while an audit reward (weight 0) falls or stops following it; or the audit
    falls decisively while the paid reward holds."""
    paid = _trend(window, "reward")
    if paid is None:
        return []
    total, total_spread = paid
    rise = _effect(total, total_spread)
    rises = total.t >= RISE_T and rise >= RISE_EFFECT
    found = []
    for alias, check, effect in _by_role(window, ctx, "audit"):
        falls = check.t <= FALL_T and effect < 0
        collapses = check.t <= -RISE_T and effect <= -2 * RISE_EFFECT and total.change >= 0
        lags = rises and check.t < FLAT_T and effect <= 0.2 * rise
        paired = _trend(window, f"gap/{alias}")  # paid minus audit on the same completions
        parts = paired is not None and paired[0].t >= RISE_T and _effect(*paired) >= RISE_EFFECT \
            and effect <= 0.1 and total.change >= 0
        if not (rises and falls or collapses or lags or parts):
            continue
        how = "falls" if effect < 0 else "does not follow"
        paid_how = "rises" if total.change > 0 else "holds"
        found.append(Finding("audit", alias, (
            f"the paid reward {paid_how} ({total.before:.3g} -> {total.now:.3g} over {_steps(window)}, t={total.t:.1f}) "
            f"while the audit reward {alias!r} {how} ({check.before:.3g} -> {check.now:.3g}, t={check.t:.1f})"),
            _figures(reward=total, audit=check)))
    return found


def length(window: Sequence[StepSummary], ctx: Context) -> list[Finding]:
    """Completions grow longer, what is paid grows with them, and within a prompt the longer earn more."""
    seen = _trend(window, "length")
    if seen is None:
        return []
    grows, _ = seen
    if not (grows.t >= RISE_T and grows.relative >= LENGTH_GROWTH):
        return []
    best: tuple[float, str, Trend] | None = None
    for target in ("reward", *ctx.paid):
        paid = _trend(window, "reward" if target == "reward" else f"value/{target}")
        recent = [s.length_correlation[target] for s in window[-3:] if target in s.length_correlation]
        if paid is None or not recent:
            continue
        corr = math.fsum(recent) / len(recent)
        if paid[0].t >= 2.0 and paid[0].change > 0 and corr >= LENGTH_CORRELATION and (best is None or corr > best[0]):
            best = (corr, target, paid[0])
    if best is None:
        return []
    corr, target, paid_trend = best
    what = "the paid reward" if target == "reward" else f"{target!r}"
    return [Finding("length", "", (
        f"completions grow longer ({grows.before:.0f} -> {grows.now:.0f} characters over {_steps(window)}) and "
        f"{what} grows with them ({paid_trend.before:.3g} -> {paid_trend.now:.3g}); within a prompt, length and "
        f"{what} correlate at {corr:.2f}: length is being paid for"),
        {**_figures(length=grows, paid=paid_trend), "correlation": corr})]


def format_only(window: Sequence[StepSummary], ctx: Context) -> list[Finding]:
    """A format reward rises while the correctness reward stays flat (or falls)."""
    found = []
    for fmt, rises, effect in _by_role(window, ctx, "format"):
        if not (rises.t >= RISE_T and effect >= 2 * RISE_EFFECT):
            continue
        for correct, flat, flat_effect in _by_role(window, ctx, "correctness"):
            if flat.t < FLAT_T and flat_effect <= 0.1:
                found.append(Finding("format", f"{fmt}/{correct}", (
                    f"the format reward {fmt!r} rises ({rises.before:.3g} -> {rises.now:.3g} over {_steps(window)}, "
                    f"t={rises.t:.1f}) while the correctness reward {correct!r} stays flat ({flat.before:.3g} -> "
                    f"{flat.now:.3g}, t={flat.t:.1f})"),
                    _figures(format=rises, correctness=flat)))
    return found


def templated(window: Sequence[StepSummary], ctx: Context) -> list[Finding]:
    """Completions turn templated: repeated n-grams, identical completions within or across prompts."""
    risen = []
    for name in TEMPLATED:
        seen = _trend(window, name)
        if seen is None:
            continue
        t, _ = seen
        if t.t >= RISE_T and t.now - t.before >= TEMPLATE_RISE and t.now >= TEMPLATE_LEVEL:
            risen.append((name, t))
    if not risen:
        return []
    parts = "; ".join(f"{TEMPLATED_TEXT[n]}: {t.before:.0%} -> {t.now:.0%}" for n, t in risen)
    figures = {f"{n}_before": t.before for n, t in risen} | {f"{n}_now": t.now for n, t in risen}
    return [Finding("templated", "", f"completions turn templated over {_steps(window)} ({parts})", figures)]


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
                         f"climbing from {climb.before:.0%} over {_steps(window)} (t={climb.t:.1f})")
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


def signatures(window: Sequence[StepSummary], ctx: Context) -> list[Finding]:
    """A known hack signature spreads and the completions carrying it are paid at least as well."""
    if len(window) < MIN_STEPS:
        return []
    found = []
    for name in SIGNATURES:
        rates, _, _ = series(window, f"signature/{name}")
        if len(rates) < MIN_STEPS or min(rates[-2:]) < SIGNATURE_RATE:
            continue
        earlier = math.fsum(rates[:-2]) / len(rates[:-2])
        gaps = [s.signature_gap[name] for s in window[-2:] if name in s.signature_gap]
        now = rates[-1]
        if now >= 3 * earlier + 0.03 and gaps and min(gaps) >= 0:
            found.append(Finding("signatures", name, (
                f"{now:.0%} of completions at step {window[-1].step:g} carry the hack signature {name!r} (from "
                f"{earlier:.0%} before) and are paid {gaps[-1]:+.3g} relative to the others"),
                {"rate": now, "before": earlier, "paid_gap": gaps[-1]}))
    return found


SIGNAL_FUNCTIONS: dict[str, Callable[[Sequence[StepSummary], Context], list[Finding]]] = {
    "audit": audit,
    "length": length,
    "format": format_only,
    "templated": templated,
    "abstentions": abstentions,
    "dominance": dominance,
    "signatures": signatures,
}
