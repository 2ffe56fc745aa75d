"""Reading the input of ``rewardhub score --ray``: Parquet as Ray (or, on a local Ray, pyarrow) reads it,
JSONL and ``datasets`` folders streamed into blocks of the object store, never held on the driver."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._files.io import parquet_parts, read_rows
from .._files.score_file import valid_rows
from .._files.tables import json_column, rows_table
from ..completions import is_conversational, prompt_key
from ..errors import InputFileError
from .cluster import require_ray
from .grouping import ROWS_PER_BLOCK, grouped_table

__all__ = ["read_dataset", "stream_blocks"]


def read_dataset(input_path: str | Path, summary: Any = None, *, blocks: int = 2, local: bool = False) -> tuple[Any, bool]:
    """The input as a Ray Dataset, and whether its blocks hold whole groups. Parquet files and part
    folders are read by Ray itself (in parallel, on the cluster; grouped later, see
    :func:`~.scoring.score_dataset`), or, on a ``local`` Ray (this machine is the cluster), read here
    with pyarrow and grouped here (Ray's reader took 2 s for a 100 MB file that pyarrow reads here in
    0.1 s); JSONL and ``datasets`` folders are streamed into the object store a block at a time
    (:func:`stream_blocks`: the driver never holds the input), bad rows reported and skipped exactly as
    ``rewardhub score`` does (``summary.bad_rows``); ``blocks`` is how many blocks at least the rows held
    here are cut into."""
    ray = require_ray()
    bad = summary if summary is not None else _Bad()
    path = Path(input_path)
    if str(input_path) != "-" and (path.suffix.lower() == ".parquet" and path.is_file()
                                   or path.is_dir() and parquet_parts(path)):
        table = _parquet_table(path) if local else None
        if table is not None:
            return grouped_table(table, blocks, bad.bad_rows), True
        return ray.data.read_parquet(str(path.resolve())), False
    with _rereadable(input_path) as source:
        refs = stream_blocks(source, bad)
    if not refs:
        raise InputFileError(f"{input_path} has no rows to score")
    return ray.data.from_arrow_refs(refs), False


def stream_blocks(source: str | Path, summary: Any, rows_per_block: int = ROWS_PER_BLOCK) -> list[Any]:
    """The valid rows of ``source`` (a file read twice: once for the column types, once for the rows) as
    object refs of Arrow blocks of about ``rows_per_block`` rows, cut where a group ends, all with one
    schema (a column whose blocks would differ in type is JSON in all of them, as in the files rewardhub
    writes). Only one block's rows are held here at a time."""
    ray = require_ray()
    schema = _unified_schema(rows_table(chunk).schema for chunk in _chunks(_quiet_rows(source), rows_per_block))
    return [ray.put(_conformed(rows_table(chunk), schema))
            for chunk in _chunks(valid_rows(source, summary), rows_per_block)]


def _quiet_rows(source: str | Path) -> Iterator[dict[str, Any]]:
    """The rows :func:`valid_rows` gives, without reporting the bad ones (the second pass does)."""
    for record in read_rows(source):
        row = record.row
        if record.error is None and (row.get("completion") is not None or is_conversational(row.get("messages"))):
            yield row


def _chunks(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """``rows`` in lists of at least ``size`` rows, each ending where the next row's group begins (at
    twice the size, wherever it is: the grouping stage moves rows of a group cut in two)."""
    chunk: list[dict[str, Any]] = []
    for row in rows:
        if len(chunk) >= 2 * size or (len(chunk) >= size and _key(row) != _key(chunk[-1])):
            yield chunk
            chunk = []
        chunk.append(row)
    if chunk:
        yield chunk


def _key(row: dict[str, Any]) -> str:
    return str(row["group"]) if row.get("group") is not None else prompt_key(row.get("prompt"))


def _unified_schema(schemas: Iterable[Any]) -> Any:
    """One schema for blocks of ``schemas``: a column's one type where they agree (nulls aside), else JSON."""
    import pyarrow as pa

    types: dict[str, set[Any]] = {}
    for schema in schemas:
        for field in schema:
            types.setdefault(field.name, set())
            if not pa.types.is_null(field.type):
                types[field.name].add(field.type)
    return pa.schema([(name, next(iter(kinds)) if len(kinds) == 1 else pa.null() if not kinds else pa.json_())
                      for name, kinds in types.items()])


def _conformed(table: Any, schema: Any) -> Any:
    """``table`` with ``schema``'s columns and types (a missing column all nulls, a column JSON there as JSON)."""
    import pyarrow as pa

    columns = []
    for field in schema:
        if field.name not in table.column_names:
            columns.append(pa.nulls(len(table), field.type))
            continue
        column = table.column(field.name)
        if column.type == field.type:
            columns.append(column)
        elif isinstance(field.type, pa.JsonType):
            columns.append(json_column(column.to_pylist(maps_as_pydicts="lossy")))
        else:
            columns.append(column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=schema)


@contextmanager
def _rereadable(input_path: str | Path) -> Iterator[str | Path]:
    """``input_path``, or for stdin (``-``) a temporary file it is copied to: the input is read twice."""
    if str(input_path) != "-":
        yield input_path
        return
    with tempfile.NamedTemporaryFile(prefix="rewardhub-stdin-", suffix=".jsonl") as spooled:
        shutil.copyfileobj(sys.stdin.buffer, spooled)
        spooled.flush()
        yield spooled.name


def _parquet_table(path: Path) -> Any:
    """A Parquet file, or a folder of parts of one schema, as one Arrow table; None for parts of
    different schemas (Ray's reader says what it makes of them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = [path] if path.is_file() else parquet_parts(path)
    try:
        return pa.concat_tables([pq.read_table(part) for part in parts])
    except pa.ArrowInvalid:
        return None


class _Bad:
    def __init__(self):
        self.bad_rows: list[tuple[int, str]] = []
