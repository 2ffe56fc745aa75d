"""The report's charts: matplotlib figures rendered to PNG data URIs, so the HTML needs no other file.

matplotlib is imported inside each function (``import rewardhub`` stays light) and used through
``Figure`` directly, without pyplot's global state.
"""

from __future__ import annotations

import base64
import io
import math
from typing import TYPE_CHECKING

from .hacking import HackingRun
from .stats import Correlation, RewardSummary, Spread, time_unit
from .training import TrainingCurves

__all__ = [
    "ACCENT",
    "DPI",
    "MUTED",
    "PRIMARY",
    "correlation_chart",
    "distribution_chart",
    "hacking_chart",
    "speed_chart",
    "spread_chart",
    "training_chart",
]

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PRIMARY = "#3b6fb6"
ACCENT = "#d9822b"
MUTED = "#9aa3ad"
DPI = 100
_DISCRETE = 12


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    figure.set_facecolor("white")
    return figure


def _data_uri(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _plain(text: str) -> str:
    """``text`` shown literally: matplotlib would read a span between two ``$`` as mathtext."""
    return text.replace("$", r"\$")


def _tidy(axes) -> None:
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(labelsize=8)


def distribution_chart(summary: RewardSummary) -> str | None:
    """Histogram of one reward's values (bars per value when it takes few distinct values)."""
    if not summary.values:
        return None
    figure = _figure(5.0, 2.4)
    axes = figure.add_subplot()
    distinct = sorted(set(summary.values))
    if len(distinct) <= _DISCRETE:
        # bars at the values themselves (not evenly spaced categories), so distances stay truthful
        counts = [summary.values.count(v) for v in distinct]
        span = distinct[-1] - distinct[0]
        gaps = [b - a for a, b in zip(distinct, distinct[1:], strict=False)]
        width = max(0.8 * min(gaps), span / 50) if gaps else 0.8
        axes.bar(distinct, counts, color=PRIMARY, width=width)
        if len(distinct) <= 6:
            axes.set_xticks(distinct, [f"{v:.3g}" for v in distinct])
    else:
        axes.hist(summary.values, bins=30, color=PRIMARY)
    axes.set_ylabel("completions", fontsize=8)
    axes.set_title(f"{_plain(summary.name)}: {len(summary.values)} values, {summary.none_count} None", fontsize=9)
    _tidy(axes)
    return _data_uri(figure)


def spread_chart(spreads: list[Spread]) -> str | None:
    """Horizontal bars: the share of prompt groups in which a reward gives every completion one value."""
    shown = [s for s in spreads if s.groups]
    if not shown:
        return None
    figure = _figure(7.0, 0.45 * len(shown) + 1.0)
    axes = figure.add_subplot()
    positions = range(len(shown))
    fractions = [100 * s.flat / s.groups for s in shown]
    colours = [ACCENT if f >= 50 else PRIMARY for f in fractions]
    axes.barh(positions, fractions, color=colours)
    for y, (spread, fraction) in enumerate(zip(shown, fractions, strict=True)):
        axes.text(min(fraction, 100) + 1, y, f"{spread.flat}/{spread.groups}", va="center", fontsize=8)
    axes.set_yticks(list(positions), [_plain(s.name) for s in shown])
    axes.invert_yaxis()
    axes.set_xlim(0, 112)
    axes.set_xlabel("% of prompts whose completions all get the same value", fontsize=8)
    _tidy(axes)
    return _data_uri(figure)


def speed_chart(summaries: list[RewardSummary]) -> str | None:
    """Horizontal bars: time per completion for each reward (log scale when they differ a lot)."""
    timed = [s for s in summaries if s.seconds_per_completion is not None]
    if not timed:
        return None
    figure = _figure(7.0, 0.45 * len(timed) + 1.0)
    axes = figure.add_subplot()
    seconds = [s.seconds_per_completion for s in timed]
    scale, unit = time_unit(max(seconds))
    times = [scale * t for t in seconds]
    axes.barh(range(len(timed)), times, color=PRIMARY)
    axes.set_yticks(range(len(timed)), [_plain(s.name) for s in timed])
    axes.invert_yaxis()
    positive = [t for t in times if t > 0]
    if positive and max(positive) / min(positive) > 100:
        axes.set_xscale("log")
    axes.set_xlabel(f"{unit} per completion", fontsize=8)
    _tidy(axes)
    return _data_uri(figure)


def correlation_chart(names: list[str], matrix: dict[tuple[str, str], Correlation]) -> str | None:
    """Heatmap of Pearson correlations (-1 blue .. +1 red); grey cells have no correlation."""
    if len(names) < 2:
        return None
    import numpy as np

    size = len(names)
    grid = np.full((size, size), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            value = matrix[a, b].value
            if value is not None:
                grid[i, j] = value
    side = min(1.0 + 0.7 * size, 8.0)
    figure = _figure(side + 1.2, side)
    axes = figure.add_subplot()
    axes.set_facecolor("#e6e8eb")
    image = axes.imshow(np.ma.masked_invalid(grid), cmap="RdBu_r", vmin=-1, vmax=1)
    for i in range(size):
        for j in range(size):
            value = grid[i, j]
            text = "n/a" if math.isnan(value) else f"{value:.2f}".replace("-0.00", "0.00")
            colour = "white" if not math.isnan(value) and abs(value) > 0.6 else "black"
            axes.text(j, i, text, ha="center", va="center", fontsize=8, color=colour)
    labels = [_plain(name) for name in names]
    axes.set_xticks(range(size), labels, rotation=40, ha="right", fontsize=8)
    axes.set_yticks(range(size), labels, fontsize=8)
    figure.colorbar(image, ax=axes, shrink=0.8)
    return _data_uri(figure)


def training_chart(curves: TrainingCurves) -> str | None:
    """One small line plot per logged series (each reward's mean, the total, the flat-group fraction)."""
    panels = [(f"rewards/{name}/mean", series) for name, series in curves.rewards.items()]
    panels += [("reward (weighted total)", curves.total), ("frac_reward_zero_std", curves.flat_groups)]
    panels += [(f"{name}/rescued_share", series) for name, series in curves.rescued.items()]
    panels = [(title, series) for title, series in panels if series]
    if not panels:
        return None
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = _figure(3.6 * columns, 2.3 * rows)
    for index, (title, series) in enumerate(panels):
        axes = figure.add_subplot(rows, columns, index + 1)
        steps, values = zip(*series, strict=True)
        colour = MUTED if title == "frac_reward_zero_std" else PRIMARY
        axes.plot(steps, values, color=colour, marker="." if len(series) < 40 else None, linewidth=1.5)
        axes.set_title(_plain(title), fontsize=9)
        axes.set_xlabel("step", fontsize=8)
        _tidy(axes)
    return _data_uri(figure)


def hacking_chart(run: HackingRun) -> str | None:
    """Small plots over steps of what the monitor reads, with its alarms marked where they were raised."""
    steps = [s.step for s in run.steps]
    if len(steps) < 2:
        return None

    def series(name: str) -> list[float]:
        return [s.means.get(name, math.nan) for s in run.steps]

    panels = [("paid reward and rewards", [("paid", series("reward"))] +
               [(a, series(f"value/{a}")) for a in run.aliases]),
              ("completion length (characters)", [("length", series("length"))]),
              ("templating", [(n, series(n)) for n in ("repeat", "dup_group", "dup_across", "template_share")]),
              ("abstained / failed", [(f"{a} {k}", series(f"{k}/{a}")) for a in run.aliases
                                      for k in ("abstained", "failed")]),
              ("hack signatures", [(n.split("/")[1], series(n)) for n in run.steps[-1].means if
                                   n.startswith("signature/")]),
              ("share of the advantage", [(a, [s.shares.get(a, math.nan) for s in run.steps]) for a in run.aliases])]
    panels = [(title, [(label, ys) for label, ys in lines if any(not math.isnan(y) for y in ys)])
              for title, lines in panels]
    panels = [(title, lines) for title, lines in panels if lines]
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = _figure(3.8 * columns, 2.6 * rows)
    for index, (title, lines) in enumerate(panels):
        axes = figure.add_subplot(rows, columns, index + 1)
        for label, ys in lines:
            axes.plot(steps, ys, marker="." if len(steps) < 40 else None, linewidth=1.3, label=_plain(label))
        for alarm in run.alarms:
            axes.axvline(alarm.step, color=ACCENT, linewidth=1, linestyle="--")
        axes.set_title(_plain(title), fontsize=9)
        axes.set_xlabel("step", fontsize=8)
        if len(lines) > 1:
            axes.legend(fontsize=7, frameon=False)
        _tidy(axes)
    return _data_uri(figure)
