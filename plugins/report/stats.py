"""The numbers behind a reward report: read scored rows, summarise each reward, its spread within prompt
groups, agreement between rewards and the extreme completions. No HTML and no plotting here, so every
figure the report shows can be tested on its own.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._files.io import read_rows
from .._set.config import TOTAL
from .._set.groups import by_prompt
from ..completions import prompt_key
from ..errors import RewardhubError

__all__ = [
    "Analysis",
    "Correlation",
    "Disagreement",
    "PairDisagreements",
    "ReasonGroup",
    "ReportError",
    "RewardSummary",
    "ScoredData",
    "ScoredRow",
    "Spread",
    "all_disagreements",
    "analyse",
    "column",
    "correlation",
    "correlation_matrix",
    "disagreements",
    "extremes",
    "group_reasons",
    "group_spread",
    "infer_weights",
    "load_scored",
    "parse_row",
    "pearson",
    "population_std",
    "prompt_groups",
    "reason_pattern",
    "summarise_reward",
    "time_unit",
]

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_TIE = 1e-9


class ReportError(RewardhubError):
    """A report cannot be made: the scored input or the trainer state is missing or malformed."""


@dataclass(frozen=True)
class ScoredRow:
    """One scored completion: its line in the input, the input row, and the per-reward results."""

    line: int
    row: Mapping[str, Any]
    rewards: dict[str, float | None]
    total: float | None
    reasons: dict[str, str]
    outcomes: dict[str, str]
    seconds: dict[str, float]

    @property
    def prompt(self) -> Any:
        return self.row.get("prompt")

    @property
    def completion(self) -> Any:
        return self.row.get("completion")

    def value(self, name: str) -> float | None:
        """A component's value, or the weighted total for ``TOTAL``."""
        return self.total if name == TOTAL else self.rewards.get(name)


@dataclass
class ScoredData:
    """The readable rows of a scored file, the reward aliases in first-seen order, and the skipped lines."""

    rows: list[ScoredRow]
    aliases: list[str]
    skipped: list[tuple[int, str]] = field(default_factory=list)
    source: str | None = None


def load_scored(scored: str | Path | Iterable[Mapping[str, Any]]) -> ScoredData:
    """Read scored rows from a path (JSONL, Parquet, datasets folder) or an iterable of row dicts.

    Unreadable or unscored rows are skipped and listed with their line; if none is usable, raise
    :class:`ReportError` saying why.
    """
    source = str(scored) if isinstance(scored, str | Path) else None
    rows: list[ScoredRow] = []
    skipped: list[tuple[int, str]] = []
    aliases: dict[str, None] = {}
    for record in read_rows(scored):
        error = record.error
        if error is None:
            try:
                parsed = parse_row(record.line, record.row)
            except ReportError as exc:
                error = str(exc)
        if error is not None:
            skipped.append((record.line, error))
            continue
        aliases.update(dict.fromkeys(parsed.rewards))
        rows.append(parsed)
    if TOTAL in aliases:
        raise ReportError(f"a reward is aliased {TOTAL!r}, the name of the weighted total in scored rows: rename it")
    if not rows:
        where = f" in {source}" if source else ""
        detail = "; ".join(f"line {n}: {msg}" for n, msg in skipped[:3]) or "the input is empty"
        raise ReportError(f"no scored rows{where} ({detail}). Make one with `rewardhub score`.")
    return ScoredData(rows, list(aliases), skipped, source)


def parse_row(line: int, row: Any) -> ScoredRow:
    """Check one scored row's shape (``rewards``, ``reward``, ``reasons``, ``seconds``) and wrap it."""
    if not isinstance(row, Mapping):
        raise ReportError(f"a row must be an object, got {type(row).__name__}")
    rewards = row.get("rewards")
    if not isinstance(rewards, Mapping):
        raise ReportError("no `rewards` object: not the output of `rewardhub score`")
    values = {str(alias): _number(value, f"rewards.{alias}") for alias, value in rewards.items()}
    reasons = row.get("reasons") or {}
    seconds = row.get("seconds") or {}
    outcomes = row.get("outcomes") or {}  # files scored before 0.2 have none: outcomes follow the values
    if not all(isinstance(part, Mapping) for part in (reasons, seconds, outcomes)):
        raise ReportError("`reasons`, `outcomes` and `seconds` must be objects keyed by reward alias")
    return ScoredRow(
        line=line,
        row=row,
        rewards=values,
        total=_number(row.get("reward"), "reward"),
        reasons={str(k): "" if v is None else str(v) for k, v in reasons.items()},
        outcomes={alias: str(outcomes.get(alias) or ("ok" if value is not None else "abstain"))
                  for alias, value in values.items()},
        seconds={str(k): s for k, v in seconds.items() if (s := _number(v, f"seconds.{k}")) is not None},
    )


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ReportError(f"`{where}` must be a number or null, got {type(value).__name__} {value!r:.40}")
    value = float(value)
    return value if math.isfinite(value) else None


