"""The judge's on-disk answer cache: one SQLite file shared by threads and processes, never fatal.

It stores the endpoint's raw answer (not the score), keyed by a hash of endpoint, model, rendered
messages and sampling params, so re-scoring the same data makes no requests and parsing options
can change without invalidating it.

The cache is an optimisation, so no failure of it may cost a score: every SQLite or OS error
(corrupt file, read-only folder or file, full disk, a lock held too long) is logged once and the
read or write is skipped; a corrupt file is moved aside and a new one started. The file uses a
rollback journal with memory mapping off: WAL mode would mmap a ``-shm`` file, and a shared
mapping of a file that is truncated or cannot be extended kills the process with SIGBUS.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["JudgeCache", "T", "default_cache_path", "logger", "request_key", "shared_cache"]

if TYPE_CHECKING:
    import sqlite3

logger = logging.getLogger("rewardhub.judge")

T = TypeVar("T")
_SCHEMA = "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
_MAX_VARIABLES = 500
_READ_TIMEOUT_S = 2.0  # a lookup is on the batch's critical path: a writer's commit takes milliseconds
_WRITE_TIMEOUT_S = 10.0  # writes run in the background
_RETRY_AFTER_S = 10.0  # a failed side is skipped this long, doubling up to _MAX_PAUSE_S, then retried
_MAX_PAUSE_S = 600.0
_COMPANIONS = ("-journal", "-wal", "-shm")  # moved with the file: a hot journal must stay with its database
_shared: dict[Path, JudgeCache] = {}
_shared_lock = threading.Lock()
_inherited: list[Any] = []  # connections opened before a fork: never closed in the child (see _Side.connection)


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/rewardhub/judge.sqlite`` (``~/.cache`` when unset)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "rewardhub" / "judge.sqlite"


def shared_cache(path: str | os.PathLike[str]) -> JudgeCache:
    """The process's one cache of ``path``: its judges share queued answers, connections and back-off."""
    path = Path(path).expanduser().resolve()
    with _shared_lock:
        cache = _shared.get(path)
        if cache is None:
            cache = _shared[path] = JudgeCache(path)
        return cache


