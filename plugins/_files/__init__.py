"""Scored files: reading rows (JSONL, Parquet, ``datasets`` folders), the scored-row format, and writing
them safely (staging, streaming, mixed shapes). Internal: the CLI and ``rewardhub.ray`` use it."""

__all__ = []