def reason_pattern(reason: str) -> str:
    """A reason with its numbers masked, so that "timeout after 5 s" and "... 7 s" count as one kind."""
    reason = " ".join(reason.split())
    return _NUMBER.sub("#", reason)[:200] if reason else "(no reason given)"


@dataclass(frozen=True)
class ReasonGroup:
    """Reasons of one kind: the masked pattern, how many rows gave it, and one real example."""

    pattern: str
    count: int
    example: str


def group_reasons(reasons: Iterable[str]) -> list[ReasonGroup]:
    """Group reasons by :func:`reason_pattern`, most frequent first (ties by first appearance)."""
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for reason in reasons:
        key = reason_pattern(reason)
        counts[key] += 1
        examples.setdefault(key, reason)
    return [ReasonGroup(key, n, examples[key]) for key, n in counts.most_common()]


@dataclass(frozen=True)
class RewardSummary:
    """What one reward did over the file: its values, abstentions (with why), errors, timeouts, speed."""

    name: str
    rows: int
    values: list[float]
    none_reasons: list[ReasonGroup]
    errors: int
    timeouts: int
    failure_reasons: list[ReasonGroup]
    seconds_per_completion: float | None

    @property
    def none_count(self) -> int:
        return self.rows - len(self.values)

    @property
    def none_fraction(self) -> float:
        return self.none_count / self.rows if self.rows else 0.0

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.values) if self.values else None

    @property
    def std(self) -> float | None:
        """Population standard deviation of the non-None values."""
        return population_std(self.values) if self.values else None

    @property
    def minimum(self) -> float | None:
        return min(self.values) if self.values else None

    @property
    def maximum(self) -> float | None:
        return max(self.values) if self.values else None


def summarise_reward(rows: list[ScoredRow], name: str) -> RewardSummary:
    """Summary of component ``name`` (or of the weighted total for ``TOTAL``) over ``rows``."""
    values: list[float] = []
    none_reasons: list[str] = []
    failures: list[str] = []
    errors = timeouts = 0
    seconds: list[float] = []
    for row in rows:
        value = row.value(name)
        reason = row.reasons.get(name, "") if name != TOTAL else ""
        outcome = row.outcomes.get(name, "") if name != TOTAL else ""
        if value is None:
            none_reasons.append(reason if name != TOTAL else "every component abstained")
        else:
            values.append(value)
        errors += outcome == "error"
        timeouts += outcome == "timeout"
        if outcome in ("error", "timeout"):
            failures.append(reason)
        if name in row.seconds:
            seconds.append(row.seconds[name])
    return RewardSummary(
        name=name,
        rows=len(rows),
        values=values,
        none_reasons=group_reasons(none_reasons),
        errors=errors,
        timeouts=timeouts,
        failure_reasons=group_reasons(failures),
        seconds_per_completion=statistics.fmean(seconds) if seconds else None,
    )


def time_unit(seconds: float) -> tuple[float, str]:
    """The factor and unit (s, ms or µs) that show ``seconds`` as a number from 1 to 1000."""
    if seconds >= 1:
        return 1.0, "s"
    return (1e3, "ms") if seconds >= 1e-3 else (1e6, "µs")


def prompt_groups(rows: list[ScoredRow]) -> list[list[ScoredRow]]:
    """Rows grouped by prompt (see :func:`rewardhub.completions.prompt_key`), in first-seen order."""
    return by_prompt(rows, lambda row: row.prompt)


@dataclass(frozen=True)
class Spread:
    """Within-group spread of one reward: of the prompts with at least two scored completions, how
    many gave every completion the same value (a GRPO group with zero advantage: no learning signal).
    """

    name: str
    groups: int
    flat: int
    mean_group_std: float | None

    @property
    def flat_fraction(self) -> float | None:
        return self.flat / self.groups if self.groups else None


def population_std(values: list[float]) -> float:
    """Population standard deviation (floats, fast; ``statistics.pstdev`` is exact but slow)."""
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


def column(rows: list[ScoredRow], name: str) -> list[float | None]:
    """The values of ``name`` (a component or ``TOTAL``) row by row."""
    return [row.value(name) for row in rows]


