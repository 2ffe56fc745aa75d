"""Rows to Arrow, streamed: Parquet files and saved ``datasets`` folders with a schema that holds mixed shapes.

The rule for a column's type: the Arrow type pyarrow infers for its values (dicts become structs of
the union of their keys, ints mixed with floats become floats). A column whose values share no
type (numbers and text, text and chat messages, a key holding both), whose type Parquet cannot
store (dicts with no keys) or is unwieldy (over 256 struct fields), is stored as JSON: Arrow's
``arrow.json`` type, Parquet's JSON logical type, which rewardhub's readers and ``datasets``
(its ``Json()`` feature) decode back to the values. Rows are written a batch at a time (one
Parquet row group each), so memory holds one batch; a batch that needs a wider type than the rows
before it (a new key, a first non-null value, a float after ints, a new column) has the staged rows
rewritten with it, so the rule holds for the whole file wherever its values change (a column
widened more than 4 times becomes JSON, which bounds the rewriting).

A write that still fails keeps the work: the rows go to ``<target>.rescued.jsonl`` with a message.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import OutputFileError
from .jsonl import dumps_row, dumps_value, jsonable
from .staging import replacing

__all__ = [
    "DecodedColumns",
    "MAX_STRUCT_FIELDS",
    "MAX_WIDENINGS",
    "ROWS_PER_GROUP",
    "arrow_column",
    "decoded_column",
    "json_column",
    "row_decoder",
    "rows_table",
    "table_rows",
    "write_table",
]

ROWS_PER_GROUP = 4096
MAX_STRUCT_FIELDS = 256
MAX_WIDENINGS = 4


def write_table(rows: Iterable[dict[str, Any]], target: Path, kind: str, *, rows_per_group: int = ROWS_PER_GROUP) -> int:
    """Write ``rows`` to ``target`` as a Parquet file (``kind`` "parquet") or a ``datasets`` folder
    ("dataset"), replaced only when every row is written; returns how many rows."""
    rows = iter(rows)
    with replacing(target) as staged:
        sink = _Sink(staged if kind == "parquet" else staged.with_name(f"{staged.name}.arrow"), kind)
        try:
            _fill(sink, rows, rows_per_group)
            if kind == "dataset":
                _save_dataset(sink.path, staged)
        except _WriteFailed as failed:
            _rescue(target, itertools.chain(sink.salvage(), failed.batch, rows), failed.cause, sink)
        return sink.rows


class _WriteFailed(Exception):
    def __init__(self, cause: Exception, batch: list[dict[str, Any]]):
        super().__init__(str(cause))
        self.cause, self.batch = cause, batch


def _fill(sink: _Sink, rows: Iterator[dict[str, Any]], rows_per_group: int) -> None:
    """Feed ``rows`` to ``sink`` in batches. What the rows raise (scoring, input) goes up as is; what
    writing raises is a :class:`_WriteFailed` carrying the batch it did not write."""
    while batch := list(itertools.islice(rows, rows_per_group)):
        try:
            sink.add(batch)
        except Exception as exc:
            raise _WriteFailed(exc, batch) from exc
    try:
        sink.close()
    except Exception as exc:
        raise _WriteFailed(exc, []) from exc


def _save_dataset(arrow_path: Path, staged: Path) -> None:
    """The staged Arrow stream as a ``datasets`` folder (memory-mapped, copied shard by shard)."""
    try:
        import datasets
    except ImportError:
        raise _WriteFailed(OutputFileError("a datasets folder needs `datasets`: pip install 'rewardhub[io]'"), []) from None
    try:
        datasets.Dataset.from_file(str(arrow_path)).save_to_disk(str(staged))
    except Exception as exc:
        raise _WriteFailed(exc, []) from exc


def _rescue(target: Path, rows: Iterator[dict[str, Any]], cause: Exception, sink: _Sink) -> None:
    """Write every row (the staged ones read back, then the rest) as JSONL beside ``target``, then fail loudly."""
    rescue = target.with_name(f"{target.name}.rescued.jsonl")
    print(f"rewardhub: cannot write {target} ({type(cause).__name__}: {cause}); writing the rows as JSONL "
          f"to {rescue} instead", file=sys.stderr, flush=True)
    count, unencodable = 0, Counter()
    with replacing(rescue) as staged, open(staged, "w", encoding="utf-8", errors="backslashreplace") as handle:
        for row in rows:
            try:
                line = dumps_row(row)
            except Exception as exc:  # a value even JSON cannot take: that row alone is left out
                unencodable[f"{type(exc).__name__}: {exc}"] += 1
                continue
            handle.write(line + "\n")
            count += 1
    lost = f"; {sink.unreadable} written rows could not be read back" if sink.unreadable else ""
    lost += "".join(f"; {n} row(s) left out ({why})" for why, n in unencodable.items())
    raise OutputFileError(f"cannot write {target}: {type(cause).__name__}: {cause}. The {count} rows are in "
                          f"{rescue} (JSONL){lost}") from cause


class _Sink:
    """One staged Arrow file (Parquet, or an Arrow IPC stream for a datasets folder) written a batch
    at a time, with the column types of the module's rule; rewritten when a batch needs wider ones."""

    def __init__(self, path: Path, kind: str):
        try:
            import pyarrow as pa
        except ImportError:
            raise OutputFileError("writing Parquet or a datasets folder needs pyarrow: pip install 'rewardhub[io]'") from None
        if not hasattr(pa, "json_"):
            raise OutputFileError(f"writing Parquet needs pyarrow >= 19 (this is {pa.__version__}): "
                                  "pip install 'rewardhub[io]'")
        self.pa, self.path, self.kind = pa, path, kind
        self.types: dict[str, Any] = {}
        self.widenings: Counter[str] = Counter()
        self.rows = self.groups = self.unreadable = 0
        self._writer: Any = None
        self._file: Any = None

    def add(self, rows: list[dict[str, Any]]) -> None:
        rows = [jsonable(row) for row in rows]
        names = [*self.types, *(n for n in dict.fromkeys(k for row in rows for k in row) if n not in self.types)]
        arrays = {name: self._column(name, [row.get(name) for row in rows]) for name in names}
        types = {name: array.type for name, array in arrays.items()}
        if self._writer is None:
            self._open(types)
        elif types != self.types:
            self._rewrite(types)
        self._writer.write_table(self.pa.Table.from_arrays(list(arrays.values()), schema=self._schema()))
        self.rows += len(rows)
        self.groups += 1

    def _column(self, name: str, values: list[Any]) -> Any:
        """``values`` as an array of the column's type, or of a wider one, or JSON."""
        pa, known = self.pa, self.types.get(name)
        if known is None:
            return arrow_column(values)
        if _is_json(known):
            return json_column(values)
        try:
            array = pa.array(values)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return json_column(values)  # no one type holds them
        if array.type == known:
            return array
        try:
            wider = pa.unify_schemas([pa.schema([(name, known)]), pa.schema([(name, array.type)])],
                                     promote_options="permissive").field(name).type
        except (pa.ArrowException, ValueError, TypeError):
            return json_column(values)
        if wider != known:
            self.widenings[name] += 1
            if self.widenings[name] > MAX_WIDENINGS or not _storable(wider):
                return json_column(values)
        return _cast(array, wider, lambda: values)

    def _schema(self) -> Any:
        return self.pa.schema(list(self.types.items()))

    def _open(self, types: dict[str, Any]) -> None:
        import pyarrow.parquet as pq

        self.types = dict(types)
        if self.kind == "parquet":
            self._writer = pq.ParquetWriter(str(self.path), self._schema())
        else:
            self._file = self.pa.OSFile(str(self.path), "wb")
            self._writer = self.pa.ipc.new_stream(self._file, self._schema())

    def close(self) -> None:
        """Finish the file (an empty one when no row came)."""
        if self._writer is None:
            self._open({})
        self._writer.close()
        self._writer = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def _rewrite(self, types: dict[str, Any]) -> None:
        """Rewrite the rows staged so far with ``types`` (each at least as wide as before)."""
        self.close()
        old = self.path.with_name(f"{self.path.name}.before")
        os.replace(self.path, old)
        self._open(types)
        for batch in _batches(old, self.kind):
            columns = []
            for name, wanted in types.items():
                if name not in batch.schema.names:
                    columns.append(self.pa.array([None] * batch.num_rows, type=wanted))
                    continue
                column = batch.column(name)
                if column.type == wanted:
                    columns.append(column)
                elif _is_json(wanted):
                    columns.append(json_column(column.to_pylist(maps_as_pydicts="lossy")))
                else:
                    columns.append(_cast(column, wanted, column.to_pylist))
            self._writer.write_table(self.pa.Table.from_arrays(columns, schema=self._schema()))
        old.unlink()

    def salvage(self) -> Iterator[dict[str, Any]]:
        """The rows staged so far, read back as rows (after a failure); what cannot be read is counted."""
        done = 0
        try:
            if self._writer is not None:
                self.close()
            for batch in _batches(self.path, self.kind):
                for row in table_rows(batch):
                    done += 1
                    yield row
        except Exception:
            self.unreadable = self.rows - done


