"""Which rows meet in one scoring call: group keys, rows that cannot be scored, blocks of whole groups.

A prompt's completions always meet in one batch, so group rewards (``majority_vote``, group length
modes) see whole groups: rows read on the driver come in blocks cut at group boundaries; any other
Dataset is checked for blocks of whole groups (only the keys reach the driver) and hash-partitioned
by group key when a group spans two blocks.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from .._files.tables import DecodedColumns, rows_table
from ..completions import is_conversational, prompt_key
from ..episode import split_messages
from ..errors import ConfigError, InputFileError
from .cluster import require_ray

__all__ = ["GROUP_KEY", "PROBLEM", "ROWS_PER_BLOCK", "group_chunks", "group_keys", "grouped_dataset", "grouped_table",
           "report_bad_rows", "unscorable", "whole_group_blocks"]

GROUP_KEY = "__rewardhub_group"
PROBLEM = "__rewardhub_problem"  # why a row cannot be scored (null: it can), marked before the grouping
ROWS_PER_BLOCK = 4096  # target rows per block: whole groups, a few scoring batches each


def group_chunks(keys: Sequence[str], batch_size: int) -> list[tuple[int, int]]:
    """``(start, end)`` of scoring batches over rows sorted by group key: each ends at a group
    boundary once it holds ``batch_size`` rows, so no batch holds part of a group."""
    chunks, start = [], 0
    for i in range(1, len(keys) + 1):
        if i == len(keys) or (i - start >= batch_size and keys[i] != keys[i - 1]):
            chunks.append((start, i))
            start = i
    return chunks


def group_keys(table, columns: DecodedColumns | None = None) -> list[str]:
    """Each row's group key: its ``group`` column if it has one, else its prompt (``prompt_key`` of
    the decoded value); ``columns``: the table's, where they were decoded already."""
    columns = columns if columns is not None else DecodedColumns(table)
    names = table.column_names
    if "completion" not in names and "messages" not in names:
        raise ConfigError(f"rows need a 'completion' column (or an episode's 'messages') to be scored; "
                          f"the dataset has {names}")
    groups = columns["group"] if "group" in names else [None] * len(table)
    prompts = columns["prompt"] if "prompt" in names else _episode_prompts(table, columns)
    return [str(g) if g is not None else prompt_key(p) if p is not None else f"\x00row{id(table)}:{i}"
            for i, (g, p) in enumerate(zip(groups, prompts, strict=True))]


def _episode_prompts(table, columns: DecodedColumns) -> list[Any]:
    """Each row's prompt where the table has no ``prompt`` column: an episode's (``messages`` and no
    ``completion``) is its messages before the first assistant message, as rewards see it (``Batch``)."""
    import pyarrow.compute as pc

    names = table.column_names
    if "messages" not in names:
        return [None] * len(table)
    messages = columns["messages"]
    completions = pc.is_valid(table.column("completion")).to_pylist() if "completion" in names else [False] * len(table)
    return [split_messages(m)[0] if not has and is_conversational(m) else None
            for m, has in zip(messages, completions, strict=True)]


def unscorable(table, columns: DecodedColumns) -> dict[int, str]:
    """The rows of ``table`` (its ``columns``) that cannot be scored, by index, each with why (as
    ``rewardhub score`` says it): a JSON value that does not decode, or neither a ``completion`` nor
    an episode's chat ``messages``."""
    import pyarrow.compute as pc

    problems = columns.errors()
    names = table.column_names
    if "completion" in names:
        missing = [i for i, ok in enumerate(pc.is_valid(table.column("completion")).to_pylist()) if not ok]
    else:
        missing = list(range(len(table)))
    if missing:
        messages = columns["messages"] if "messages" in names else [None] * len(table)
        fields = ", ".join(sorted(names)) or "none"
        for i in missing:
            if i not in problems and not is_conversational(messages[i]):
                problems[i] = f"no 'completion' (fields: {fields})"
    return problems


def _keyed(table):
    """``table`` with each row's group key and, for a row that cannot be scored, why (:func:`unscorable`)."""
    import pyarrow as pa

    columns = DecodedColumns(table)
    problems = unscorable(table, columns)
    return (table.append_column(GROUP_KEY, pa.array(group_keys(table, columns), type=pa.string()))
            .append_column(PROBLEM, pa.array([problems.get(i) for i in range(len(table))], type=pa.string())))


def _problems_only(table):
    import pyarrow.compute as pc

    return table.select([PROBLEM]).filter(pc.is_valid(table.column(PROBLEM)))


def report_bad_rows(problems: Sequence[tuple[int, str]], bad_rows: list[tuple[int, str]] | None) -> None:
    """Rows left out of scoring, as ``(row number, why)`` (0: the number is not known): each said on
    stderr, as ``rewardhub score`` says a row it skips, and added to ``bad_rows`` where given."""
    if bad_rows is not None:
        bad_rows.extend(problems)
    for number, why in problems:
        print(f"rewardhub: {f'row {number}' if number else 'a row'}: {why}; row skipped", file=sys.stderr)


