"""Scoring a Ray Dataset: :class:`RewardScorer`, Ray Data's stateful callable (one reward set per actor),
and :func:`score_dataset`, which groups the rows and maps the actors over them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._files.tables import table_rows
from .._set.compose import RewardSet
from .._set.config import TOTAL, RewardEntry
from ..errors import ConfigError
from .cluster import entries_of, require_ray
from .grouping import (
    GROUP_KEY,
    PROBLEM,
    ROWS_PER_BLOCK,
    _keyed,
    _problems_only,
    _shuffled,
    group_chunks,
    group_keys,
    report_bad_rows,
    whole_group_blocks,
)

__all__ = ["SCORED_COLUMNS", "RewardScorer", "score_dataset", "scored_columns"]

SCORED_COLUMNS = ("rewards", TOTAL, "reasons", "outcomes", "seconds")


class RewardScorer:
    """Ray Data's stateful callable for ``map_batches``: one reward set per actor, whole groups per call.

    Takes a ``pyarrow.Table`` holding whole groups (see :func:`score_dataset`) and returns it with
    the scored columns appended; rows are reordered so each group's rows are consecutive. Rewards get
    the rows as ``rewardhub score`` reads them from Parquet: JSON columns (``arrow.json``, how rewardhub
    stores mixed shapes such as text and chat-message completions) decoded to their values.
    """

    def __init__(self, entries: list[RewardEntry], batch_size: int = 256, default_timeout: float | None = None):
        self.rewards = RewardSet(entries, default_timeout=default_timeout)
        self.batch_size = batch_size

    def __call__(self, table):
        import pyarrow as pa
        import pyarrow.compute as pc

        if GROUP_KEY in table.column_names:  # keyed by score_dataset, rows it cannot score marked
            table = table.filter(pc.is_null(table.column(PROBLEM))).drop_columns([PROBLEM])
            keys = table.column(GROUP_KEY).to_pylist()
            table = table.drop_columns([GROUP_KEY])
        else:  # a block of whole groups (grouped_dataset, which left out and reported the rows it cannot score)
            keys = group_keys(table)
        order = sorted(range(len(keys)), key=keys.__getitem__)  # stable: a group keeps its rows' order
        table = table.take(pa.array(order, type=pa.int64()))
        rows, keys = list(table_rows(table)), [keys[i] for i in order]
        scored: list[dict[str, Any]] = []
        for start, end in group_chunks(keys, self.batch_size):
            scored += self.rewards.score(rows[start:end])
        for name, column in scored_columns(self.rewards.aliases, scored).items():
            table = table.append_column(name, column)
        return table


def scored_columns(aliases: Sequence[str], scored: list[dict[str, Any]]) -> dict[str, Any]:
    """The scored columns as Arrow arrays with fixed types (a batch where a reward always abstained
    still has a ``float64`` column, so every block has one schema)."""
    import pyarrow as pa

    def struct(name: str, kind: Any) -> Any:
        fields = pa.struct([(alias, kind) for alias in aliases])
        return pa.array([{a: _finite(row[name][a]) if kind == pa.float64() else row[name][a] for a in aliases}
                         for row in scored], type=fields)

    return {
        "rewards": struct("rewards", pa.float64()),
        TOTAL: pa.array([_finite(row[TOTAL]) for row in scored], type=pa.float64()),
        "reasons": struct("reasons", pa.string()),
        "outcomes": struct("outcomes", pa.string()),
        "seconds": struct("seconds", pa.float64()),
    }


def _finite(value: Any) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _actor_pool(ray: Any, concurrency: int | tuple[int, int]) -> Any:
    low, high = (concurrency, concurrency) if isinstance(concurrency, int) else concurrency
    return ray.data.ActorPoolStrategy(min_size=low, max_size=high)


def score_dataset(
    ds: Any, config: Any, *, batch_size: int = 256, concurrency: int | tuple[int, int] = 1, num_cpus: float = 1,
    partitions: int | None = None, default_timeout: float | None = None, grouped: bool = False,
    bad_rows: list[tuple[int, str]] | None = None, **map_options: Any,
) -> Any:
    """Score a Ray Dataset of rows (``prompt``, ``completion`` and columns) with ``config``.

    The grouping (reading ``ds``, and a shuffle if one is needed) runs now; the scoring is lazy, like
    any Ray Data transform (it runs when the result is written or iterated). ``grouped=True`` says each
    block of ``ds`` already holds whole groups (:func:`grouped_dataset`): nothing is checked or moved.

    ``concurrency`` actors (a number, or ``(min, max)`` for autoscaling) each hold one reward set;
    ``num_cpus`` is reserved per actor (a reward that runs its own worker pool may want more).
    No group is ever split: when the blocks of ``ds`` already hold whole groups (no group key, the
    ``group`` column else the prompt, in two blocks: a prompt's completions kept together, as
    ``rewardhub score`` and trainers write them), large blocks are only cut at group boundaries, at
    least two pieces per actor (:func:`whole_group_blocks`); otherwise rows are hash-partitioned by
    group key into ``partitions`` blocks (default: about ``ROWS_PER_BLOCK`` rows each, at least two per
    actor), a shuffle. Rows that cannot be scored (:func:`unscorable`: JSON that does not decode,
    neither a ``completion`` nor an episode's ``messages``) are left out, as ``rewardhub score`` skips
    them, and reported: said on stderr, and added to ``bad_rows`` where given.
    ``map_options`` go to ``map_batches`` (e.g. ``resources``, ``runtime_env``).
    """
    ray = require_ray()
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1; got {batch_size}")
    entries = entries_of(config)
    RewardSet(entries)  # a bad config fails here, on the driver, with its message, not inside an actor
    actors = concurrency if isinstance(concurrency, int) else max(concurrency)
    if not grouped:
        light = {"batch_format": "pyarrow", "batch_size": None, "zero_copy_batch": True}
        # Materialized before the actors start: they may hold every CPU of the cluster (2 actors on 2 cores),
        # and a streaming read or shuffle waiting for a CPU behind them would never run. Ray spills to disk
        # what does not fit in the object store.
        keyed = ds.map_batches(_keyed, **light).materialize()
        report_bad_rows([(0, row[PROBLEM]) for row in keyed.map_batches(_problems_only, **light).take_all()],
                        bad_rows)
        ds = whole_group_blocks(ray, keyed, pieces=2 * actors)
        if ds is None:
            ds = _shuffled(keyed, partitions or max(2 * actors, math.ceil(keyed.count() / ROWS_PER_BLOCK)))
    return ds.map_batches(
        RewardScorer, fn_constructor_kwargs={"entries": entries, "batch_size": batch_size,
                                             "default_timeout": default_timeout},
        batch_format="pyarrow", batch_size=None, compute=_actor_pool(ray, concurrency), num_cpus=num_cpus, **map_options,
    )


