"""SFT selections: the best-of-N and/or above-threshold completions of each prompt."""

from __future__ import annotations

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
    is_int,
    is_number,
    ranked_candidates,
)
from .pipeline import from_rows, write_file

__all__ = [
    "SELECT_COLUMNS",
    "SELECT_FORMATS",
    "SelectOptions",
    "iter_selected",
    "select_for_prompt",
    "write_selection",
]

SELECT_FORMATS = ("prompt-completion", "messages")


SELECT_COLUMNS = ("prompt", "completion", "messages", "score", "rewards")


@dataclass(frozen=True)
class SelectOptions(Options):
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
        if self.top_k is not None and (not is_int(self.top_k) or self.top_k < 1):
            raise PreferenceError(f"top_k must be a whole number >= 1 (or None to keep all), got {self.top_k!r}")
        if self.min_score is not None and not is_number(self.min_score):
            raise PreferenceError(f"min_score must be a finite number, got {self.min_score!r}")
        if self.format not in SELECT_FORMATS:
            raise PreferenceError(f"unknown format {self.format!r}; use one of: {', '.join(SELECT_FORMATS)}")

    def _own_columns(self) -> tuple[str, ...]:
        return SELECT_COLUMNS

    def build(self, rows: list[Mapping[str, Any]], dropped: Counter) -> list[dict[str, Any]]:
        return select_for_prompt(rows, self, dropped)


def iter_selected(rows: Iterable[Mapping[str, Any]], options: SelectOptions | None = None, *,
                  stats: Stats | None = None, unsorted: str = "error") -> Iterator[dict[str, Any]]:
    """SFT rows (``prompt``/``completion`` or ``messages``, with ``score`` and ``rewards``); see :func:`iter_pairs`."""
    return from_rows(rows, options or SelectOptions(), stats, unsorted)


def write_selection(input: str | Path, output: str | Path, options: SelectOptions | None = None, *,
                    config: Any = None, rescore: bool = False, batch_size: int = 64,
                    unsorted: str = "error", progress: bool = False) -> Stats:
    """Read ``input``, write the completions kept for SFT to ``output``; see :func:`write_pairs`."""
    return write_file(input, output, options or SelectOptions(), config=config, rescore=rescore,
                       batch_size=batch_size, unsorted=unsorted, progress=progress)


def select_for_prompt(rows: list[Mapping[str, Any]], options: SelectOptions, dropped: Counter) -> list[dict[str, Any]]:
    """The completions of one prompt kept for SFT, best first; the others are counted in ``dropped``."""
    kept = []
    for candidate in ranked_candidates(rows, options.by, dropped):
        if not options.meets(candidate.row):
            dropped["gate"] += 1
        elif options.min_score is not None and not at_least(candidate.score, options.min_score):
            dropped["below_threshold"] += 1
        else:
            kept.append(candidate)
    kept.sort(key=lambda c: (-c.score, c.index))
    if options.top_k is not None and len(kept) > options.top_k:
        dropped["not_top_k"] += len(kept) - options.top_k
        kept = kept[: options.top_k]
    return [_selected_row(c, options) for c in kept]


def _selected_row(candidate: Candidate, options: SelectOptions) -> dict[str, Any]:
    prompt, completion = candidate.row["prompt"], candidate.row["completion"]
    if options.format == "messages" or is_conversational(prompt) or is_conversational(completion):
        prompt, completion = as_messages(prompt, "user"), as_messages(completion, "assistant")
    text = {"messages": prompt + completion} if options.format == "messages" else {"prompt": prompt, "completion": completion}
    return {
        **text,
        "score": candidate.score,
        "rewards": candidate.row.get("rewards"),
        **{column: candidate.row.get(column) for column in options.keep},
    }
