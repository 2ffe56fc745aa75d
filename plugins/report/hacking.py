"""The report's reward-hacking section: the monitor run over scored files of successive steps.

Steps come from the rows' ``step`` column when they have one, else from the order of the files
(``rewardhub report step_000.jsonl step_001.jsonl ...``: file i is step i). The monitor reads the
values, outcomes and completions the files hold (it never rescores); the roles, weights and routes
come from ``--config`` when given, else from the file: weights inferred from the totals, weight-0
rewards as audits, built-in family names as their roles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .._batch import Batch, Score
from .._files.rows import without_scores
from .._reward import BatchResult
from .._set.config import SetConfig
from ..hacking import HackingMonitor
from ..hacking.monitor import BUILTIN_ROLES, Alarm, role_of
from ..hacking.steps import StepSummary
from .stats import ScoredData, ScoredRow

__all__ = ["HackingRun", "watch_steps"]


@dataclass
class HackingRun:
    """What the monitor saw over the steps of the scored input: each step's summary and the alarms."""

    steps: list[StepSummary] = field(default_factory=list)
    alarms: list[Alarm] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    source: str = ""  # how the steps were told apart (for the report's text)


def watch_steps(parts: Sequence[ScoredData], weights: dict[str, float] | None = None,
                config: SetConfig | None = None) -> HackingRun:
    """Run the monitor over ``parts`` (one per scored file, in step order)."""
    rows = [row for part in parts for row in part.rows]
    aliases = list(dict.fromkeys(a for part in parts for a in part.aliases))
    steps, source = _steps(parts)
    monitor = _monitor(aliases, weights, config)
    by_step: dict[float, list[ScoredRow]] = {}
    for row, step in zip(rows, steps, strict=True):
        by_step.setdefault(step, []).append(row)
    for step in sorted(by_step):
        batch, results = _recorded(by_step[step], monitor.aliases)
        monitor.observe(step, batch, results)
    return HackingRun(monitor.history, monitor.alarms, monitor.aliases, source)


def _steps(parts: Sequence[ScoredData]) -> tuple[list[float], str]:
    rows = [row for part in parts for row in part.rows]
    given = [row.row.get("step") for row in rows]
    if all(isinstance(s, int | float) and not isinstance(s, bool) for s in given):
        return [float(s) for s in given], "the rows' step column"
    return [float(i) for i, part in enumerate(parts) for _ in part.rows], "the order of the files (file i = step i)"


def _monitor(aliases: list[str], weights: dict[str, float] | None, config: SetConfig | None) -> HackingMonitor:
    if config is not None:
        entries = [e for e in config.entries if e.alias in aliases]
        return HackingMonitor({e.alias: role_of(e, None) for e in entries},
                              lambda step: {e.alias: e.weight_at(step) for e in entries},
                              aggregate=config.aggregate, routes={e.alias: e.when for e in entries},
                              settings=config.monitor, warn=False)
    fixed = {a: (weights or {}).get(a, 1.0) for a in aliases}
    roles = {a: "audit" if fixed[a] == 0 else BUILTIN_ROLES.get(a) for a in aliases}
    return HackingMonitor(roles, lambda step: fixed, warn=False)


def _recorded(rows: list[ScoredRow], aliases: list[str]) -> tuple[Batch, dict[str, BatchResult]]:
    """A step's rows as the batch and member results a set would have recorded."""
    batch = Batch.from_rows([without_scores(row.row) for row in rows])
    results = {alias: BatchResult([Score(row.rewards.get(alias), row.reasons.get(alias, ""),
                                         outcome=row.outcomes.get(alias, "abstain")) for row in rows], 0.0, 0)
               for alias in aliases}
    return batch, results
