"""Where output rows go: stdout, a device or FIFO, or a file or folder replaced only when the run succeeds.

A run writes into a staging folder private to it (its host, pid and a random part in the name, created
exclusively beside the target), then renames the result into place: a failed or interrupted run
leaves the previous output as it was, and two runs writing the same target never touch each
other's staging (the last rename wins, and what it puts in place is complete). A run killed before
it could clean up leaves its staging folder behind; the next run writing the same target removes
those of this host whose process is gone (a live run's, or another host's, are never touched).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import OutputFileError
from .io import write_jsonl

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
# What rename says when the target is in the way: a folder, a non-empty folder, a file where a folder goes.
_IN_THE_WAY = {errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY, errno.EEXIST}


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


@contextmanager
def replacing(target: Path) -> Iterator[Path]:
    """A path, inside a staging folder private to this run, where ``target``'s new content (a file
    or a folder) is to be written; renamed onto ``target`` when the block ends without error. The
    staging folder (which may hold other scratch files) is removed either way."""
    _remove_stale_stagings(target)
    host = socket.gethostname().replace("/", "_")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.{host}.{os.getpid()}-", suffix=".partial",
                                    dir=target.parent))
    try:
        staged = staging / target.name
        yield staged
        _rename_into_place(staged, target, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove_stale_stagings(target: Path) -> None:
    """Remove the staging folders of ``target`` left by runs of this host that were killed (their pid is
    gone). One without a host in its name (written before it had one) counts as this host's."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(?:(?P<host>.+)\.)?(?P<pid>\d+)-[^/]*\.partial")
    host = socket.gethostname().replace("/", "_")
    try:
        names = [entry.name for entry in os.scandir(target.parent) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for name in names:
        found = pattern.fullmatch(name)
        if found is None or found["host"] not in (None, host) or _alive(int(found["pid"])):
            continue
        shutil.rmtree(target.parent / name, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _rename_into_place(staged: Path, target: Path, staging: Path) -> None:
    """``os.replace`` staged onto target; a target rename cannot replace (a folder, or a file where a
    folder goes) is first moved into our own staging folder, which is removed afterwards. Another
    run may move or replace the target meanwhile: each attempt starts again from what is there."""
    for attempt in range(16):
        try:
            os.replace(staged, target)
            return
        except OSError as exc:
            if exc.errno not in _IN_THE_WAY or not os.path.lexists(target):
                raise
        try:
            os.replace(target, staging / f"previous-{attempt}")
        except FileNotFoundError:  # another run moved it first
            continue
    raise OutputFileError(f"cannot replace {target}: other runs keep writing it")
