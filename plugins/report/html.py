"""The report's markup: one self-contained HTML page (inline CSS, charts as data URIs, no scripts).

Every piece of user text (prompts, completions, reasons, reward names) goes through :func:`esc`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..completions import NotText, completion_text, message_text
from .hacking import HackingRun
from .stats import TOTAL, Analysis, PairDisagreements, ReasonGroup, RewardSummary, ScoredRow, time_unit
from .training import TrainingCurves

__all__ = [
    "CSS",
    "Charts",
    "MAX_COMPLETION_CHARS",
    "MAX_PAIRS",
    "MAX_PROMPT_CHARS",
    "MAX_REASON_KINDS",
    "MAX_SKIPPED_SHOWN",
    "corr_text",
    "display_text",
    "duration",
    "esc",
    "fmt",
    "pct",
    "render",
    "value_text",
]

MAX_COMPLETION_CHARS = 2000
MAX_PROMPT_CHARS = 600
MAX_REASON_KINDS = 8
MAX_SKIPPED_SHOWN = 10
MAX_PAIRS = 8


@dataclass
class Charts:
    """PNG data URIs of the report's charts (``None`` where there is nothing to plot)."""

    distributions: dict[str, str | None] = field(default_factory=dict)
    spread: str | None = None
    speed: str | None = None
    correlation: str | None = None
    training: str | None = None
    hacking: str | None = None


CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d2430;
background:#f3f4f6;margin:0}
main{max-width:1120px;margin:0 auto;padding:20px 24px 40px}
header h1{font-size:24px;margin:0 0 4px}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:14px 20px;margin:16px 0}
h2{font-size:18px;margin:0 0 10px}h3{font-size:15px;margin:14px 0 6px}
nav{margin:8px 0}nav a{margin-right:14px;color:#2a5599;text-decoration:none}
table{border-collapse:collapse;width:100%;table-layout:fixed;margin:6px 0}
th,td{padding:4px 8px;border-bottom:1px solid #eceef1;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f7f8fa;font-weight:600}
.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;height:auto;display:block;margin:4px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(500px,1fr));gap:14px}
.card{border:1px solid #e3e6ea;border-radius:6px;padding:10px 12px;min-width:0}
.detail{display:grid;grid-template-columns:3fr 2fr;gap:12px;align-items:start}.detail table{margin:4px 0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.side{background:#f7f8fa;border-radius:4px;padding:6px 10px;min-width:0;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f8fa;padding:8px;border-radius:4px;font-size:12px;
max-height:320px;overflow-y:auto;margin:4px 0}
.warn{color:#a4491b}.muted{color:#6b7480}.example{border-top:1px solid #e3e6ea;padding-top:8px;margin-top:10px}
"""


def esc(value: Any) -> str:
    """HTML-escaped text of ``value`` (quotes too, so it is safe in attributes)."""
    return html.escape(str(value), quote=True)


def fmt(value: float | None) -> str:
    """A reward value or statistic for display: 3 decimals, thousands separators when large."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3f}"


def value_text(value: float | None) -> str:
    """A reward value in a row: ``None`` spelled out (the reward abstained)."""
    return "None" if value is None else fmt(value)


def corr_text(value: float) -> str:
    """A correlation with 2 decimals (never "-0.00")."""
    return f"{value:.2f}".replace("-0.00", "0.00")


def pct(fraction: float | None) -> str:
    """A fraction as a percentage with one decimal."""
    return "—" if fraction is None else f"{100 * fraction:.1f}%"


def duration(seconds: float | None) -> str:
    """A time per completion in s, ms or µs."""
    if seconds is None:
        return "—"
    scale, unit = time_unit(seconds)
    return f"{scale * seconds:.3g} {unit}"


def display_text(value: Any, limit: int) -> str:
    """Readable text of a prompt or completion (chat messages as ``role: content``), cut at ``limit``."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(m, dict) for m in value):
        try:
            text = "\n".join(f"{m.get('role', '?')}: {message_text(m)}" for m in value)
        except NotText:
            text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        try:
            text = completion_text(value)
        except NotText:
            text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = f"{text[:limit]}\n… ({len(text) - limit} more characters)"
    return text


def _image(uri: str | None, alt: str) -> str:
    if uri is None:
        return f'<p class="muted">{esc(alt)}: nothing to plot.</p>'
    return f'<img src="{esc(uri)}" alt="{esc(alt)}">'


def _table(
    headers: list[str],
    rows: Iterable[Iterable[str]],
    numeric: Container[int] = (),
    widths: Sequence[str] = (),
) -> str:
    """A table from pre-escaped cells; columns in ``numeric`` are right-aligned; ``widths``: CSS widths
    of the first columns (the table layout is fixed, so long text wraps instead of widening the page).
    """
    def attrs(i: int, header: bool = False) -> str:
        width = f' style="width:{widths[i]}"' if header and i < len(widths) else ""
        return (' class="num"' if i in numeric else "") + width

    head = "".join(f"<th{attrs(i, True)}>{h}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{attrs(i)}>{c}</td>" for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render(analysis: Analysis, charts: Charts, *, title: str, curves: TrainingCurves | None = None,
           hacking: HackingRun | None = None) -> str:
    """The whole report page (with a reward-hacking section when ``hacking`` covers several steps)."""
    sections = [
        _overview(analysis, charts),
        _per_reward(analysis, charts),
        _spread(analysis, charts),
        _agreement(analysis, charts),
        _extremes(analysis),
    ]
    if curves is not None:
        sections.append(_training(curves, charts))
    if hacking is not None:
        sections.append(_hacking(hacking, charts))
    links = [("overview", "Overview"), ("rewards", "Per reward"), ("spread", "Within-group spread"),
             ("agreement", "Agreement"), ("extremes", "Top &amp; bottom")]
    if curves is not None:
        links.append(("training", "Training"))
    if hacking is not None:
        links.append(("hacking", "Reward hacking"))
    nav = "".join(f'<a href="#{anchor}">{label}</a>' for anchor, label in links)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    source = f" from <code>{esc(analysis.data.source)}</code>" if analysis.data.source else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
        f'<header><h1>{esc(title)}</h1><p class="muted">Generated by rewardhub{source} on {stamp}.</p>'
        f"<nav>{nav}</nav></header>{''.join(sections)}</main></body></html>\n"
    )


def _overview(analysis: Analysis, charts: Charts) -> str:
    data = analysis.data
    sizes = ", ".join(f"{n} × {size}" for size, n in sorted(analysis.group_sizes.items()))
    facts = (
        f"<p><b>{len(data.rows)}</b> scored completions of <b>{analysis.prompts}</b> prompts "
        f"(prompts × completions each: {esc(sizes)}), <b>{len(data.aliases)}</b> rewards.</p>"
    )
    if data.skipped:
        items = "".join(f"<li>line {n}: {esc(msg)}</li>" for n, msg in data.skipped[:MAX_SKIPPED_SHOWN])
        more = len(data.skipped) - MAX_SKIPPED_SHOWN
        items += f"<li>… and {more} more</li>" if more > 0 else ""
        facts += f'<p class="warn">{len(data.skipped)} input rows skipped:</p><ul class="warn">{items}</ul>'
    rows = []
    weights = analysis.weights or {}
    for summary, spread in zip(analysis.summaries, analysis.spreads, strict=True):
        label = _label(summary.name)
        failures = ["—", "—"] if summary.name == TOTAL else [str(summary.errors), str(summary.timeouts)]
        rows.append([
            label, fmt(weights.get(summary.name)), fmt(summary.mean), fmt(summary.std), fmt(summary.minimum),
            fmt(summary.maximum), f"{pct(summary.none_fraction)} ({summary.none_count})", *failures,
            duration(summary.seconds_per_completion), pct(spread.flat_fraction),
        ])
    headers = ["reward", "weight", "mean", "std", "min", "max", "None", "errors", "timeouts", "time / completion",
               "flat groups"]
    table = _table(headers, rows, numeric=set(range(1, 11)))
    weight_note = ("weights: solved from the totals (total = Σ weight × value, abstentions adding nothing)"
                   if analysis.weights else "weights: the totals do not determine them (e.g. two rewards that "
                   "always agree)")
    total = analysis.summaries[-1]
    return (
        f'<section id="overview"><h2>Overview</h2>{facts}{table}'
        f'<div class="grid"><div>{_image(charts.distributions.get(TOTAL), "weighted total distribution")}</div>'
        f'<div><h3>Time per completion</h3>{_image(charts.speed, "time per completion")}</div></div>'
        f'<p class="muted">“flat groups”: share of prompts whose completions all get the same value '
        f"(see Within-group spread). The total is None on {total.none_count} rows where every "
        f"component abstained. {esc(weight_note)}.</p></section>"
    )


def _reasons_table(groups: list[ReasonGroup], what: str) -> str:
    if not groups:
        return ""
    rows = [[str(g.count), esc(g.pattern), esc(g.example)] for g in groups[:MAX_REASON_KINDS]]
    more = len(groups) - MAX_REASON_KINDS
    note = f'<p class="muted">… and {more} more kinds.</p>' if more > 0 else ""
    table = _table(["rows", "reason (numbers masked)", "example"], rows, numeric={0}, widths=["14%"])
    return f"<h3>{what}</h3>{table}{note}"


def _reward_card(summary: RewardSummary, chart: str | None) -> str:
    stats = (
        f"<p>mean <b>{fmt(summary.mean)}</b> · std {fmt(summary.std)} · range {fmt(summary.minimum)}"
        f" … {fmt(summary.maximum)} · None <b>{pct(summary.none_fraction)}</b> ({summary.none_count}) · "
        f"errors <b>{summary.errors}</b> · timeouts <b>{summary.timeouts}</b> · "
        f"{duration(summary.seconds_per_completion)} per completion</p>"
    )
    return (
        f'<div class="card" id="reward-{esc(summary.name)}"><h3>{esc(summary.name)}</h3>'
        f"{_image(chart, f'{summary.name} distribution')}{stats}"
        f"{_reasons_table(summary.none_reasons, 'Why None')}"
        f"{_reasons_table(summary.failure_reasons, 'Errors and timeouts')}</div>"
    )


def _per_reward(analysis: Analysis, charts: Charts) -> str:
    cards = "".join(
        _reward_card(s, charts.distributions.get(s.name)) for s in analysis.summaries if s.name != TOTAL
    )
    return f'<section id="rewards"><h2>Per reward</h2><div class="grid">{cards}</div></section>'


def _label(name: str) -> str:
    """A row label: the reward's alias, or the weighted total's name, said to be one."""
    return f"<b>{TOTAL}</b> (weighted total)" if name == TOTAL else esc(name)


def _spread(analysis: Analysis, charts: Charts) -> str:
    rows = [
        [_label(s.name), str(s.groups), str(s.flat), pct(s.flat_fraction), fmt(s.mean_group_std)]
        for s in analysis.spreads
    ]
    single = analysis.group_sizes.get(1, 0)
    note = (
        f'<p class="warn">{single} prompts have a single completion and are left out: '
        "within-group spread needs several completions per prompt.</p>" if single else ""
    )
    table = _table(["reward", "groups", "flat", "flat share", "mean std within group"], rows, numeric={1, 2, 3, 4})
    return (
        '<section id="spread"><h2>Within-group spread</h2>'
        "<p>GRPO learns from differences between the completions of one prompt. A group where a reward gives "
        "every completion the same value adds no learning signal from that reward. Groups count once they have "
        f"two completions with a value.</p>{note}{_image(charts.spread, 'flat groups per reward')}{table}</section>"
    )


def _value_side(row: ScoredRow, name: str, scaled: float) -> str:
    reason = row.reasons.get(name, "")
    return (
        f'<div class="side"><b>{esc(name)}</b> = {value_text(row.value(name))} '
        f'<span class="muted">({100 * scaled:.0f}% of its range)</span>'
        f"<br>{esc(reason) if reason else '<span class=muted>no reason given</span>'}</div>"
    )


def _pair(pair: PairDisagreements) -> str:
    r = pair.correlation
    corr = f"r = {corr_text(r.value)}" if r.value is not None else f"no correlation ({esc(r.note)})"
    examples = "".join(
        f'<div class="example"><p class="muted">line {d.row.line} · gap {d.gap:.2f} · prompt: '
        f"{esc(display_text(d.row.prompt, 160))}</p>"
        f'<div class="pair">{_value_side(d.row, pair.a, d.scaled_a)}{_value_side(d.row, pair.b, d.scaled_b)}</div>'
        f"<pre>{esc(display_text(d.row.completion, MAX_COMPLETION_CHARS))}</pre></div>"
        for d in pair.examples
    )
    return f"<h3>{esc(pair.a)} vs {esc(pair.b)} <span class=muted>({corr} over {r.pairs} rows)</span></h3>{examples}"


def _agreement(analysis: Analysis, charts: Charts) -> str:
    pairs = "".join(_pair(p) for p in analysis.disagreements[:MAX_PAIRS])
    if not pairs:
        pairs = '<p class="muted">No two rewards disagree on any completion (or fewer than two rewards vary).</p>'
    hidden = len(analysis.disagreements) - MAX_PAIRS
    if hidden > 0:
        pairs += f'<p class="muted">{hidden} more pairs, better correlated, are not shown.</p>'
    return (
        '<section id="agreement"><h2>Agreement between rewards</h2>'
        "<p>Pearson correlation over the rows both rewards scored (n/a: too few shared rows or a constant reward). "
        "Below, for each pair (least correlated first), the completions where they disagree most, each value "
        f"scaled to that reward's range over this file.</p>{_image(charts.correlation, 'correlation matrix')}"
        f"{pairs}</section>"
    )


def _row_detail(row: ScoredRow, aliases: list[str]) -> str:
    components = [
        [esc(alias), value_text(row.rewards.get(alias)), esc(row.reasons.get(alias, ""))] for alias in aliases
    ]
    table = _table(["reward", "value", "reason"], components, numeric={1}, widths=["30%", "20%"])
    return (
        f'<div class="example"><p><b>total {value_text(row.total)}</b> <span class="muted">· line {row.line} · '
        f"prompt: {esc(display_text(row.prompt, MAX_PROMPT_CHARS))}</span></p>"
        f'<div class="detail"><pre>{esc(display_text(row.completion, MAX_COMPLETION_CHARS))}</pre>'
        f"<div>{table}</div></div></div>"
    )


def _extremes(analysis: Analysis) -> str:
    aliases = analysis.data.aliases
    top = "".join(_row_detail(r, aliases) for r in analysis.top)
    bottom = "".join(_row_detail(r, aliases) for r in analysis.bottom)
    return (
        '<section id="extremes"><h2>Top and bottom completions</h2>'
        "<p>By weighted total. Read the top ones for reward hacking: a high score for the wrong reason.</p>"
        f'<h3>Top {len(analysis.top)}</h3>{top or "<p class=muted>No row has a total.</p>"}'
        f'<h3>Bottom {len(analysis.bottom)}</h3>{bottom or "<p class=muted>No other rows.</p>"}</section>'
    )


def _training(curves: TrainingCurves, charts: Charts) -> str:
    source = f" from <code>{esc(curves.source)}</code>" if curves.source else ""
    if curves.empty:
        body = (
            '<p class="warn">The trainer state has no <code>rewards/&lt;name&gt;/mean</code>, <code>reward</code> '
            "or <code>frac_reward_zero_std</code> entries in its log_history.</p>"
        )
    else:
        rows = [
            [esc(name), str(len(series)), fmt(series[0][1]), fmt(series[-1][1])]
            for name, series in curves.rewards.items()
        ]
        body = _image(charts.training, "reward means over training steps") + _table(
            ["reward", "logged steps", "first mean", "last mean"], rows, numeric={1, 2, 3}
        )
    return f'<section id="training"><h2>Training</h2><p>Per-reward means logged by TRL{source}.</p>{body}</section>'


def _hacking(run: HackingRun, charts: Charts) -> str:
    intro = (f"<p>The reward-hacking monitor over {len(run.steps)} steps (told apart by {esc(run.source)}): each "
             "signal with the figures behind it, raised once; dashed lines in the plots mark the steps.</p>")
    if run.alarms:
        rows = [[esc(a.signal), esc(a.subject or "—"), f"{a.step:g}" + (f" (from {a.since:g})" if a.since is not None
                                                                          else ""),
                 esc(a.message) + "".join(f"<br><small>e.g. <code>{esc(e[:200])}</code></small>" for e in a.examples)]
                for a in run.alarms]
        table = _table(["signal", "about", "step", "what the numbers say, and example completions"], rows, numeric={2},
                       widths=["12%", "14%", "9%"])
    else:
        table = '<p>No alarm: no signal held over these steps.</p>'
    return (f'<section id="hacking"><h2>Reward hacking</h2>{intro}{table}'
            f'{_image(charts.hacking, "monitored figures over steps")}</section>')

