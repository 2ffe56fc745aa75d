"""The scored-row format, written once: the input row plus ``rewards`` {alias: value or None}, ``reward``
(the weighted total, ``None`` where every reward abstained), ``reasons`` {alias: text}, ``outcomes``
{alias: ok/abstain/error/timeout} and ``seconds`` {alias: seconds per row}. ``RewardSet.iter_scores``,
the file command, ``rewardhub.ray`` and the reward server all write rows through :func:`scored_rows`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._set.config import TOTAL

if TYPE_CHECKING:
    from .._set.compose import SetResult

__all__ = ["SCORED_COLUMNS", "TOTAL", "scored_rows", "without_scores"]

SCORED_COLUMNS = ("rewards", TOTAL, "reasons", "outcomes", "seconds")


def scored_rows(rows: Sequence[Mapping[str, Any]], result: SetResult) -> list[dict[str, Any]]:
    """Each of ``rows`` (scored together as one batch into ``result``) with its scored columns."""
    per_row = {alias: r.seconds / max(len(rows), 1) for alias, r in result.components.items()}
    components = result.components.items()
    return [
        {
            **row,
            "rewards": {alias: r.scores[i].value for alias, r in components},
            TOTAL: result.totals[i],
            "reasons": {alias: r.scores[i].reason for alias, r in components},
            "outcomes": {alias: r.scores[i].outcome for alias, r in components},
            "seconds": per_row,
        }
        for i, row in enumerate(rows)
    ]


def without_scores(row: Mapping[str, Any]) -> dict[str, Any]:
    """A scored row as it was read: the scored columns left out."""
    return {k: v for k, v in row.items() if k not in SCORED_COLUMNS}