def grouped_dataset(rows: Sequence[dict[str, Any]], blocks: int, bad_rows: list[tuple[int, str]] | None = None) -> Any:
    """Rows held here as a Ray Dataset of about ``blocks`` blocks (more for large inputs: about
    ``ROWS_PER_BLOCK`` rows each), each of whole groups (sorted by group key on the driver):
    :func:`score_dataset` with ``grouped=True`` scores it without a shuffle.

    The columns are typed as rewardhub types a Parquet file it writes: a column of mixed shapes (text
    and chat messages, numbers and text) is JSON, decoded back to the values for the rewards. Rows
    that cannot be scored (:func:`unscorable`) are left out and reported (:func:`report_bad_rows`)."""
    return grouped_table(rows_table(rows), blocks, bad_rows)


def grouped_table(table: Any, blocks: int, bad_rows: list[tuple[int, str]] | None = None) -> Any:
    """An Arrow table held here as a Ray Dataset of blocks of whole groups, as :func:`grouped_dataset`."""
    ray = require_ray()
    import pyarrow as pa

    columns = DecodedColumns(table)
    problems, keys = unscorable(table, columns), group_keys(table, columns)
    if problems:
        report_bad_rows([(i + 1, why) for i, why in sorted(problems.items())], bad_rows)
        kept = [i for i in range(len(table)) if i not in problems]
        table, keys = table.take(pa.array(kept, type=pa.int64())), [keys[i] for i in kept]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    table, keys = table.take(pa.array(order, type=pa.int64())), [keys[i] for i in order]
    size = max(1, math.ceil(len(keys) / max(1, blocks, math.ceil(len(keys) / ROWS_PER_BLOCK))))
    return ray.data.from_arrow([table.slice(start, end - start) for start, end in group_chunks(keys, size)]
                               or [table])  # no row to score: one empty block


def whole_group_blocks(ray: Any, keyed: Any, pieces: int) -> Any:
    """``keyed`` (materialized, with a group key column) as a Dataset of blocks of whole groups without
    a shuffle, when no group has rows in two of its blocks (rollouts usually keep a prompt's completions
    together), else None. Only the keys come to the driver; a block larger than ``1/pieces`` of the rows
    (or ``ROWS_PER_BLOCK``) is cut at group boundaries where it lies, so that every actor has work."""
    refs = [ref for bundle in keyed.iter_internal_ref_bundles() for ref in bundle.block_refs]
    owner: dict[str, int] = {}
    sizes = []
    for index, (keys, rows) in enumerate(ray.get([ray.remote(_block_keys).remote(ref) for ref in refs])):
        if any(owner.setdefault(key, index) != index for key in keys):
            return None
        sizes.append(rows)
    target = max(1, min(ROWS_PER_BLOCK, math.ceil(sum(sizes) / max(1, pieces))))
    split = ray.remote(_split_block)
    blocks = []
    for ref, rows in zip(refs, sizes, strict=True):
        count = math.ceil(rows / target)
        blocks.extend([ref] if count <= 1 else split.options(num_returns=count).remote(ref, count))
    return ray.data.from_arrow_refs(blocks)


def _block_keys(block) -> tuple[set[str], int]:
    return set(block.column(GROUP_KEY).unique().to_pylist()), len(block)


def _split_block(block, count: int) -> tuple[Any, ...]:
    """``block`` sorted by group key (stably) and cut into ``count`` tables of whole groups (some may be empty)."""
    import pyarrow as pa

    keys = block.column(GROUP_KEY).to_pylist()
    order = sorted(range(len(keys)), key=keys.__getitem__)
    block, keys = block.take(pa.array(order, type=pa.int64())), [keys[i] for i in order]
    pieces = [block.slice(start, end - start) for start, end in group_chunks(keys, math.ceil(len(keys) / count))]
    return (*pieces, *[block.slice(0, 0)] * (count - len(pieces)))  # group_chunks makes at most `count`


def _shuffled(keyed: Any, partitions: int) -> Any:
    """``keyed`` hash-partitioned by group key into ``partitions`` blocks (materialized)."""
    try:
        return keyed.repartition(partitions, keys=[GROUP_KEY]).materialize()
    except Exception as exc:
        if "unify schemas" not in str(exc):
            raise
        raise InputFileError(
            "the Dataset's blocks give a column different types (as ray.data.from_items does with rows of "
            "text and chat messages), which Ray cannot shuffle; build it with rewardhub.ray.grouped_dataset(rows), "
            f"or write the rows with `rewardhub score -o x.parquet` first ({str(exc).splitlines()[-1][:300]})") from None


