"""Group rows by prompt: consecutive runs (a prompt seen again is an error) or any order through disk."""

from __future__ import annotations

import hashlib
import itertools
import operator
import os
from collections.abc import Iterator
from typing import Any, NamedTuple

from .._set.groups import prompt_runs
from ..completions import prompt_key
from .options import PreferenceError

__all__ = ["Item", "UNSORTED_POLICIES", "UnsortedInputError", "contiguous_groups", "in_prompt_order"]

UNSORTED_POLICIES = ("error", "spill")


class UnsortedInputError(PreferenceError):
    """A prompt's completions are not on consecutive rows, and grouping through disk was not asked for."""


class Item(NamedTuple):
    """A row and where it came from (``line 12`` in a file, ``row 12`` from Python)."""

    where: str
    row: dict[str, Any]


def in_prompt_order(items: Iterator[Item], unsorted: str) -> Iterator[Item]:
    """``items`` with each prompt's rows together, before any scoring: as they come (``error``: a
    prompt seen again is caught when grouping) or regrouped through disk (``spill``). Checks
    ``unsorted`` right away."""
    if unsorted not in UNSORTED_POLICIES:
        raise PreferenceError(f"unsorted must be one of {', '.join(UNSORTED_POLICIES)}, got {unsorted!r}")
    return itertools.chain.from_iterable(_spilled_groups(items)) if unsorted == "spill" else items


def contiguous_groups(items: Iterator[Item]) -> Iterator[list[Item]]:
    """Runs of rows with the same prompt; a prompt seen again after another one is an error.

    Memory: the current group, plus a 64-bit hash per prompt seen to notice a reappearance.
    """
    seen: set[int] = set()
    for key, group in prompt_runs(items, lambda item: item.row["prompt"]):
        if hash(key) in seen:
            raise UnsortedInputError(
                f"{group[0].where}: prompt {_snippet(key)} appeared earlier in the input, with other prompts "
                f"in between. A prompt's completions must be on consecutive rows (as `rewardhub score` "
                f"writes them): sort the input by prompt, or pass --spill (API: unsorted='spill') to group "
                f"rows through a temporary on-disk index"
            )
        seen.add(hash(key))
        yield group


def _spilled_groups(items: Iterator[Item]) -> Iterator[list[Item]]:
    """Groups in order of each prompt's first row, whatever the input order, via a temporary SQLite file.

    Rows and the grouping index live on disk; memory holds one group at a time.
    """
    import pickle
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rewardhub-groups-") as folder:
        db = sqlite3.connect(os.path.join(folder, "groups.sqlite"))
        try:
            db.execute("PRAGMA journal_mode = OFF")
            db.execute("PRAGMA synchronous = OFF")
            db.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, prompt BLOB NOT NULL, item BLOB NOT NULL)")
            db.executemany("INSERT INTO rows (prompt, item) VALUES (?, ?)",
                           ((_digest(item), pickle.dumps(tuple(item))) for item in items))
            db.execute("CREATE INDEX rows_by_prompt ON rows (prompt, seq)")
            db.commit()
            cursor = db.execute(
                "SELECT first.seq, rows.item FROM rows JOIN "
                "(SELECT prompt, MIN(seq) AS seq FROM rows GROUP BY prompt) AS first ON rows.prompt = first.prompt "
                "ORDER BY first.seq, rows.seq"
            )
            for _, records in itertools.groupby(cursor, key=operator.itemgetter(0)):
                yield [Item(*pickle.loads(blob)) for _, blob in records]
        finally:
            db.close()


def _digest(item: Item) -> bytes:
    """A collision-safe identity of the row's prompt (spilled groups must never merge two prompts)."""
    return hashlib.blake2b(prompt_key(item.row["prompt"]).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _snippet(key: str, width: int = 60) -> str:
    text = key.replace("\x1e", " | ").replace("\x1f", ": ")
    return repr(text if len(text) <= width else text[: width - 3] + "...")
