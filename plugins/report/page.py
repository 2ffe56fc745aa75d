"""``write_report``: one self-contained HTML page showing what a set of rewards did to scored completions.

The numbers come from :mod:`rewardhub.report.stats`, the charts from :mod:`rewardhub.report.plots`
(matplotlib, imported only here when a report is written), the markup from :mod:`rewardhub.report.html`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._set.config import read_config
from .hacking import HackingRun, watch_steps
from .html import Charts, render
from .stats import TOTAL, Analysis, ReportError, ScoredData, analyse, load_scored
from .training import TrainingCurves, load_trainer_state

__all__ = ["ReportError", "write_report"]


def write_report(
    scored: str | Path | Sequence[str | Path] | Iterable[Mapping[str, Any]],
    out_path: str | Path,
    *,
    trainer_state: str | Path | Mapping[str, Any] | None = None,
    title: str | None = None,
    config: Any = None,
) -> Path:
    """Write the report of ``scored`` (a scored file, several of successive steps, or rows as ``rewardhub
    score`` writes them) to ``out_path``.

    ``trainer_state``: a TRL ``trainer_state.json`` (path or parsed) whose ``log_history`` adds the
    per-reward means over training steps. Over several steps (files, or a ``step`` column) a section
    runs the reward-hacking monitor; ``config`` (the reward config) gives it the roles, weights and
    routes. Returns the path written. Raises :class:`ReportError` when the input has no usable scored
    row or the trainer state cannot be read.
    """
    curves = load_trainer_state(trainer_state) if trainer_state is not None else None
    sources = list(scored) if isinstance(scored, list | tuple) and all(isinstance(s, str | Path) for s in scored) \
        else [scored]
    parts = [load_scored(source) for source in sources]
    data = merged(parts)
    analysis = analyse(data)
    run = watch_steps(parts, analysis.weights, read_config(config) if config is not None else None)
    hacking = run if len(run.steps) >= 2 else None
    if title is None:
        title = f"Reward report: {Path(data.source).name}" if data.source else "Reward report"
    page = render(analysis, make_charts(analysis, curves, hacking), title=title, curves=curves, hacking=hacking)
    out = Path(out_path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write the report to {out}: {exc}") from None
    return out


def merged(parts: list[ScoredData]) -> ScoredData:
    """One :class:`ScoredData` of several files (rows in order; the first file names the source)."""
    if len(parts) == 1:
        return parts[0]
    source = f"{parts[0].source} (+{len(parts) - 1} more)" if parts[0].source else None
    return ScoredData([r for p in parts for r in p.rows], list(dict.fromkeys(a for p in parts for a in p.aliases)),
                      [s for p in parts for s in p.skipped], source)


def make_charts(analysis: Analysis, curves: TrainingCurves | None, hacking: HackingRun | None = None) -> Charts:
    """Render every chart of the report (needs matplotlib)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReportError("reports need matplotlib: pip install 'rewardhub[report]'") from None
    from ..report import plots

    return Charts(
        distributions={s.name: plots.distribution_chart(s) for s in analysis.summaries},
        spread=plots.spread_chart(analysis.spreads),
        speed=plots.speed_chart([s for s in analysis.summaries if s.name != TOTAL]),
        correlation=plots.correlation_chart(analysis.names, analysis.matrix),
        training=plots.training_chart(curves) if curves is not None else None,
        hacking=plots.hacking_chart(hacking) if hacking is not None else None,
    )
