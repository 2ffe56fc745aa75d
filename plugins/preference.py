"""Training data from scored completions: DPO preference pairs and best-of-N / threshold selections for SFT.

Completions are grouped by prompt. A prompt's completions must sit on consecutive rows (as
``rewardhub score`` writes them), so that input streams with one prompt in memory at a time;
``unsorted="spill"`` groups any order through a temporary on-disk index instead. Scores already
in the rows are reused; a prompt with raw rows is scored whole with a reward config, after
grouping (group-aware rewards see all its completions). Every row, prompt or pair left out is
counted by reason in :class:`Stats`.

    from rewardhub.preference import PairOptions, write_pairs
    stats = write_pairs("scored.jsonl", "pairs.parquet", PairOptions(min_margin=0.5, require=["format>=1"]))
    print(stats.summary())
"""

from __future__ import annotations

import hashlib
import itertools
import math
import operator
import os
import re
import shutil
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from .completions import is_conversational, prompt_key
from .compose import RewardSet, load
from .errors import ConfigError, RewardhubError
from .io import count_rows, iter_input, write_rows

TOTAL = "reward"
PAIR_MODES = ("best-worst", "all")
SELECT_FORMATS = ("prompt-completion", "messages")
UNSORTED_POLICIES = ("error", "spill")
PAIR_COLUMNS = ("prompt", "chosen", "rejected", "score_chosen", "score_rejected", "margin",
                "rewards_chosen", "rewards_rejected")
SELECT_COLUMNS = ("prompt", "completion", "messages", "score", "rewards")
MAX_PROBLEMS = 5

PAIR_DROPS = {
    "invalid_row": "rows unreadable or without 'prompt'/'completion'",
    "no_score": "rows without a ranking score (the reward abstained)",
    "too_few": "prompts with fewer than two scored completions",
    "no_signal": "prompts whose completions all scored the same",
    "gate": "prompts where no completion that meets --require scores above another",
    "tie": "pairs of equal score (--mode all)",
    "below_margin": "pairs with a margin below --min-margin",
    "max_pairs": "pairs beyond --max-pairs for their prompt",
}
SELECT_DROPS = {
    "invalid_row": PAIR_DROPS["invalid_row"],
    "no_score": PAIR_DROPS["no_score"],
    "gate": "completions that fail --require",
    "below_threshold": "completions scoring below --min-score",
    "not_top_k": "completions outranked by --top-k better ones of their prompt",
}

# Scores that differ by less than this (relative, or absolute near zero) count as equal, so that
# 0.7 - 0.2 meets a margin of 0.5 and 0.1 + 0.2 ties with 0.3.
_REL_TOL, _ABS_TOL = 1e-9, 1e-12


class PreferenceError(RewardhubError, ValueError):
    """Options or rows that cannot make pairs or selections: a bad --require, a missing score."""


class UnsortedInputError(PreferenceError):
    """A prompt's completions are not on consecutive rows, and grouping through disk was not asked for."""


# Comparisons with the same tolerance as margins: ``acc>=0.3`` holds for 0.1 + 0.2.
_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": lambda value, bound: _at_least(value, bound),
    ">": lambda value, bound: not _at_least(bound, value),
    "<=": lambda value, bound: _at_least(bound, value),
    "<": lambda value, bound: not _at_least(value, bound),
    "==": lambda value, bound: _close(value, bound),
    "!=": lambda value, bound: not _close(value, bound),
}
_REQUIREMENT = re.compile(r"^\s*([^<>=!\s]+)\s*(>=|<=|==|!=|>|<)\s*([^\s]+)\s*$")