def _batches(path: Path, kind: str) -> Iterator[Any]:
    """The record batches (Parquet row groups) of a staged file, one at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if kind == "parquet":
        parquet = pq.ParquetFile(str(path))
        for index in range(parquet.num_row_groups):
            yield from parquet.read_row_group(index).to_batches()
        parquet.close()
        return
    with pa.memory_map(str(path)) as source:
        yield from pa.ipc.open_stream(source)


def table_rows(table: Any) -> Iterator[dict[str, Any]]:
    """The rows of an Arrow table or record batch as rewardhub's readers give them: JSON columns
    decoded, map columns as dicts."""
    decode = row_decoder(table.schema)
    for row in table.to_pylist(maps_as_pydicts="lossy"):
        yield decode(row) if decode else row


def decoded_column(table: Any, name: str) -> tuple[list[Any], dict[int, str]]:
    """One column of an Arrow table as Python values, decoded as :func:`table_rows` decodes it, and
    the rows whose value is not valid JSON (``None`` among the values), each with why."""
    values = table.column(name).to_pylist(maps_as_pydicts="lossy")
    decode = _value_decoder(table.schema.field(name).type)
    if decode is None:
        return values, {}
    decoded, errors = [], {}
    for index, value in enumerate(values):
        try:
            decoded.append(decode(value))
        except json.JSONDecodeError as exc:
            decoded.append(None)
            errors[index] = _not_json(name, exc)
    return decoded, errors


class DecodedColumns:
    """An Arrow table's columns as Python values, each decoded once, when first asked for
    (:func:`decoded_column`), for the checks and keys that read the same columns."""

    def __init__(self, table: Any):
        self.table = table
        self._decoded: dict[str, tuple[list[Any], dict[int, str]]] = {}

    def __getitem__(self, name: str) -> list[Any]:
        return self._column(name)[0]

    def errors(self) -> dict[int, str]:
        """The rows :func:`table_rows` cannot decode, by index, each with why (the first column's)."""
        errors: dict[int, str] = {}
        for field in self.table.schema:
            if _value_decoder(field.type) is not None:
                for index, why in self._column(field.name)[1].items():
                    errors.setdefault(index, why)
        return errors

    def _column(self, name: str) -> tuple[list[Any], dict[int, str]]:
        if name not in self._decoded:
            self._decoded[name] = decoded_column(self.table, name)
        return self._decoded[name]


def rows_table(rows: Iterable[dict[str, Any]]) -> Any:
    """``rows`` as one Arrow table with the column types of the module's rule (mixed shapes as JSON):
    what a Parquet file rewardhub writes holds, read back by :func:`table_rows` as the same values."""
    import pyarrow as pa

    rows = [jsonable(row) for row in rows]
    names = list(dict.fromkeys(k for row in rows for k in row))
    return pa.Table.from_arrays([arrow_column([row.get(name) for row in rows]) for name in names], names=names)


def arrow_column(values: list[Any]) -> Any:
    """``values`` as one Arrow array: of the type pyarrow infers, else (no one type holds them, or
    Parquet cannot store it) JSON."""
    import pyarrow as pa

    try:
        array = pa.array(values)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return json_column(values)
    return array if _storable(array.type) else json_column(values)


def _cast(array: Any, wanted: Any, values: Callable[[], list[Any]]) -> Any:
    """``array`` as type ``wanted`` (a supertype of its own): Arrow's cast, else from the Python values."""
    import pyarrow as pa

    try:
        return array.cast(wanted)
    except (pa.ArrowException, ValueError, TypeError):
        return pa.array(values(), type=wanted)


def json_column(values: list[Any]) -> Any:
    """``values`` as an Arrow JSON array (``arrow.json``), whatever their shapes."""
    import pyarrow as pa

    try:
        return pa.array([None if v is None else dumps_value(v) for v in values], type=pa.json_())
    except UnicodeEncodeError:  # a lone surrogate in some text: its JSON escape is valid UTF-8
        return pa.array([None if v is None else dumps_value(v, ensure_ascii=True) for v in values], type=pa.json_())


def _is_json(arrow_type: Any) -> bool:
    import pyarrow as pa

    return isinstance(arrow_type, pa.JsonType)


def _storable(arrow_type: Any) -> bool:
    """False for a type Parquet cannot store (a struct with no field) or one with too many struct fields."""
    import pyarrow as pa

    fields = 0
    pending = [arrow_type]
    while pending:
        current = pending.pop()
        if pa.types.is_struct(current):
            if current.num_fields == 0:
                return False
            fields += current.num_fields
            pending.extend(current.field(i).type for i in range(current.num_fields))
        elif pa.types.is_list(current) or pa.types.is_large_list(current) or pa.types.is_fixed_size_list(current):
            pending.append(current.value_type)
    return fields <= MAX_STRUCT_FIELDS


def row_decoder(schema: Any) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """A function that decodes a row's JSON values (columns of type ``arrow.json``, at any depth), or
    None when the schema has none. A value that is not valid JSON raises ``ValueError`` naming its column."""
    decoders = {field.name: d for field in schema if (d := _value_decoder(field.type)) is not None}
    if not decoders:
        return None

    def decode(row: dict[str, Any]) -> dict[str, Any]:
        for name, decode_value in decoders.items():
            try:
                row[name] = decode_value(row.get(name))
            except json.JSONDecodeError as exc:
                raise ValueError(_not_json(name, exc)) from None
        return row

    return decode


def _not_json(column: str, exc: json.JSONDecodeError) -> str:
    return f"column {column!r} is not valid JSON: {exc.msg} at column {exc.colno}"


def _value_decoder(arrow_type: Any) -> Callable[[Any], Any] | None:
    import pyarrow as pa

    if isinstance(arrow_type, pa.JsonType):
        return lambda value: None if value is None else json.loads(value)
    if pa.types.is_struct(arrow_type):
        fields = {arrow_type.field(i).name: d for i in range(arrow_type.num_fields)
                  if (d := _value_decoder(arrow_type.field(i).type)) is not None}
        if not fields:
            return None
        return lambda value: None if value is None else {
            k: fields[k](v) if k in fields else v for k, v in value.items()}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        item = _value_decoder(arrow_type.value_type)
        return None if item is None else (lambda value: None if value is None else [item(v) for v in value])
    return None
