"""Writing a file or folder safely: the new content goes to a staging folder private to this run and is
renamed onto the target only when complete; staging folders left by killed runs are cleared."""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputFileError

__all__ = ["replacing"]

# What rename says when the target is in the way: a folder, a non-empty folder, a file where a folder goes.
_IN_THE_WAY = {errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY, errno.EEXIST}


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
