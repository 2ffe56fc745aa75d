"""Rows as JSON: values made valid JSON (NaN as null, numpy and torch values as numbers) and written as JSONL."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import IO, Any

__all__ = ["dumps_row", "dumps_value", "jsonable", "write_jsonl"]


def jsonable(value: Any) -> Any:
    """``value`` with NaN/inf floats turned into None, so that it is valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def dumps_row(row: dict[str, Any]) -> str:
    """One JSONL line (no trailing newline); numpy/torch values become lists and numbers, others their string form."""
    return dumps_value(row)


def dumps_value(value: Any, *, ensure_ascii: bool = False) -> str:
    """``value`` as JSON text, as :func:`dumps_row` encodes a row (NaN as null, numpy values as numbers)."""
    return json.dumps(jsonable(value), ensure_ascii=ensure_ascii, allow_nan=False, default=_json_default)


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars, tensors
        return jsonable(value.tolist())
    return str(value)


def write_jsonl(rows: Iterable[dict[str, Any]], handle: IO[str]) -> int:
    """Write ``rows`` to ``handle`` as JSONL lines; returns how many."""
    count = 0
    for row in rows:
        handle.write(dumps_row(row) + "\n")
        count += 1
    handle.flush()
    return count
