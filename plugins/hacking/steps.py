"""One training step as the monitor sees it: the scored rows it was told about, summarised into figures.

A :class:`StepRows` collects rows (their group, text shape, each reward's value and outcome, hack
signatures) as they are reported; :meth:`StepRows.summary` turns them into a :class:`StepSummary`,
the numbers the signals read: means with their standard errors (prompt groups as the unit), rates,
within-group correlations and each reward's share of the advantage.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from .._set.aggregate import normalized_in_groups
from .signatures import SIGNATURES
from .text import TextShape, duplicate_rates, template_share
from .trends import grouped_rate, within_group_moments, within_group_rank_correlation

__all__ = ["FAILED", "Row", "StepRows", "StepSummary", "Weighting"]

FAILED = ("error", "timeout")


@dataclass(frozen=True)
class Row:
    """One scored completion: its group key, its text's shape (None: no text), values and outcomes by
    alias, the aliases whose route covers it, and its hack signatures."""

    key: Hashable
    shape: TextShape | None
    values: Mapping[str, float | None]
    outcomes: Mapping[str, str]
    routed: frozenset[str]
    signatures: tuple[str, ...]
    text: str = ""  # the completion's start, for the examples an alarm quotes


@dataclass(frozen=True)
class Weighting:
    """How the set combines its rewards at a step: weights by alias, the aggregate and the audit aliases
    (left out of the monitored reward, which is what the policy is paid)."""

    weights: Mapping[str, float]
    aggregate: str
    audits: frozenset[str]
    truth: frozenset[str] = frozenset()  # what says whether an answer is right: the audits, else correctness
    checked: tuple[tuple[str, str], ...] = ()  # (paid checker, audit) pairs read side by side
    coupling: Mapping[str, Sequence[float]] = field(default_factory=dict)  # alias -> within-prompt moments with the
    # truth pooled over the steps before (co-moment, the truth's moment): the slope its excess is taken beyond


@dataclass
class StepSummary:
    """A step's figures: ``means`` (name -> value), their standard errors, per-sample spreads and ranges (the
    largest less the smallest value), and the per-alias correlations and advantage shares."""

    step: float
    rows: int
    groups: int
    means: dict[str, float] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)
    spreads: dict[str, float] = field(default_factory=dict)
    ranges: dict[str, float] = field(default_factory=dict)
    length_correlation: dict[str, float] = field(default_factory=dict)  # target ("reward" or alias) -> corr
    shares: dict[str, float] = field(default_factory=dict)  # alias -> share of the advantage's variance
    varying: dict[str, float] = field(default_factory=dict)  # alias -> fraction of groups where it varies
    signature_gap: dict[str, float] = field(default_factory=dict)  # signature -> reward(marked) - reward(rest)
    coupling: dict[str, tuple[float, float]] = field(default_factory=dict)  # alias -> within-group moments with truth
    template_paid: float | None = None  # within-group corr of a completion's templating with what it is paid

    def mean(self, name: str) -> float | None:
        return self.means.get(name)


class StepRows:
    """The rows reported for one step (possibly over several calls)."""

    def __init__(self, step: float):
        self.step = step
        self.rows: list[Row] = []

    def add(self, rows: Sequence[Row]) -> None:
        self.rows.extend(rows)

    def summary(self, weighting: Weighting) -> StepSummary:
        rows = self.rows
        index: dict[Hashable, list[int]] = {}
        for i, row in enumerate(rows):
            index.setdefault(row.key, []).append(i)
        groups = list(index.values())
        out = StepSummary(self.step, len(rows), len(groups))
        aliases = list(weighting.weights)
        values = {alias: [row.values.get(alias) for row in rows] for alias in aliases}
        paid = [_paid(row, weighting) for row in rows]
        _mean_into(out, "reward", paid, groups)
        for alias in aliases:
            _mean_into(out, f"value/{alias}", values[alias], groups)
            routed = [[i for i in g if alias in rows[i].routed] for g in groups]
            for name, kinds in (("abstained", ("abstain",)), ("failed", FAILED)):
                hits = [sum(1 for i in g if rows[i].outcomes.get(alias) in kinds) for g in routed]
                rate, error = grouped_rate(hits, [len(g) for g in routed])
                out.means[f"{name}/{alias}"], out.errors[f"{name}/{alias}"] = rate, error
        shapes = [row.shape for row in rows]
        lengths = [float(s.length) if s is not None else None for s in shapes]
        _mean_into(out, "length", lengths, groups)
        _mean_into(out, "log_length", [math.log1p(n) if n is not None else None for n in lengths], groups)
        truth = [_truth(row, weighting.truth) for row in rows]
        if weighting.truth:
            _mean_into(out, "truth", truth, groups)
            beyond = [None if p is None else p - math.fsum(weighting.weights[a] * row.values[a] for a in weighting.truth
                                                           if a not in weighting.audits and row.values.get(a) is not None)
                      for p, row in zip(paid, rows, strict=True)]
            _mean_into(out, "beyond", beyond, groups)  # what is paid for anything but the truth
        for checker, audit in weighting.checked:
            pair = [None if c is None or a is None else c - a for c, a in zip(values[checker], values[audit], strict=True)]
            _mean_into(out, f"gap/{checker}/{audit}", pair, groups)
        for target, series in (("reward", paid), ("truth", truth), *values.items()):
            corr = within_group_rank_correlation(lengths, series, groups)
            if corr is not None:
                out.length_correlation[target] = corr
            if target not in ("reward", "truth", *weighting.truth) and weighting.truth:
                out.coupling[target] = within_group_moments(truth, series, groups)
                _excess_into(out, target, series, truth, weighting, groups)
        _text_figures(out, [s for s in shapes if s is not None], shapes, groups, paid)
        _signature_figures(out, rows, paid, groups)
        _advantage_shares(out, values, weighting, groups)
        return out


def _paid(row: Row, weighting: Weighting) -> float | None:
    parts = [w * row.values[a] for a, w in weighting.weights.items()
             if a not in weighting.audits and row.values.get(a) is not None]
    return math.fsum(parts) if parts else None


def _truth(row: Row, aliases: frozenset[str]) -> float | None:
    present = [row.values[a] for a in aliases if row.values.get(a) is not None]
    return math.fsum(present) / len(present) if present else None  # type: ignore[arg-type]


def _mean_into(out: StepSummary, name: str, values: Sequence[float | None], groups: Sequence[Sequence[int]]) -> None:
    """The mean of the present ``values``, its standard error with groups as the unit, and the spread."""
    present = [(g, values[i]) for g, group in enumerate(groups) for i in group if values[i] is not None]
    if not present:
        return
    n = len(present)
    mean = math.fsum(v for _, v in present) / n
    spread = math.sqrt(math.fsum((v - mean) ** 2 for _, v in present) / (n - 1)) if n > 1 else 0.0
    by_group: dict[int, float] = {}
    for g, v in present:
        by_group[g] = by_group.get(g, 0.0) + (v - mean)
    k = len(by_group)
    clustered = math.sqrt(math.fsum(r * r for r in by_group.values()) * k / max(k - 1, 1)) / n
    out.means[name] = mean
    out.errors[name] = max(clustered, spread / math.sqrt(n))
    out.spreads[name] = spread
    out.ranges[name] = max(v for _, v in present) - min(v for _, v in present)


def _excess_into(out: StepSummary, alias: str, values: Sequence[float | None], truth: Sequence[float | None],
                 weighting: Weighting, groups: Sequence[Sequence[int]]) -> None:
    """``excess/<alias>``: the reward beyond what the truth explains, row by row (its value less its within-prompt
    slope on the truth, pooled over the run up to this step, times the row's truth), so a reward that rises because
    answers got right does not count, and the noise of what is left is measured on the rows themselves (a judge's
    excess scatters far less than its value, which carries every right and wrong answer)."""
    sxy, sxx = out.coupling[alias]
    before = weighting.coupling.get(alias, (0.0, 0.0))
    pooled_xy, pooled_xx = before[0] + sxy, before[1] + sxx
    slope = max(pooled_xy / pooled_xx, 0.0) if pooled_xx > 0 else 0.0
    _mean_into(out, f"excess/{alias}", [None if v is None or t is None else v - slope * t
                                        for v, t in zip(values, truth, strict=True)], groups)


def _rate_into(out: StepSummary, name: str, marks: Sequence[bool], groups: Sequence[Sequence[int]]) -> None:
    rate, error = grouped_rate([sum(1 for i in g if marks[i]) for g in groups], [len(g) for g in groups])
    out.means[name], out.errors[name] = rate, error


def _text_figures(out: StepSummary, present: list[TextShape], shapes: list[TextShape | None],
                  groups: Sequence[Sequence[int]], paid: Sequence[float | None]) -> None:
    if not present:
        return
    text_groups = [[i for i in g if shapes[i] is not None] for g in groups]
    text_groups = [g for g in text_groups if g]
    _mean_into(out, "repeat", [s.repeated if s is not None else None for s in shapes], groups)
    within, across, counted = duplicate_rates(shapes, text_groups)  # type: ignore[arg-type]
    if counted:
        se_within = math.sqrt(max(within * (1 - within), 1e-12) / counted)
        se_across = math.sqrt(max(across * (1 - across), 1e-12) / counted)
        out.means["dup_group"], out.errors["dup_group"] = within, se_within
        out.means["dup_across"], out.errors["dup_across"] = across, se_across
    share, per_row = template_share(shapes, text_groups)  # type: ignore[arg-type]
    out.means["template_share"], out.errors["template_share"] = share, 0.0
    templating = [None if s is None else max(s.repeated, per_row.get(i, 0.0)) for i, s in enumerate(shapes)]
    out.template_paid = within_group_rank_correlation(templating, paid, groups)


def _signature_figures(out: StepSummary, rows: Sequence[Row], paid: Sequence[float | None],
                       groups: Sequence[Sequence[int]]) -> None:
    for name in SIGNATURES:
        marks = [name in row.signatures for row in rows]
        _rate_into(out, f"signature/{name}", marks, groups)
        marked = [p for p, m in zip(paid, marks, strict=True) if m and p is not None]
        rest = [p for p, m in zip(paid, marks, strict=True) if not m and p is not None]
        if marked and rest:
            out.signature_gap[name] = math.fsum(marked) / len(marked) - math.fsum(rest) / len(rest)


def _advantage_shares(out: StepSummary, values: Mapping[str, Sequence[float | None]], weighting: Weighting,
                      groups: Sequence[Sequence[int]]) -> None:
    """Each paid reward's share of the within-group variance of the total (what GRPO's advantage is made of)."""
    energy: dict[str, float] = {}
    for alias, series in values.items():
        weight = weighting.weights[alias]
        if alias in weighting.audits or weight == 0:
            continue
        used = normalized_in_groups(series, groups) if weighting.aggregate == "normalize_then_sum" else series
        total = varied = 0.0
        for group in groups:
            present = [used[i] for i in group if used[i] is not None]
            if len(present) < 2:
                continue
            mean = math.fsum(present) / len(present)
            deviation = math.fsum((v - mean) ** 2 for v in present)
            total += weight * weight * deviation
            varied += deviation > 1e-12
        energy[alias] = total
        out.varying[alias] = varied / len(groups) if groups else 0.0
    whole = math.fsum(energy.values())
    if whole > 0:
        out.shares = {alias: e / whole for alias, e in energy.items()}