@dataclass(frozen=True)
class Requirement:
    """A completion qualifies only when one score compares to a threshold, e.g. ``format>=1``.

    ``score`` is a reward alias of the row's ``rewards``, or ``reward`` for the weighted total.
    A missing or abstaining (``None``) score never qualifies.
    """

    score: str
    op: str
    threshold: float

    @classmethod
    def parse(cls, text: str | Requirement) -> Requirement:
        """``ALIAS OP NUMBER`` with OP one of ``>= > <= < == !=`` (``format>=1``, ``math == 1``)."""
        if isinstance(text, Requirement):
            return text
        match = _REQUIREMENT.match(str(text))
        threshold = _float(match.group(3)) if match else None
        if match is None or threshold is None:
            raise PreferenceError(
                f"cannot read requirement {text!r}: write ALIAS OP NUMBER, e.g. 'format>=1' or 'math==1' "
                f"(OP is one of {' '.join(_OPERATORS)}; ALIAS is a reward alias or 'reward' for the total)"
            )
        return cls(match.group(1), match.group(2), threshold)

    def met_by(self, row: Mapping[str, Any]) -> bool:
        value = _number(score_of(row, self.score))
        return value is not None and _OPERATORS[self.op](value, self.threshold)


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class _Options:
    """What pairs and selections share: the ranking score, requirements and columns carried over."""

    kind: ClassVar[str]
    by: str = TOTAL
    require: tuple[Requirement, ...] = ()
    keep: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.by, str) or not self.by:
            raise PreferenceError("'by' must name a reward alias, or 'reward' for the weighted total")
        require = (self.require,) if isinstance(self.require, str | Requirement) else self.require
        object.__setattr__(self, "require", tuple(Requirement.parse(r) for r in require))
        keep = (self.keep,) if isinstance(self.keep, str) else tuple(self.keep)
        clash = [c for c in keep if c in self._own_columns()]
        if clash:
            raise PreferenceError(f"cannot keep column(s) {', '.join(map(repr, clash))}: the output already has them")
        object.__setattr__(self, "keep", keep)

    def _own_columns(self) -> tuple[str, ...]:
        return ()

    @property
    def score_names(self) -> set[str]:
        """Every score the options read: the ranking one and those of the requirements."""
        return {self.by, *(r.score for r in self.require)}

    def meets(self, row: Mapping[str, Any]) -> bool:
        return all(r.met_by(row) for r in self.require)

    def build(self, rows: list[Mapping[str, Any]], dropped: Counter) -> list[dict[str, Any]]:
        """The output rows for one prompt's completions, counting what is left out in ``dropped``."""
        raise NotImplementedError


@dataclass(frozen=True)
class PairOptions(_Options):
    """How to pair completions of a prompt into DPO ``chosen`` / ``rejected``.

    ``mode="best-worst"``: one pair per prompt, the best completion meeting ``require`` against the
    worst one. ``mode="all"``: every pair whose better side meets ``require``, largest margins first,
    at most ``max_pairs`` per prompt. Ties are always dropped; a margin must reach ``min_margin``.
    """

    kind: ClassVar[str] = "pairs"
    min_margin: float = 0.0
    mode: str = "best-worst"
    max_pairs: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in PAIR_MODES:
            raise PreferenceError(f"unknown pair mode {self.mode!r}; use one of: {', '.join(PAIR_MODES)}")
        if not _is_number(self.min_margin) or self.min_margin < 0:
            raise PreferenceError(f"min_margin must be a finite number >= 0, got {self.min_margin!r}")
        if self.max_pairs is not None and (not _is_int(self.max_pairs) or self.max_pairs < 1):
            raise PreferenceError(f"max_pairs must be a whole number >= 1 (or None for no cap), got {self.max_pairs!r}")

    def _own_columns(self) -> tuple[str, ...]:
        return PAIR_COLUMNS

    def build(self, rows: list[Mapping[str, Any]], dropped: Counter) -> list[dict[str, Any]]:
        return pairs_for_prompt(rows, self, dropped)


