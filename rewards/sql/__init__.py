"""The ``sql_execution`` family: run the completion's SQL and the gold query on the row's SQLite database(s),
read-only and bounded, in deadline-killed workers (``execute``), and compare their results (``reward``)."""

from .reward import SqlExecutionReward, extract_query, orders_rows

__all__ = ["SqlExecutionReward", "extract_query", "orders_rows"]
