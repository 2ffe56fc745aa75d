"""The judge's on-disk answer cache: SQLite in WAL mode, shared safely by threads and processes.

It stores the endpoint's raw answer (not the score), keyed by a hash of endpoint, model, rendered
messages and sampling params, so re-scoring the same data makes no requests and parsing options
can change without invalidating it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

_SCHEMA = "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
_BUSY_TIMEOUT_S = 30.0
_MAX_VARIABLES = 500


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/rewardhub/judge.sqlite`` (``~/.cache`` when unset)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "rewardhub" / "judge.sqlite"


def request_key(request: dict[str, Any]) -> str:
    """A stable hash of everything that determines the endpoint's answer."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class JudgeCache:
    """Judge answers (JSON objects) by request key in one SQLite file."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # never reuse a connection across fork
            import sqlite3  # only rewards with a cache pay for it

            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The cached answers among ``keys``."""
        keys = list(keys)
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            conn = self._connection()
            for start in range(0, len(keys), _MAX_VARIABLES):
                chunk = keys[start : start + _MAX_VARIABLES]
                marks = ",".join("?" * len(chunk))
                for key, answer in conn.execute(f"SELECT key, answer FROM answers WHERE key IN ({marks})", chunk):
                    found[key] = json.loads(answer)
        return found

    def put_many(self, items: dict[str, dict[str, Any]]) -> None:
        """Store answers in one transaction (last writer wins; equal keys mean equal requests)."""
        if not items:
            return
        rows = [(key, json.dumps(answer, ensure_ascii=False)) for key, answer in items.items()]
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO answers (key, answer) VALUES (?, ?)", rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return self._connection().execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])
