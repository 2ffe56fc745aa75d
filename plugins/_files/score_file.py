"""``rewardhub score``: stream a file of completions through a reward set, with a summary."""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._set.compose import load
from ..completions import is_conversational
from ..errors import InputFileError
from .io import InputRow, read_rows
from .output import write_rows

__all__ = ["RewardStats", "ScoreSummary", "count_scored", "score_file", "valid_rows"]

_REASON_EXAMPLES = 3


@dataclass
class RewardStats:
    """Running statistics of one reward over a scored file."""

    count: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    abstained: int = 0
    errors: int = 0
    timeouts: int = 0
    seconds: float = 0.0
    abstain_reasons: Counter = field(default_factory=Counter)

    def add(self, value: float | None, reason: str, outcome: str, seconds: float) -> None:
        self.seconds += seconds
        if value is None:
            self.abstained += 1
            self.abstain_reasons[_reason_kind(reason, outcome)] += 1
        else:
            self.count += 1
            self.total += value
            self.total_sq += value * value
        self.errors += outcome == "error"
        self.timeouts += outcome == "timeout"

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else math.nan

    @property
    def std(self) -> float:
        if self.count < 2:
            return 0.0 if self.count else math.nan
        return math.sqrt(max(self.total_sq / self.count - self.mean**2, 0.0))


def _reason_kind(reason: str, outcome: str) -> str:
    """A short, groupable form of a reason for the summary: its first clause (two for errors)."""
    if not reason:
        return "(no reason)"
    clauses = reason.split(":")
    return ":".join(clauses[:2] if outcome == "error" else clauses[:1]).strip()[:60]


@dataclass
class ScoreSummary:
    """What ``score_file`` did: rows scored, bad rows skipped, and per-reward statistics."""

    rows: int = 0
    bad_rows: list[tuple[int, str]] = field(default_factory=list)
    stats: dict[str, RewardStats] = field(default_factory=dict)
    total: RewardStats = field(default_factory=RewardStats)
    seconds: float = 0.0

    def render(self) -> str:
        lines = [f"scored {self.rows} rows in {self.seconds:.2f} s" + (
            f"; skipped {len(self.bad_rows)} bad row(s)" if self.bad_rows else "")]
        width = max([len(a) for a in self.stats] + [len("reward (total)")])
        lines.append(f"{'reward'.ljust(width)}  {'mean':>8}  {'std':>8}  {'none':>6}  {'errors':>6}  {'timeouts':>8}  "
                     f"{'ms/item':>8}")
        for alias, s in [*self.stats.items(), ("reward (total)", self.total)]:
            n = s.count + s.abstained
            ms = 1000 * s.seconds / n if n and alias in self.stats else math.nan
            lines.append(
                f"{alias.ljust(width)}  {s.mean:8.3f}  {s.std:8.3f}  {s.abstained:6d}  {s.errors:6d}  {s.timeouts:8d}  "
                + (f"{ms:8.3f}" if not math.isnan(ms) else f"{'':8}")
            )
            for kind, count in s.abstain_reasons.most_common(_REASON_EXAMPLES):
                lines.append(f"{'':{width}}    none x{count}: {kind}")
        return "\n".join(lines)


def score_file(
    config: Any, input_path: str | Path, output: str | Path, *, batch_size: int = 256, progress: bool = False
) -> ScoreSummary:
    """Score every row of ``input_path`` and write the scored rows to ``output``, by its extension:
    ``.jsonl`` (or ``-`` = stdout), ``.parquet``, else a ``datasets`` folder. The output is replaced only
    when the run succeeds: a failed or interrupted run leaves the previous one as it was."""
    if str(output) != "-" and str(input_path) != "-" and Path(output).resolve() == Path(input_path).resolve():
        raise InputFileError(f"the output {output} is the input file: scoring would overwrite it before reading it")
    rewards = load(config)
    summary = ScoreSummary(stats={alias: RewardStats() for alias in rewards.aliases})
    start = time.perf_counter()
    scored_rows = rewards.iter_scores(valid_rows(input_path, summary, progress), batch_size=batch_size)
    write_rows(count_scored(scored_rows, summary, input_path), output)
    summary.seconds = time.perf_counter() - start
    return summary


def count_scored(scored_rows: Iterator[dict[str, Any]], summary: ScoreSummary, input_path: str | Path) -> Iterator[dict[str, Any]]:
    """The scored rows, added to ``summary`` as they pass; a run that scored nothing but bad rows fails."""
    for scored in scored_rows:
        summary.rows += 1
        for alias, stats in summary.stats.items():
            stats.add(scored["rewards"][alias], scored["reasons"][alias], scored["outcomes"][alias],
                      scored["seconds"][alias])
        summary.total.add(scored["reward"], "", "ok" if scored["reward"] is not None else "abstain", 0.0)
        yield scored
    if summary.bad_rows and not summary.rows:  # e.g. a CSV file: nothing was scored, that is not a success
        line, problem = summary.bad_rows[0]
        where = f", line {line}" if line else ""  # 0: a row Ray read, its number not known
        raise InputFileError(f"none of the {len(summary.bad_rows)} rows of {input_path} could be scored "
                             f"(first problem{where}: {problem})")


def valid_rows(input_path: str | Path, summary: Any, progress: bool = False) -> Iterator[dict[str, Any]]:
    """Rows fit to score; each bad one is reported on stderr with its line number, added to
    ``summary.bad_rows`` and skipped."""
    for record in read_rows(input_path, progress=progress):
        row = record.row
        if row is not None and row.get("completion") is None and not is_conversational(row.get("messages")):
            fields = ", ".join(sorted(row)) or "none"  # an episode row gives 'messages' instead
            record = InputRow(record.line, None, f"no 'completion' (fields: {fields})", record.unit)
        if record.error is not None:
            summary.bad_rows.append((record.line, record.error))
            print(f"rewardhub: {record.where}: {record.error}; row skipped", file=sys.stderr)
            continue
        yield record.row