def request_key(request: dict[str, Any]) -> str:
    """A stable hash of everything that determines the endpoint's answer."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class JudgeCache:
    """Judge answers (JSON objects) by request key in one SQLite file; reads and writes never raise.

    Reads run in the caller's thread with a short lock wait; writes are queued to one background
    thread (batched per call, never on a batch's critical path). Each has its own connection and
    its own back-off after a failure, so a read-only file still serves the answers it holds.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_timeout: float = _READ_TIMEOUT_S,
        write_timeout: float = _WRITE_TIMEOUT_S,
        retry_after: float = _RETRY_AFTER_S,
    ):
        self.path = Path(path).expanduser()
        self.read_timeout, self.write_timeout, self.retry_after = read_timeout, write_timeout, retry_after
        self._reads = _Side("reading", read_timeout)
        self._writes = _Side("writing", write_timeout)
        self._aside_lock = threading.Lock()
        self._warned = False
        self._pending: dict[str, dict[str, Any]] = {}  # queued writes, already visible to get_many
        self._pending_lock = threading.Lock()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._executor_pid = 0
        self._executor_lock = threading.Lock()

    # ----- the API ------------------------------------------------------------------------------
    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The cached answers among ``keys``, queued ones included (none when the file cannot be read)."""
        keys = list(keys)
        with self._pending_lock:
            found = {key: self._pending[key] for key in keys if key in self._pending}
        missing = [key for key in keys if key not in found]
        rows = self._run(self._reads, lambda conn: _select(conn, missing)) if missing else None
        for key, text in rows or ():
            try:
                answer = json.loads(text)
            except ValueError:  # a damaged row is a miss; the fresh answer replaces it
                continue
            if isinstance(answer, dict):
                found[key] = answer
        return found

    def put_many(self, items: dict[str, dict[str, Any]]) -> None:
        """Queue answers to be stored in one background transaction (last writer wins)."""
        if not items:
            return
        items = dict(items)
        with self._pending_lock:
            self._pending.update(items)
        with self._executor_lock:
            if self._executor is None or self._executor_pid != os.getpid():  # threads do not survive a fork
                self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judge-cache")
                self._executor_pid = os.getpid()
            self._executor.submit(self._store, items)

    def flush(self) -> None:
        """Wait until every queued write has been stored (or given up on)."""
        with self._executor_lock:
            if self._executor is None or self._executor_pid != os.getpid():
                return
            done = self._executor.submit(int)
        done.result()

    def __len__(self) -> int:
        """The number of stored answers (raises if the file cannot be read: a diagnostic, not a lookup)."""
        self.flush()
        with self._reads.lock:
            return self._reads.connection(self.path).execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Store queued writes, then close the connections (the cache reopens on next use)."""
        with self._executor_lock:
            executor = self._executor if self._executor_pid == os.getpid() else None
            self._executor = None
        if executor is not None:
            executor.shutdown()  # runs the queued writes first
        for side in (self._reads, self._writes):
            with side.lock:
                side.close()

    def _store(self, items: dict[str, dict[str, Any]]) -> None:
        rows = [(key, json.dumps(answer, ensure_ascii=False)) for key, answer in items.items()]
        self._run(self._writes, lambda conn: _insert(conn, rows))
        with self._pending_lock:  # stored, or given up on: the cache is an optimisation, not a buffer
            for key, answer in items.items():
                if self._pending.get(key) is answer:
                    del self._pending[key]

    # ----- failure handling -------------------------------------------------------------------
    def _run(self, side: _Side, work: Callable[[sqlite3.Connection], T]) -> T | None:
        """``work`` on ``side``'s connection; ``None`` when the side is backing off or fails."""
        import sqlite3

        with side.lock:
            if time.monotonic() < side.off_until:
                return None
            try:
                result = self._attempt(side, work)
            except (sqlite3.Error, OSError) as exc:
                side.close()
                self._back_off(side, exc)
                return None
            if side.failing:
                logger.info("judge cache %s: %s works again", self.path, side.name)
                side.failing, side.pause = False, 0.0
            return result

    def _attempt(self, side: _Side, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work`` once, and once more on a new file when the first try found the file corrupt."""
        import sqlite3

        try:
            return work(side.connection(self.path))
        except (sqlite3.Error, OSError) as exc:
            side.close()
            if not (_is_corrupt(exc) and self._move_aside(side, exc)):
                raise
        return work(side.connection(self.path))

    def _move_aside(self, side: _Side, exc: BaseException) -> bool:
        """Rename the corrupt file (and its journal) out of the way; False if that is impossible."""
        with self._aside_lock:
            if _identity(self.path) != side.identity:
                return True  # another thread or process already replaced it
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
            try:
                os.replace(self.path, aside)
                for suffix in _COMPANIONS:
                    if os.path.exists(f"{self.path}{suffix}"):
                        os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
            except OSError as error:
                logger.debug("judge cache %s: cannot move the corrupt file aside: %s", self.path, error)
                return False
        logger.warning("judge cache %s is corrupt (%s); moved it to %s and started a new one", self.path, _describe(exc), aside)
        return True

    def _back_off(self, side: _Side, exc: BaseException) -> None:
        side.failing = True
        side.pause = min(max(side.pause * 2, self.retry_after), _MAX_PAUSE_S)
        side.off_until = time.monotonic() + side.pause
        doing = "without cached answers" if side is self._reads else "without storing answers"
        log = logger.debug if self._warned else logger.warning  # warn once; the rest is for debugging
        log("judge cache %s: %s failed (%s); scoring goes on %s, next try in %g s",
            self.path, side.name, _describe(exc), doing, side.pause)  # fmt: skip
        self._warned = True

    def __reduce__(self) -> tuple[Any, ...]:
        return shared_cache, (self.path,)  # in another process: that process's cache of the same file


class _Side:
    """One connection (for reads, or for writes) with its lock wait and its back-off state."""

    def __init__(self, name: str, busy_timeout: float):
        self.name, self.busy_timeout = name, busy_timeout
        self.lock = threading.Lock()
        self.conn: sqlite3.Connection | None = None
        self.pid = 0
        self.identity: tuple[int, int] | None = None
        self.off_until = self.pause = 0.0
        self.failing = False

    def connection(self, path: Path) -> sqlite3.Connection:
        """The open connection, reopened after a fork or when the file was replaced or deleted."""
        if self.conn is not None and self.pid != os.getpid():
            _inherited.append(self.conn)  # closing it could touch the parent's journal: keep it, unused
            self.conn = None
        if self.conn is not None and _identity(path) != self.identity:
            self.close()
        if self.conn is None:
            self.identity = _identity(path)  # first: if opening finds the file corrupt, this is the file to move
            self.conn = _open(path, self.busy_timeout)
            self.pid = os.getpid()
        return self.conn

    def close(self) -> None:
        if self.conn is not None and self.pid == os.getpid():
            self.conn.close()
        self.conn = None


def _open(path: Path, busy_timeout: float) -> sqlite3.Connection:
    import sqlite3  # only rewards with a cache pay for it

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA mmap_size=0")  # every read through read(2): nothing mapped, nothing to SIGBUS
        # A file left in WAL mode (rewardhub < 0.2) is converted without ever mapping its -shm:
        # in exclusive locking mode SQLite keeps the WAL index on the heap.
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        conn.execute("PRAGMA locking_mode=NORMAL")  # the next statement releases the lock
        if mode != "delete":
            raise sqlite3.OperationalError(f"cannot switch the journal from {mode!r} to 'delete'")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
    except BaseException:
        conn.close()
        raise
    return conn


def _select(conn: sqlite3.Connection, keys: list[str]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for start in range(0, len(keys), _MAX_VARIABLES):
        chunk = keys[start : start + _MAX_VARIABLES]
        marks = ",".join("?" * len(chunk))
        rows += conn.execute(f"SELECT key, answer FROM answers WHERE key IN ({marks})", chunk).fetchall()
    return rows


def _insert(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("INSERT OR REPLACE INTO answers (key, answer) VALUES (?, ?)", rows)
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``; ``stat``, not ``open``: closing a descriptor of the
    database would drop this process's SQLite locks on it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _is_corrupt(exc: BaseException) -> bool:
    return getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