@dataclass(frozen=True)
class SelectOptions(_Options):
    """Which completions of a prompt to keep as SFT data: best-of-N and/or a score threshold.

    A completion is kept when it meets ``require``, scores at least ``min_score`` (if set) and is
    among the ``top_k`` best of its prompt that do (``None``: no cap). Output is TRL's
    ``prompt``/``completion`` format or, with ``format="messages"``, one ``messages`` conversation.
    """

    kind: ClassVar[str] = "select"
    top_k: int | None = 1
    min_score: float | None = None
    format: str = "prompt-completion"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.top_k is not None and (not _is_int(self.top_k) or self.top_k < 1):
            raise PreferenceError(f"top_k must be a whole number >= 1 (or None to keep all), got {self.top_k!r}")
        if self.min_score is not None and not _is_number(self.min_score):
            raise PreferenceError(f"min_score must be a finite number, got {self.min_score!r}")
        if self.format not in SELECT_FORMATS:
            raise PreferenceError(f"unknown format {self.format!r}; use one of: {', '.join(SELECT_FORMATS)}")

    def _own_columns(self) -> tuple[str, ...]:
        return SELECT_COLUMNS

    def build(self, rows: list[Mapping[str, Any]], dropped: Counter) -> list[dict[str, Any]]:
        return select_for_prompt(rows, self, dropped)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class Stats:
    """What a run did: rows read, prompts seen, rows written, and everything left out by reason."""

    kind: str = "pairs"
    rows: int = 0
    prompts: int = 0
    prompts_written: int = 0
    written: int = 0
    dropped: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def bad_row(self, where: str, problem: str) -> None:
        self.dropped["invalid_row"] += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{where}: {problem}")

    def summary(self) -> str:
        """Human-readable counts, one drop reason a line (what the CLI prints on stderr)."""
        noun = "pairs" if self.kind == "pairs" else "completions"
        lines = [f"read {self.rows} rows of {self.prompts} prompts; "
                 f"wrote {self.written} {noun} from {self.prompts_written} prompts"]
        reasons = PAIR_DROPS if self.kind == "pairs" else SELECT_DROPS
        for code in reasons:
            if self.dropped[code]:
                lines.append(f"  dropped {self.dropped[code]}: {reasons[code]} [{code}]")
        lines.extend(f"  {problem}" for problem in self.problems)
        hidden = self.dropped["invalid_row"] - len(self.problems)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more invalid rows")
        return "\n".join(lines)


class _Item(NamedTuple):
    """A row and where it came from (``line 12`` in a file, ``row 12`` from Python)."""

    where: str
    row: dict[str, Any]


class _Problem(NamedTuple):
    """An input record that is not a usable row, and why."""

    where: str
    message: str


class _Candidate(NamedTuple):
    """A scored completion of one prompt: its position in the group, row and ranking score."""

    index: int
    row: Mapping[str, Any]
    score: float


# ---------------------------------------------------------------------------------------------
# Public API over rows


def iter_pairs(rows: Iterable[Mapping[str, Any]], options: PairOptions | None = None, *,
               stats: Stats | None = None, unsorted: str = "error") -> Iterator[dict[str, Any]]:
    """DPO pairs (``prompt``, ``chosen``, ``rejected``, scores, margin) from scored rows, streamed.

    Rows carry ``prompt``, ``completion`` and the scores ``rewardhub score`` adds (``reward``,
    ``rewards``); score raw rows first with ``RewardSet.iter_scores``. Pass ``stats=Stats()`` to
    read the counts afterwards.
    """
    return _from_rows(rows, options or PairOptions(), stats, unsorted)


def iter_selected(rows: Iterable[Mapping[str, Any]], options: SelectOptions | None = None, *,
                  stats: Stats | None = None, unsorted: str = "error") -> Iterator[dict[str, Any]]:
    """SFT rows (``prompt``/``completion`` or ``messages``, with ``score`` and ``rewards``); see :func:`iter_pairs`."""
    return _from_rows(rows, options or SelectOptions(), stats, unsorted)


def _from_rows(rows: Iterable[Mapping[str, Any]], options: _Options, stats: Stats | None,
               unsorted: str) -> Iterator[dict[str, Any]]:
    stats = stats if stats is not None else Stats()
    stats.kind = options.kind
    items = _in_prompt_order(_valid(_numbered(rows, stats), stats), unsorted)
    return _per_prompt(_scored(items, options), options, stats)


def pairs_for_prompt(rows: list[Mapping[str, Any]], options: PairOptions, dropped: Counter) -> list[dict[str, Any]]:
    """The pairs of one prompt's completions; what is left out is counted in ``dropped`` by reason."""
    candidates = _candidates(rows, options.by, dropped)
    if len(candidates) < 2:
        dropped["too_few"] += 1
        return []
    lowest = min(c.score for c in candidates)
    if all(_close(c.score, lowest) for c in candidates):
        dropped["no_signal"] += 1
        return []
    if not any(options.meets(c.row) and not _close(c.score, lowest) for c in candidates):
        dropped["gate"] += 1  # nothing that may be chosen scores above anything
        return []
    if options.mode == "best-worst":
        found = _best_worst(candidates, options, dropped)
    else:
        found = _all_pairs(candidates, options, dropped)
    if options.max_pairs is not None and len(found) > options.max_pairs:
        dropped["max_pairs"] += len(found) - options.max_pairs
        found = found[: options.max_pairs]
    return [_pair_row(chosen, rejected, options.keep) for chosen, rejected in found]


