"""Rows to Arrow tables: Parquet files and saved ``datasets`` folders."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._io import jsonable
from ._output import replacing


def write_table(rows: Iterable[dict[str, Any]], target: Path, kind: str) -> int:
    """Write ``rows`` to ``target`` as a Parquet file (``kind`` "parquet") or a ``datasets`` folder."""
    with replacing(target) as staged:
        rows = [jsonable(r) for r in rows]
        if kind == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), staged)
        else:
            import datasets

            datasets.Dataset.from_list(rows).save_to_disk(str(staged))
        return len(rows)
