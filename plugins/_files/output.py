"""Where output rows go: stdout, a device or FIFO, or a file or folder replaced only when the run succeeds.

A run writes into a staging folder private to it (its host, pid and a random part in the name, created
exclusively beside the target), then renames the result into place: a failed or interrupted run
leaves the previous output as it was, and two runs writing the same target never touch each
other's staging (the last rename wins, and what it puts in place is complete). A run killed before
it could clean up leaves its staging folder behind; the next run writing the same target removes
those of this host whose process is gone (a live run's, or another host's, are never touched).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import OutputFileError
from .jsonl import write_jsonl
from .staging import replacing

__all__ = ["JSONL_SUFFIXES", "write_rows"]

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")


def write_rows(rows: Iterable[dict[str, Any]], output: str | Path) -> int:
    """Write ``rows`` to ``output`` and return how many: ``-`` streams JSONL to stdout; a device,
    FIFO or socket (``/dev/null``) gets JSONL written to it directly; a path is written by its
    extension (``.jsonl``/``.json``/``.ndjson`` JSONL, ``.parquet`` Parquet, else a ``datasets``
    folder) and replaced only when every row is written."""
    if str(output) == "-":
        return write_jsonl(rows, sys.stdout)
    target = Path(os.path.realpath(output))  # a symlink's file is replaced, not the link
    if _is_special(target):
        with open(target, "w", encoding="utf-8", errors="backslashreplace") as handle:
            return write_jsonl(rows, handle)
    if not target.parent.is_dir():
        raise OutputFileError(f"cannot write {output}: folder {Path(output).parent} does not exist")
    suffix = target.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        with replacing(target) as staged, open(staged, "w", encoding="utf-8", errors="backslashreplace") as handle:
            # A lone surrogate (from a Python caller's row) is written as its JSON escape, which reads back as is.
            return write_jsonl(rows, handle)
    from .tables import write_table

    return write_table(rows, target, "parquet" if suffix == ".parquet" else "dataset")


def _is_special(path: Path) -> bool:
    """True for an existing target that is neither a regular file nor a folder (a device, FIFO, socket)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