def _best_worst(candidates: list[_Candidate], options: PairOptions,
                dropped: Counter) -> list[tuple[_Candidate, _Candidate]]:
    """The best completion meeting the requirements against the worst one (earliest on equal scores)."""
    rejected = min(candidates, key=lambda c: (c.score, c.index))
    eligible = [c for c in candidates if options.meets(c.row) and not _close(c.score, rejected.score)]
    chosen = max(eligible, key=lambda c: (c.score, -c.index))
    return [(chosen, rejected)] if _above_margin(chosen, rejected, options.min_margin, dropped) else []


def _all_pairs(candidates: list[_Candidate], options: PairOptions,
               dropped: Counter) -> list[tuple[_Candidate, _Candidate]]:
    """Every pair whose better side meets the requirements, largest margin first (ties counted, not paired)."""
    meets = {c.index: options.meets(c.row) for c in candidates}
    ranked = sorted(candidates, key=lambda c: (-c.score, c.index))
    found = []
    for better, worse in itertools.combinations(ranked, 2):
        if _close(better.score, worse.score):
            if meets[better.index] or meets[worse.index]:
                dropped["tie"] += 1
        elif meets[better.index] and _above_margin(better, worse, options.min_margin, dropped):
            found.append((better, worse))
    found.sort(key=lambda pair: pair[1].score - pair[0].score)  # stable: equal margins keep rank order
    return found


def _above_margin(chosen: _Candidate, rejected: _Candidate, min_margin: float, dropped: Counter) -> bool:
    if not _at_least(chosen.score - rejected.score, min_margin):
        dropped["below_margin"] += 1
        return False
    return True


def _pair_row(chosen: _Candidate, rejected: _Candidate, keep: tuple[str, ...]) -> dict[str, Any]:
    prompt, good, bad = chosen.row["prompt"], chosen.row["completion"], rejected.row["completion"]
    if any(is_conversational(v) for v in (prompt, good, bad)):
        prompt, good, bad = _as_messages(prompt, "user"), _as_messages(good, "assistant"), _as_messages(bad, "assistant")
    return {
        "prompt": prompt,
        "chosen": good,
        "rejected": bad,
        "score_chosen": chosen.score,
        "score_rejected": rejected.score,
        "margin": chosen.score - rejected.score,
        "rewards_chosen": chosen.row.get("rewards"),
        "rewards_rejected": rejected.row.get("rewards"),
        **{column: chosen.row.get(column) for column in keep},
    }


def select_for_prompt(rows: list[Mapping[str, Any]], options: SelectOptions, dropped: Counter) -> list[dict[str, Any]]:
    """The completions of one prompt kept for SFT, best first; the others are counted in ``dropped``."""
    kept = []
    for candidate in _candidates(rows, options.by, dropped):
        if not options.meets(candidate.row):
            dropped["gate"] += 1
        elif options.min_score is not None and not _at_least(candidate.score, options.min_score):
            dropped["below_threshold"] += 1
        else:
            kept.append(candidate)
    kept.sort(key=lambda c: (-c.score, c.index))
    if options.top_k is not None and len(kept) > options.top_k:
        dropped["not_top_k"] += len(kept) - options.top_k
        kept = kept[: options.top_k]
    return [_selected_row(c, options) for c in kept]


def _selected_row(candidate: _Candidate, options: SelectOptions) -> dict[str, Any]:
    prompt, completion = candidate.row["prompt"], candidate.row["completion"]
    if options.format == "messages" or is_conversational(prompt) or is_conversational(completion):
        prompt, completion = _as_messages(prompt, "user"), _as_messages(completion, "assistant")
    text = {"messages": prompt + completion} if options.format == "messages" else {"prompt": prompt, "completion": completion}
    return {
        **text,
        "score": candidate.score,
        "rewards": candidate.row.get("rewards"),
        **{column: candidate.row.get(column) for column in options.keep},
    }


