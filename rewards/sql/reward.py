"""``sql_execution``: run the completion's query and the gold query (column ``solution``) on the row's database
(column ``db``) and compare what they return.

The candidate is the completion's last ```sql block, else its whole text. 1.0 when its rows equal the
gold's as a multiset, or as a list when the gold orders its rows (a top-level ``ORDER BY``, read with
sqlglot); 0.0 for other rows, a syntax error, a refused operation (anything but reading), or a limit hit
(time, rows, memory). ``db`` is an SQL script that builds the database, the path of an SQLite file (or of a
``.sql`` script), or a list of them: the candidate must then match on every one (test-suite accuracy). An
empty gold result cannot tell right from wrong, so a row whose gold returns no rows on every database
abstains. Queries run in deadline-killed worker processes (``execute.py``), as ``math``'s parsing does.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl

from ..deps import require
from .execute import Limits, compare_on, is_database_file

__all__ = ["SqlExecutionReward", "extract_query", "orders_rows"]

_FENCE = re.compile(r"^[ \t]*```[ \t]*sql[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M | re.I)
_LOOKS_LIKE_PATH = re.compile(r"^[^\s;]+\.(?:sqlite3?|db|sql)$", re.I)
GRACE = 2.0  # seconds a worker gets past its queries' own limits (building the database, starting)


def extract_query(text: str) -> str:
    """The last ```sql block of ``text``, else the whole text; without trailing semicolons."""
    blocks = _FENCE.findall(text)
    query = blocks[-1] if blocks else text
    return query.strip().rstrip(";").strip()


@functools.lru_cache(maxsize=4096)
def orders_rows(gold: str) -> bool:
    """Whether the gold query orders its result: a top-level ``ORDER BY`` (not one inside a subquery)."""
    import sqlglot
    from sqlglot.errors import ParseError

    try:
        tree = sqlglot.parse_one(gold, read="sqlite")
    except ParseError:
        return False
    return tree is not None and tree.args.get("order") is not None


def _databases(value: Any) -> list[str]:
    """The row's databases (scripts or paths); raises ValueError saying what is wrong."""
    items = list(value) if isinstance(value, list | tuple) else [value]
    if not items or not all(isinstance(item, str) and item.strip() for item in items):
        raise ValueError("db must be an SQL script, the path of an SQLite file, or a list of them")
    for item in items:
        if _LOOKS_LIKE_PATH.match(item.strip()) and not os.path.isfile(item.strip()):
            raise ValueError(f"database file {item.strip()!r} not found")
    return [item.strip() if is_database_file(item.strip()) or _LOOKS_LIKE_PATH.match(item.strip()) else item
            for item in items]


class SqlExecutionReward(Reward):
    """1.0 when the completion's SQL query returns what the gold query returns on the row's database(s)."""

    name = "sql_execution"
    description = "execute the completion's SQL query and the gold query on the row's SQLite database(s); 1.0 if the results match"

    def __init__(self, *, solution_column: str = "solution", db_column: str = "db", timeout: float = 5.0,
                 max_rows: int = 10_000, heap_mb: int = 256, float_digits: int = 9, workers: int | None = None,
                 on_error: str = "none"):
        super().__init__(on_error=on_error)
        require("sql_execution", "sql", "sqlglot")
        if not timeout > 0 or not max_rows > 0 or not heap_mb > 0 or not 1 <= float_digits <= 17:
            raise ConfigError("sql_execution: timeout, max_rows and heap_mb must be positive, float_digits 1 to 17")
        self.solution_column, self.db_column = solution_column, db_column
        self.limits = Limits(timeout=float(timeout), max_rows=int(max_rows), heap_mb=int(heap_mb),
                             float_digits=int(float_digits))
        self.workers = workers

    def required_columns(self) -> tuple[str, ...]:
        return (self.solution_column, self.db_column)

    def score_batch(self, batch: Batch) -> list[Score]:
        from rewardhub.workers import shared_pool

        golds, databases = batch.column(self.solution_column), batch.column(self.db_column)
        scores: list[Score | None] = [None] * len(batch)
        items: list[tuple] = []
        owners: list[int] = []
        for i, text in enumerate(batch.texts):
            if text is None:
                scores[i] = Score(None, batch.text_errors[i], outcome="abstain")
                continue
            gold = golds[i]
            if not isinstance(gold, str) or not gold.strip():
                scores[i] = Score(None, "no gold query in the solution column", outcome="error")
                continue
            try:
                dbs = _databases(databases[i])
            except ValueError as exc:
                scores[i] = Score(None, str(exc), outcome="error")
                continue
            query = extract_query(text)
            if not query:
                scores[i] = Score(0.0, "no SQL query", False, outcome="ok")
                continue
            ordered = orders_rows(gold.strip().rstrip(";"))
            for db in dbs:
                items.append((db, gold.strip().rstrip(";"), query, ordered, self.limits))
                owners.append(i)
        pool = shared_pool(self.workers)
        outcomes = pool.map(compare_on, items, timeout=2 * self.limits.timeout + GRACE) if items else []
        verdicts: dict[int, list[Any]] = {}
        for owner, outcome in zip(owners, outcomes, strict=True):
            verdicts.setdefault(owner, []).append(outcome)
        for i, found in verdicts.items():
            scores[i] = self._score(found, self._ordered(items, owners, i))
        return scores  # type: ignore[return-value]

    @staticmethod
    def _ordered(items: Sequence[tuple], owners: Sequence[int], row: int) -> bool:
        return next(item[3] for item, owner in zip(items, owners, strict=True) if owner == row)

    def _score(self, outcomes: list[Any], ordered: bool) -> Score:
        """One row's score from its databases' outcomes (a worker's ``(verdict, detail)`` or its failure)."""
        plural = f" on {len(outcomes)} databases" if len(outcomes) > 1 else ""
        for outcome in outcomes:
            if outcome.status == "timeout":
                return Score(None, f"timeout after {2 * self.limits.timeout + GRACE:g} s (worker killed)", None, "timeout")
            if outcome.status != "ok":
                return Score(None, f"worker failed: {outcome.value}", None, "error")
        verdicts = [outcome.value for outcome in outcomes]
        for verdict, detail in verdicts:
            if verdict in ("gold failed", "database failed"):
                return Score(None, f"{verdict}: {_short(detail)}", None, "error")
        for verdict, detail in verdicts:
            if verdict == "candidate failed":
                return Score(0.0, f"query failed: {_short(detail)}", False, "ok")
        if all(detail == "empty" for _, detail in verdicts):
            return Score(None, "the gold query returns no rows: an empty result cannot tell right from wrong "
                               "(give several databases in db)", None, "abstain")
        wrong = sum(verdict == "mismatch" for verdict, _ in verdicts)
        how = "rows in order" if ordered else "rows as a multiset"
        if wrong:
            return Score(0.0, f"different result{plural} ({how}; {wrong} of {len(verdicts)} databases differ)"
                         if plural else f"different result ({how})", False, "ok")
        return Score(1.0, f"same result{plural} ({how})", True, "ok")


def _short(text: str, limit: int = 120) -> str:
    """An SQLite message in a reason: escaped and cut short (it may quote the completion)."""
    return ascii(text[:limit] + ("..." if len(text) > limit else ""))


@hookimpl
def register_rewards(register):
    register(SqlExecutionReward)