def group_spread(groups: list[list[ScoredRow]], name: str) -> Spread:
    """Spread of ``name`` within prompt groups; a group counts once it has two non-None values."""
    counted = flat = 0
    stds: list[float] = []
    for group in groups:
        values = [v for row in group if (v := row.value(name)) is not None]
        if len(values) < 2:
            continue
        counted += 1
        flat += max(values) - min(values) <= _TIE
        stds.append(population_std(values))
    return Spread(name, counted, flat, statistics.fmean(stds) if stds else None)


@dataclass(frozen=True)
class Correlation:
    """Pearson correlation of two rewards over rows where both have a value, or None with why not."""

    value: float | None
    pairs: int
    note: str = ""


def pearson(xs: list[float | None], ys: list[float | None], a: str = "a", b: str = "b") -> Correlation:
    """Pearson r of two columns over rows where both have a value; None when fewer than 3 such rows or
    either column is constant on them (``a`` and ``b`` name the columns in that explanation).
    """
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if x is not None and y is not None]
    if len(pairs) < 3:
        return Correlation(None, len(pairs), f"only {len(pairs)} rows scored by both")
    mean_x = math.fsum(x for x, _ in pairs) / len(pairs)
    mean_y = math.fsum(y for _, y in pairs) / len(pairs)
    sxx = math.fsum((x - mean_x) ** 2 for x, _ in pairs)
    syy = math.fsum((y - mean_y) ** 2 for _, y in pairs)
    constant = [n for n, ss in ((a, sxx), (b, syy)) if ss <= _TIE * _TIE * len(pairs)]
    if constant:
        return Correlation(None, len(pairs), f"{' and '.join(constant)} constant on shared rows")
    r = math.fsum((x - mean_x) * (y - mean_y) for x, y in pairs) / math.sqrt(sxx * syy)
    return Correlation(max(-1.0, min(1.0, r)), len(pairs))


def correlation(rows: list[ScoredRow], a: str, b: str) -> Correlation:
    """Pearson r of rewards ``a`` and ``b`` over ``rows`` (see :func:`pearson`)."""
    return pearson(column(rows, a), column(rows, b), a, b)


def correlation_matrix(rows: list[ScoredRow], names: list[str]) -> dict[tuple[str, str], Correlation]:
    """Correlation of every ordered pair of ``names`` (the diagonal is 1 where a reward varies)."""
    columns = {name: column(rows, name) for name in names}
    matrix: dict[tuple[str, str], Correlation] = {}
    for i, a in enumerate(names):
        for b in names[i:]:
            matrix[a, b] = matrix[b, a] = pearson(columns[a], columns[b], a, b)
    return matrix


@dataclass(frozen=True)
class Disagreement:
    """One completion two rewards judge differently: each reward's value scaled to its own [0, 1] range."""

    row: ScoredRow
    gap: float
    scaled_a: float
    scaled_b: float


@dataclass(frozen=True)
class PairDisagreements:
    """The completions where rewards ``a`` and ``b`` disagree most, with their correlation."""

    a: str
    b: str
    correlation: Correlation
    examples: list[Disagreement]


def _scaled(values: list[float | None]) -> list[float | None] | None:
    """Values min-max scaled to [0, 1]; None when the column has no spread."""
    present = [v for v in values if v is not None]
    if not present or max(present) - min(present) <= _TIE:
        return None
    low, span = min(present), max(present) - min(present)
    return [None if v is None else (v - low) / span for v in values]


def disagreements(rows: list[ScoredRow], a: str, b: str, limit: int = 3) -> list[Disagreement]:
    """The rows where ``a`` and ``b`` differ most once each is min-max scaled over the whole file,
    largest gap first, one per prompt while there are enough prompts.

    Scaling puts a 0..1 correctness reward and a -1..0 length penalty on the same footing; a reward
    that is constant over the file cannot disagree in this sense and yields no examples.
    """
    scaled_a, scaled_b = _scaled(column(rows, a)), _scaled(column(rows, b))
    if scaled_a is None or scaled_b is None:
        return []
    gaps = [
        (-abs(x - y), i)
        for i, (x, y) in enumerate(zip(scaled_a, scaled_b, strict=True))
        if x is not None and y is not None and abs(x - y) > _TIE
    ]
    gaps.sort()  # largest gap first, then input order
    chosen: list[int] = []
    seen: set[str] = set()
    for _, i in gaps:
        key = prompt_key(rows[i].prompt)
        if key not in seen:
            seen.add(key)
            chosen.append(i)
            if len(chosen) == limit:
                break
    if len(chosen) < limit:
        taken = set(chosen)
        chosen += [i for _, i in gaps if i not in taken][: limit - len(chosen)]
    order = {i: rank for rank, (_, i) in enumerate(gaps)}
    chosen.sort(key=order.__getitem__)
    return [Disagreement(rows[i], abs(scaled_a[i] - scaled_b[i]), scaled_a[i], scaled_b[i]) for i in chosen]