def _as_messages(value: Any, role: str) -> list[dict[str, Any]]:
    """Chat messages as they are; a plain string as one message of ``role``."""
    return list(value) if is_conversational(value) else [{"role": role, "content": value}]


def _candidates(rows: list[Mapping[str, Any]], by: str, dropped: Counter) -> list[_Candidate]:
    candidates = []
    for index, row in enumerate(rows):
        score = _number(score_of(row, by))
        if score is None:
            dropped["no_score"] += 1
        else:
            candidates.append(_Candidate(index, row, score))
    return candidates


def score_of(row: Mapping[str, Any], name: str) -> Any:
    """The row's score called ``name``: a reward alias in ``rewards``, or ``reward`` for the total."""
    if name == TOTAL:
        return row.get(TOTAL)
    rewards = row.get("rewards")
    return rewards.get(name) if isinstance(rewards, Mapping) else None


def _has_score(row: Mapping[str, Any], name: str) -> bool:
    rewards = row.get("rewards")
    return TOTAL in row if name == TOTAL else isinstance(rewards, Mapping) and name in rewards


def _number(value: Any) -> float | None:
    """A finite float, or None for missing, abstained (None) and NaN scores."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)


def _at_least(value: float, bound: float) -> bool:
    return value > bound or _close(value, bound)


# ---------------------------------------------------------------------------------------------
# The pipeline: number rows, drop invalid ones, score what lacks scores, group by prompt


def _numbered(rows: Iterable[Mapping[str, Any]], stats: Stats) -> Iterator[_Item | _Problem]:
    for number, row in enumerate(rows, start=1):
        stats.rows += 1
        if isinstance(row, Mapping):
            yield _Item(f"row {number}", dict(row))
        else:
            yield _Problem(f"row {number}", f"a row must be a mapping, got {type(row).__name__}")


def _read(path: str | Path, stats: Stats, progress: bool) -> Iterator[_Item | _Problem]:
    """A file's rows as items, and a problem for each unreadable record."""
    tabular = str(path) != "-" and (Path(path).is_dir() or Path(path).suffix.lower() == ".parquet")
    unit = "row" if tabular else "line"
    records: Iterable[Any] = iter_input(path)
    if progress:
        records = _progress_bar(records, path)
    for record in records:
        stats.rows += 1
        where = f"{unit} {record.line}"
        yield _Problem(where, record.error) if record.error is not None else _Item(where, record.row)


def _progress_bar(records: Iterator[Any], path: str | Path) -> Iterable[Any]:
    try:
        from tqdm import tqdm
    except ImportError:  # the bar is a convenience: without tqdm, run without one
        return records
    return tqdm(records, total=count_rows(path), unit="row", desc="reading", file=sys.stderr)


def _valid(items: Iterator[_Item | _Problem], stats: Stats) -> Iterator[_Item]:
    """Items with a prompt and a completion; the others are counted as ``invalid_row`` with a message."""
    for item in items:
        if isinstance(item, _Problem):
            stats.bad_row(item.where, item.message)
            continue
        missing = [key for key in ("prompt", "completion") if item.row.get(key) is None]
        if missing:
            fields = ", ".join(sorted(item.row)) or "none"
            stats.bad_row(item.where, f"no {' or '.join(map(repr, missing))} (fields: {fields})")
            continue
        yield item


def _scored(items: Iterator[_Item], options: _Options, rewards: RewardSet | None = None, *,
            rescore: bool = False, batch_size: int = 64) -> Iterator[_Item]:
    """Items with every score the options read: reused when present, else computed by ``rewards``.

    Decided per run of one prompt's rows: if any lacks a score the whole run is scored, since
    group-aware rewards (majority vote, group length shaping) must see all of a prompt's
    completions. Runs that need scoring go through :meth:`RewardSet.iter_scores` (batches end at
    prompt boundaries) in order, so output order is input order and memory stays at one batch.
    """
    names = options.score_names

    def has_scores(item: _Item) -> bool:
        return all(_has_score(item.row, name) for name in names)

    def needs_scores(run: list[_Item]) -> bool:
        return rescore or not all(has_scores(item) for item in run)

    prompt_runs = (list(run) for _, run in itertools.groupby(items, key=lambda item: prompt_key(item.row["prompt"])))
    for needs, runs in itertools.groupby(prompt_runs, key=needs_scores):
        run = itertools.chain.from_iterable(runs)
        if not needs:
            yield from run
        elif rewards is None:
            first = next(item for item in run if not has_scores(item))
            raise PreferenceError(f"{first.where} has no {_missing_scores(first.row, names)}; "
                                  f"pass a reward config (--config) to score raw completions")
        else:
            yield from _score_run(run, rewards, batch_size)


