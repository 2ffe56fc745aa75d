"""DPO preference pairs (``chosen`` / ``rejected``) from the scored completions of each prompt."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..completions import is_conversational
from .options import (
    Candidate,
    Options,
    PreferenceError,
    Stats,
    as_messages,
    at_least,
    close,
    is_int,
    is_number,
    ranked_candidates,
)
from .pipeline import from_rows, write_file

__all__ = ["PAIR_COLUMNS", "PAIR_MODES", "PairOptions", "iter_pairs", "pairs_for_prompt", "write_pairs"]

PAIR_MODES = ("best-worst", "all")


PAIR_COLUMNS = ("prompt", "chosen", "rejected", "score_chosen", "score_rejected", "margin",
                "rewards_chosen", "rewards_rejected")


@dataclass(frozen=True)
class PairOptions(Options):
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
        if not is_number(self.min_margin) or self.min_margin < 0:
            raise PreferenceError(f"min_margin must be a finite number >= 0, got {self.min_margin!r}")
        if self.max_pairs is not None and (not is_int(self.max_pairs) or self.max_pairs < 1):
            raise PreferenceError(f"max_pairs must be a whole number >= 1 (or None for no cap), got {self.max_pairs!r}")

    def _own_columns(self) -> tuple[str, ...]:
        return PAIR_COLUMNS

    def build(self, rows: list[Mapping[str, Any]], dropped: Counter) -> list[dict[str, Any]]:
        return pairs_for_prompt(rows, self, dropped)


def iter_pairs(rows: Iterable[Mapping[str, Any]], options: PairOptions | None = None, *,
               stats: Stats | None = None, unsorted: str = "error") -> Iterator[dict[str, Any]]:
    """DPO pairs (``prompt``, ``chosen``, ``rejected``, scores, margin) from scored rows, streamed.

    Rows carry ``prompt``, ``completion`` and the scores ``rewardhub score`` adds (``reward``,
    ``rewards``); score raw rows first with ``RewardSet.iter_scores``. Pass ``stats=Stats()`` to
    read the counts afterwards.
    """
    return from_rows(rows, options or PairOptions(), stats, unsorted)


def write_pairs(input: str | Path, output: str | Path, options: PairOptions | None = None, *,
                config: Any = None, rescore: bool = False, batch_size: int = 64,
                unsorted: str = "error", progress: bool = False) -> Stats:
    """Read ``input`` (JSONL, ``-``, Parquet or a datasets folder), write DPO pairs to ``output``.

    ``output`` by suffix: ``.jsonl`` (or ``-``) JSONL, ``.parquet``, anything else a saved
    ``datasets`` folder. ``config`` (path, dict, list or :class:`RewardSet`) scores rows that lack
    scores (all rows with ``rescore=True``). Nothing is written when an error stops the run.
    """
    return write_file(input, output, options or PairOptions(), config=config, rescore=rescore,
                       batch_size=batch_size, unsorted=unsorted, progress=progress)


def pairs_for_prompt(rows: list[Mapping[str, Any]], options: PairOptions, dropped: Counter) -> list[dict[str, Any]]:
    """The pairs of one prompt's completions; what is left out is counted in ``dropped`` by reason."""
    candidates = ranked_candidates(rows, options.by, dropped)
    if len(candidates) < 2:
        dropped["too_few"] += 1
        return []
    lowest = min(c.score for c in candidates)
    if all(close(c.score, lowest) for c in candidates):
        dropped["no_signal"] += 1
        return []
    if not any(options.meets(c.row) and not close(c.score, lowest) for c in candidates):
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


def _best_worst(candidates: list[Candidate], options: PairOptions,
                dropped: Counter) -> list[tuple[Candidate, Candidate]]:
    """The best completion meeting the requirements against the worst one (earliest on equal scores)."""
    rejected = min(candidates, key=lambda c: (c.score, c.index))
    eligible = [c for c in candidates if options.meets(c.row) and not close(c.score, rejected.score)]
    chosen = max(eligible, key=lambda c: (c.score, -c.index))
    return [(chosen, rejected)] if _above_margin(chosen, rejected, options.min_margin, dropped) else []


def _all_pairs(candidates: list[Candidate], options: PairOptions,
               dropped: Counter) -> list[tuple[Candidate, Candidate]]:
    """Every pair whose better side meets the requirements, largest margin first (ties counted, not paired)."""
    meets = {c.index: options.meets(c.row) for c in candidates}
    ranked = sorted(candidates, key=lambda c: (-c.score, c.index))
    found = []
    for better, worse in itertools.combinations(ranked, 2):
        if close(better.score, worse.score):
            if meets[better.index] or meets[worse.index]:
                dropped["tie"] += 1
        elif meets[better.index] and _above_margin(better, worse, options.min_margin, dropped):
            found.append((better, worse))
    found.sort(key=lambda pair: pair[1].score - pair[0].score)  # stable: equal margins keep rank order
    return found


def _above_margin(chosen: Candidate, rejected: Candidate, min_margin: float, dropped: Counter) -> bool:
    if not at_least(chosen.score - rejected.score, min_margin):
        dropped["below_margin"] += 1
        return False
    return True


def _pair_row(chosen: Candidate, rejected: Candidate, keep: tuple[str, ...]) -> dict[str, Any]:
    prompt, good, bad = chosen.row["prompt"], chosen.row["completion"], rejected.row["completion"]
    if any(is_conversational(v) for v in (prompt, good, bad)):
        prompt, good, bad = as_messages(prompt, "user"), as_messages(good, "assistant"), as_messages(bad, "assistant")
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