def all_disagreements(
    rows: list[ScoredRow],
    aliases: list[str],
    matrix: dict[tuple[str, str], Correlation],
    limit: int = 3,
) -> list[PairDisagreements]:
    """Every pair of components that disagrees somewhere, least correlated first (uncorrelatable last)."""
    pairs = [
        PairDisagreements(a, b, matrix[a, b], examples)
        for i, a in enumerate(aliases)
        for b in aliases[i + 1 :]
        if (examples := disagreements(rows, a, b, limit))
    ]
    pairs.sort(key=lambda p: (p.correlation.value is None, p.correlation.value or 0.0))
    return pairs


def extremes(rows: list[ScoredRow], k: int = 5) -> tuple[list[ScoredRow], list[ScoredRow]]:
    """The ``k`` highest and ``k`` lowest rows by weighted total (rows without a total are left out),
    each completion text shown once: a degenerate output repeated across prompts would fill the list."""
    ranked = sorted((r for r in rows if r.total is not None), key=lambda r: (-r.total, r.line))
    seen: set[str] = set()
    top = _first_distinct(ranked, k, seen)
    return top, _first_distinct(reversed(ranked), k, seen)


def _first_distinct(rows: Iterable[ScoredRow], k: int, seen: set[str]) -> list[ScoredRow]:
    chosen = []
    for row in rows:
        key = repr(row.completion)
        if key not in seen and len(chosen) < k:
            seen.add(key)
            chosen.append(row)
    return chosen


def infer_weights(rows: list[ScoredRow], aliases: list[str]) -> dict[str, float] | None:
    """The weights behind the totals (``total = sum of weight * value``, abstentions adding nothing),
    solved by least squares over the rows; ``None`` when the rows do not determine them exactly."""
    equations = [([r.rewards.get(a) or 0.0 for a in aliases], r.total) for r in rows if r.total is not None]
    k = len(aliases)
    if k == 0 or len(equations) < k:
        return None
    normal = [[math.fsum(x[i] * x[j] for x, _ in equations) for j in range(k)]
              + [math.fsum(x[i] * y for x, y in equations)] for i in range(k)]
    for col in range(k):  # Gauss-Jordan with partial pivoting
        pivot = max(range(col, k), key=lambda r: abs(normal[r][col]))
        if abs(normal[pivot][col]) < 1e-9:
            return None  # two rewards always move together (or one is always 0): their weights are not determined
        normal[col], normal[pivot] = normal[pivot], normal[col]
        for r in range(k):
            if r != col:
                factor = normal[r][col] / normal[col][col]
                normal[r] = [a - factor * b for a, b in zip(normal[r], normal[col], strict=True)]
    weights = [normal[i][k] / normal[i][i] for i in range(k)]
    worst = max(abs(math.fsum(w * v for w, v in zip(weights, x, strict=True)) - y) for x, y in equations)
    if worst > 1e-6 * max(1.0, max(abs(y) for _, y in equations)):
        return None
    return {a: round(w, 6) + 0.0 for a, w in zip(aliases, weights, strict=True)}


@dataclass
class Analysis:
    """Everything a report shows, computed from scored rows: per-reward summaries and spreads
    (components first, then ``TOTAL``), prompt groups, correlations, disagreements and extremes.
    """

    data: ScoredData
    summaries: list[RewardSummary]
    spreads: list[Spread]
    prompts: int
    group_sizes: Counter[int]
    matrix: dict[tuple[str, str], Correlation]
    disagreements: list[PairDisagreements]
    top: list[ScoredRow]
    bottom: list[ScoredRow]
    weights: dict[str, float] | None = None

    @property
    def names(self) -> list[str]:
        """The components and the total, in report order."""
        return [*self.data.aliases, TOTAL]


def analyse(data: ScoredData, *, extremes_count: int = 5, examples_per_pair: int = 3) -> Analysis:
    """Compute every figure of the report from ``data``."""
    rows, names = data.rows, [*data.aliases, TOTAL]
    groups = prompt_groups(rows)
    matrix = correlation_matrix(rows, names)
    top, bottom = extremes(rows, extremes_count)
    return Analysis(
        data=data,
        summaries=[summarise_reward(rows, name) for name in names],
        spreads=[group_spread(groups, name) for name in names],
        prompts=len(groups),
        group_sizes=Counter(len(g) for g in groups),
        matrix=matrix,
        disagreements=all_disagreements(rows, data.aliases, matrix, examples_per_pair),
        top=top,
        bottom=bottom,
        weights=infer_weights(rows, data.aliases),
    )