def _score_run(run: Iterable[_Item], rewards: RewardSet, batch_size: int) -> Iterator[_Item]:
    """Score rows in order, keeping each one's place (scored rows come back in input order)."""
    wheres: deque[str] = deque()

    def rows() -> Iterator[dict[str, Any]]:
        for item in run:
            wheres.append(item.where)
            yield item.row

    for scored in rewards.iter_scores(rows(), batch_size=batch_size):
        yield _Item(wheres.popleft(), scored)


def _missing_scores(row: Mapping[str, Any], names: set[str]) -> str:
    missing = sorted(name for name in names if not _has_score(row, name))
    rewards = row.get("rewards")
    have = ", ".join(rewards) if isinstance(rewards, Mapping) and rewards else "none"
    parts = [f"'{TOTAL}'" if name == TOTAL else f"score {name!r} in 'rewards' (it has: {have})" for name in missing]
    return " and no ".join(parts)


def _in_prompt_order(items: Iterator[_Item], unsorted: str) -> Iterator[_Item]:
    """``items`` with each prompt's rows together, before any scoring: as they come (``error``: a
    prompt seen again is caught when grouping) or regrouped through disk (``spill``). Checks
    ``unsorted`` right away."""
    if unsorted not in UNSORTED_POLICIES:
        raise PreferenceError(f"unsorted must be one of {', '.join(UNSORTED_POLICIES)}, got {unsorted!r}")
    return itertools.chain.from_iterable(_spilled_groups(items)) if unsorted == "spill" else items


def _per_prompt(items: Iterator[_Item], options: _Options, stats: Stats) -> Iterator[dict[str, Any]]:
    """The options' output for each prompt group, counted in ``stats``."""
    for group in _contiguous_groups(items):
        stats.prompts += 1
        out = options.build([item.row for item in group], stats.dropped)
        if out:
            stats.prompts_written += 1
            stats.written += len(out)
            yield from out


def _contiguous_groups(items: Iterator[_Item]) -> Iterator[list[_Item]]:
    """Runs of rows with the same prompt; a prompt seen again after another one is an error.

    Memory: the current group, plus a 64-bit hash per prompt seen to notice a reappearance.
    """
    seen: set[int] = set()
    group: list[_Item] = []
    current = ""
    for item in items:
        key = prompt_key(item.row["prompt"])
        if group and key != current:
            yield group
            group = []
        if not group:
            if hash(key) in seen:
                raise UnsortedInputError(
                    f"{item.where}: prompt {_snippet(key)} appeared earlier in the input, with other prompts "
                    f"in between. A prompt's completions must be on consecutive rows (as `rewardhub score` "
                    f"writes them): sort the input by prompt, or pass --spill (API: unsorted='spill') to group "
                    f"rows through a temporary on-disk index"
                )
            seen.add(hash(key))
            current = key
        group.append(item)
    if group:
        yield group


def _spilled_groups(items: Iterator[_Item]) -> Iterator[list[_Item]]:
    """Groups in order of each prompt's first row, whatever the input order, via a temporary SQLite file.

    Rows and the grouping index live on disk; memory holds one group at a time.
    """
    import pickle
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rewardhub-groups-") as folder:
        db = sqlite3.connect(os.path.join(folder, "groups.sqlite"))
        try:
            db.execute("PRAGMA journal_mode = OFF")
            db.execute("PRAGMA synchronous = OFF")
            db.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, prompt BLOB NOT NULL, item BLOB NOT NULL)")
            db.executemany("INSERT INTO rows (prompt, item) VALUES (?, ?)",
                           ((_digest(item), pickle.dumps(tuple(item))) for item in items))
            db.execute("CREATE INDEX rows_by_prompt ON rows (prompt, seq)")
            db.commit()
            cursor = db.execute(
                "SELECT first.seq, rows.item FROM rows JOIN "
                "(SELECT prompt, MIN(seq) AS seq FROM rows GROUP BY prompt) AS first ON rows.prompt = first.prompt "
                "ORDER BY first.seq, rows.seq"
            )
            for _, records in itertools.groupby(cursor, key=operator.itemgetter(0)):
                yield [_Item(*pickle.loads(blob)) for _, blob in records]
        finally:
            db.close()


