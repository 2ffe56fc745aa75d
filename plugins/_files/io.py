"""Read rows from JSONL, Parquet or a saved ``datasets`` folder; encode rows as JSONL lines.

Reading never stops at a bad row: each row comes with its line number, or with an error that says
what is wrong with that line, so callers can report it and go on.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from ..errors import InputFileError

__all__ = ["InputRow", "Progress", "T", "count_rows", "iter_input", "parquet_parts", "read_rows"]

T = TypeVar("T")


@dataclass(frozen=True)
class InputRow:
    """One input record: its 1-based line (or row) number and the row, or an error message."""

    line: int
    row: dict[str, Any] | None
    error: str | None = None
    unit: str = "line"  # "line" in a JSONL file, "row" in a table or a Python iterable

    @property
    def where(self) -> str:
        return f"{self.unit} {self.line}"


def read_rows(
    source: str | Path | Iterable[Mapping[str, Any]], *, required: Sequence[str] = (), progress: bool = False
) -> Iterator[InputRow]:
    """Every record of ``source`` (a path as for :func:`iter_input`, or an iterable of row mappings),
    numbered, with an error where it is no usable row: unreadable, not an object, or a ``required``
    field missing or null. Callers report the errors and go on: one bad row loses only itself."""
    if isinstance(source, str | Path):
        records = iter_input(source)
        if progress:
            records = Progress(count_rows(source)).track(records)
    else:
        records = (
            InputRow(n, dict(row), unit="row") if isinstance(row, Mapping)
            else InputRow(n, None, f"a row must be a mapping, got {type(row).__name__}", unit="row")
            for n, row in enumerate(source, start=1)
        )
    for record in records:
        missing = [key for key in required if record.row is not None and record.row.get(key) is None]
        if missing:
            fields = ", ".join(sorted(record.row)) or "none"
            record = InputRow(record.line, None, f"no {' or '.join(map(repr, missing))} (fields: {fields})", record.unit)
        yield record


class Progress:
    """A one-line progress bar on stderr (rows done, total when known, rate)."""

    def __init__(self, total: int | None, stream: IO[str] | None = None):
        self.total, self.stream = total, stream or sys.stderr
        self.start = time.perf_counter()
        self.last = 0.0

    def track(self, records: Iterable[T]) -> Iterator[T]:
        """Yield ``records``, updating the bar as they pass; the bar ends with its line."""
        done = 0
        for done, record in enumerate(records, start=1):
            self.update(done)
            yield record
        self.update(done, force=True)
        self.stream.write("\n")

    def update(self, done: int, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        if self.total:
            filled = int(30 * min(done, self.total) / self.total)
            bar = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total}"
        else:
            bar = f"{done} rows"
        self.stream.write(f"\rreading {bar} {rate:.0f} rows/s")
        self.stream.flush()


def iter_input(path: str | Path) -> Iterator[InputRow]:
    """Rows of a JSONL file (``-`` = stdin), a ``.parquet`` file, a folder of Parquet parts (what Ray
    Data and Spark write), or a ``datasets`` folder."""
    if str(path) == "-":
        yield from _iter_jsonl(sys.stdin.buffer)
        return
    path = Path(path)
    if path.is_dir() and (parts := parquet_parts(path)):
        yield from _iter_parquet_parts(parts)
    elif path.is_dir():
        yield from _iter_dataset(path)
    elif not path.exists():
        raise InputFileError(f"input not found: {path}")
    elif path.suffix.lower() == ".parquet":
        yield from _iter_parquet(path)
    else:
        with path.open("rb") as handle:
            yield from _iter_jsonl(handle)


def count_rows(path: str | Path) -> int | None:
    """Number of records, when cheap to know (for a progress bar); None for stdin."""
    if str(path) == "-":
        return None
    path = Path(path)
    parts = parquet_parts(path) if path.is_dir() else [path] if path.suffix.lower() == ".parquet" else None
    if parts:
        try:
            import pyarrow.parquet as pq

            return sum(pq.ParquetFile(part).metadata.num_rows for part in parts)
        except Exception:  # no pyarrow, or not Parquet: reading it says why
            return None
    if path.is_dir():
        return None
    if not path.is_file():
        return None
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def _iter_jsonl(handle: IO[bytes]) -> Iterator[InputRow]:
    for number, raw in enumerate(handle, start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")  # files saved on Windows start with a BOM
        except UnicodeDecodeError as exc:
            yield InputRow(number, None, f"invalid UTF-8 at byte {exc.start} of the line")
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            yield InputRow(number, None, f"invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        if not isinstance(row, dict):
            yield InputRow(number, None, f"a row must be a JSON object, got {type(row).__name__}")
            continue
        if _SURROGATE_ESCAPE.search(raw) and _has_lone_surrogate(row):
            yield InputRow(number, None, "a lone surrogate escape such as \\ud800: text that is not valid Unicode")
            continue
        yield InputRow(number, row)


# JSON may escape half of a UTF-16 pair alone ("\ud800"): valid JSON, but no text that UTF-8 can encode.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _has_lone_surrogate(row: dict[str, Any]) -> bool:
    try:
        json.dumps(row, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parquet_parts(folder: Path) -> list[Path]:
    """The Parquet files of a folder of parts, in name order (empty for a ``datasets`` folder)."""
    if (folder / "dataset_info.json").exists() or (folder / "dataset_dict.json").exists():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix.lower() == ".parquet" and p.is_file())


def _iter_parquet_parts(parts: list[Path]) -> Iterator[InputRow]:
    """Rows of several Parquet files as one input, numbered across them."""
    number = 0
    for part in parts:
        for record in _iter_parquet(part):
            number += 1
            yield InputRow(number, record.row, unit="row")


def _iter_parquet(path: Path) -> Iterator[InputRow]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputFileError("reading Parquet needs pyarrow: pip install 'rewardhub[io]'") from None
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:
        raise InputFileError(f"cannot read Parquet file {path}: {exc}") from None
    from .tables import row_decoder

    decode = row_decoder(parquet.schema_arrow)  # JSON columns (mixed shapes) come back as their values
    number = 0
    for record_batch in parquet.iter_batches(batch_size=1024):
        for row in record_batch.to_pylist(maps_as_pydicts="lossy"):  # a map column reads as a dict
            number += 1
            try:
                record = InputRow(number, decode(row) if decode else row, unit="row")
            except ValueError as exc:
                record = InputRow(number, None, str(exc), unit="row")
            yield record


def _iter_dataset(path: Path) -> Iterator[InputRow]:
    try:
        import datasets
    except ImportError:
        raise InputFileError("reading a datasets folder needs `datasets`: pip install 'rewardhub[io]'") from None
    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as exc:
        raise InputFileError(f"{path} is not a saved `datasets` folder: {exc}") from None
    if isinstance(loaded, datasets.DatasetDict):
        if len(loaded) != 1:
            raise InputFileError(
                f"{path} holds several splits ({', '.join(loaded)}); pass the split's own folder, e.g. {path}/train"
            )
        loaded = next(iter(loaded.values()))
    loaded = loaded.with_format(None)  # a folder saved with a numpy/torch format would yield arrays, not lists
    for number, row in enumerate(loaded, start=1):
        yield InputRow(number, dict(row), unit="row")
