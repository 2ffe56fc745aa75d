"""Run a gold query and a candidate query on one database, read-only and bounded, and compare their results.

Runs in a deadline-killed worker process (:mod:`rewardhub.workers`, as ``math`` does); stdlib only. A
database given as an SQL script is built once per worker and each run gets a fresh in-memory copy of it
(``deserialize``); one given as a file is opened read-only and immutable. Every run is refused everything
but reading (an authorizer: no writes, no ``ATTACH``, no ``PRAGMA``, no transactions, no extension
loading; ``PRAGMA query_only`` as well), runs one statement, stops at a time limit (a progress handler),
a heap limit and a row limit.
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["Limits", "QueryFailed", "compare_on", "is_database_file", "normalise_rows", "run_query"]

_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
_REFUSED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
_PROGRESS_STEPS = 10_000  # virtual machine steps between two looks at the clock
_SCRIPTS: OrderedDict[bytes, bytes] = OrderedDict()  # script digest -> the built database, serialised
_GOLDS: OrderedDict[tuple, list] = OrderedDict()  # (database, gold) -> its normalised rows
_CACHED_SCRIPTS, _CACHED_GOLDS = 16, 256


@dataclass(frozen=True)
class Limits:
    timeout: float = 5.0  # seconds per query
    max_rows: int = 10_000
    heap_mb: int = 256
    float_digits: int = 9  # significant digits floats are compared to


class QueryFailed(Exception):
    """A query that did not run to its end: a syntax error, a refused operation, a limit."""


def _authorize(action: int, arg1: Any, arg2: Any, database: Any, trigger: Any) -> int:
    if action not in _ALLOWED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and str(arg2).lower() in _REFUSED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _connect(database: str) -> sqlite3.Connection:
    """A read-only connection to ``database`` (a script's fresh in-memory copy, or a file opened read-only)."""
    if is_database_file(database):
        connection = sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    else:
        connection = sqlite3.connect(":memory:", check_same_thread=False)
        connection.deserialize(_built(database))
    connection.execute("PRAGMA trusted_schema = OFF")
    connection.execute("PRAGMA temp_store = MEMORY")
    connection.execute("PRAGMA query_only = ON")
    return connection


def is_database_file(database: str) -> bool:
    """``database`` names an SQLite file (anything else is an SQL script, or a ``.sql`` file holding one)."""
    return not database.endswith(".sql") and "\n" not in database and os.path.isfile(database)


def _built(database: str) -> bytes:
    """The database an SQL script (or a ``.sql`` file) builds, serialised; built once per worker."""
    script = open(database, encoding="utf-8").read() if "\n" not in database and os.path.isfile(database) else database
    key = hashlib.sha256(script.encode()).digest()
    if key in _SCRIPTS:
        _SCRIPTS.move_to_end(key)
        return _SCRIPTS[key]
    builder = sqlite3.connect(":memory:")
    try:
        builder.executescript(script)
        data = builder.serialize()
    except sqlite3.Error as exc:
        raise ValueError(f"the database script does not run: {exc}") from None
    finally:
        builder.close()
    _SCRIPTS[key] = data
    while len(_SCRIPTS) > _CACHED_SCRIPTS:
        _SCRIPTS.popitem(last=False)
    return data


def run_query(database: str, query: str, limits: Limits) -> list[tuple]:
    """The rows ``query`` returns on ``database``, normalised; raises ``QueryFailed`` saying why not."""
    connection = _connect(database)
    try:
        pages, page_size = (connection.execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_count", "page_size"))
        held = 0 if is_database_file(database) else pages * page_size  # the in-memory copy is on SQLite's heap
        connection.execute(f"PRAGMA hard_heap_limit = {limits.heap_mb * 1024 * 1024 + held}")  # + the copy itself
        connection.set_authorizer(_authorize)
        deadline = time.monotonic() + limits.timeout
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
        try:
            cursor = connection.execute(query)
            rows = cursor.fetchmany(limits.max_rows + 1)
        except sqlite3.Warning as exc:  # more than one statement
            raise QueryFailed(str(exc)) from None
        except sqlite3.OperationalError as exc:
            if time.monotonic() > deadline or "interrupted" in str(exc):
                raise QueryFailed(f"timed out after {limits.timeout:g} s") from None
            raise QueryFailed(str(exc)) from None
        except (sqlite3.Error, OverflowError, MemoryError) as exc:
            raise QueryFailed(str(exc) or type(exc).__name__) from None
        if len(rows) > limits.max_rows:
            raise QueryFailed(f"more than {limits.max_rows} rows")
        return normalise_rows(rows, limits.float_digits)
    finally:
        connection.close()


def normalise_rows(rows: list[tuple], digits: int = 9) -> list[tuple]:
    """Rows with numbers compared by value (``2`` and ``2.0`` alike; floats to ``digits`` significant digits)."""
    return [tuple(_normal(value, digits) for value in row) for row in rows]


def _normal(value: Any, digits: int) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return value
        if value == int(value) and abs(value) < 2**63:
            return int(value)
        return float(f"{value:.{digits}g}")
    return value


def _gold_rows(database: str, gold: str, limits: Limits) -> list[tuple]:
    key = (database if len(database) < 4096 else hashlib.sha256(database.encode()).digest(), gold, limits)
    if key in _GOLDS:
        _GOLDS.move_to_end(key)
        return _GOLDS[key]
    rows = run_query(database, gold, limits)
    _GOLDS[key] = rows
    while len(_GOLDS) > _CACHED_GOLDS:
        _GOLDS.popitem(last=False)
    return rows


def compare_on(item: tuple[str, str, str, bool, Limits]) -> tuple[str, str]:
    """Worker function: ``(verdict, detail)`` for one database; verdict is ``match``, ``mismatch``,
    ``candidate failed``, ``gold failed`` or ``database failed``; a match or mismatch's detail is
    ``"empty"`` when the gold returned no rows."""
    database, gold, candidate, ordered, limits = item
    try:
        expected = _gold_rows(database, gold, limits)
    except ValueError as exc:
        return "database failed", str(exc)
    except QueryFailed as exc:
        return "gold failed", str(exc)
    try:
        got = run_query(database, candidate, limits)
    except QueryFailed as exc:
        return "candidate failed", str(exc)
    same = got == expected if ordered else Counter(got) == Counter(expected)
    return ("match" if same else "mismatch"), ("empty" if not expected else "")