def _digest(item: _Item) -> bytes:
    """A collision-safe identity of the row's prompt (spilled groups must never merge two prompts)."""
    return hashlib.blake2b(prompt_key(item.row["prompt"]).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _snippet(key: str, width: int = 60) -> str:
    text = key.replace("\x1e", " | ").replace("\x1f", ": ")
    return repr(text if len(text) <= width else text[: width - 3] + "...")


# ---------------------------------------------------------------------------------------------
# Files


def write_pairs(input: str | Path, output: str | Path, options: PairOptions | None = None, *,
                config: Any = None, rescore: bool = False, batch_size: int = 64,
                unsorted: str = "error", progress: bool = False) -> Stats:
    """Read ``input`` (JSONL, ``-``, Parquet or a datasets folder), write DPO pairs to ``output``.

    ``output`` by suffix: ``.jsonl`` (or ``-``) JSONL, ``.parquet``, anything else a saved
    ``datasets`` folder. ``config`` (path, dict, list or :class:`RewardSet`) scores rows that lack
    scores (all rows with ``rescore=True``). Nothing is written when an error stops the run.
    """
    return _write_file(input, output, options or PairOptions(), config=config, rescore=rescore,
                       batch_size=batch_size, unsorted=unsorted, progress=progress)


def write_selection(input: str | Path, output: str | Path, options: SelectOptions | None = None, *,
                    config: Any = None, rescore: bool = False, batch_size: int = 64,
                    unsorted: str = "error", progress: bool = False) -> Stats:
    """Read ``input``, write the completions kept for SFT to ``output``; see :func:`write_pairs`."""
    return _write_file(input, output, options or SelectOptions(), config=config, rescore=rescore,
                       batch_size=batch_size, unsorted=unsorted, progress=progress)


def _write_file(input: str | Path, output: str | Path, options: _Options, *,
                config: Any, rescore: bool, batch_size: int, unsorted: str, progress: bool) -> Stats:
    if batch_size < 1:
        raise PreferenceError(f"batch_size must be at least 1, got {batch_size}")
    rewards = _reward_set(config, options, rescore)
    stats = Stats(options.kind)
    items = _in_prompt_order(_valid(_read(input, stats, progress), stats), unsorted)
    items = _scored(items, options, rewards, rescore=rescore, batch_size=batch_size)
    _write_atomically(_per_prompt(items, options, stats), output)
    return stats


def _reward_set(config: Any, options: _Options, rescore: bool) -> RewardSet | None:
    if config is None:
        if rescore:
            raise PreferenceError("rescoring needs a reward config (--config)")
        return None
    rewards = config if isinstance(config, RewardSet) else load(config)
    unknown = sorted(name for name in options.score_names if name != TOTAL and name not in rewards.aliases)
    if unknown:
        raise ConfigError(f"score(s) {', '.join(map(repr, unknown))} are not in the reward config; "
                          f"its aliases: {', '.join(rewards.aliases)} (or 'reward' for the weighted total)")
    return rewards


def _write_atomically(rows: Iterator[dict[str, Any]], output: str | Path) -> None:
    """Write through a hidden sibling renamed into place, so an error never leaves half a file."""
    if str(output) == "-":
        write_rows(rows, "-")
        return
    target = Path(output)
    if not target.parent.is_dir():
        raise PreferenceError(f"cannot write {target}: folder {target.parent} does not exist")
    partial = target.with_name(f".{target.name}.partial{target.suffix}")
    _remove(partial)
    try:
        write_rows(rows, partial)
    except BaseException:
        _remove(partial)
        raise
    if target.is_dir():
        shutil.rmtree(target)
    os.replace(partial, target)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
