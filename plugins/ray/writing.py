"""``rewardhub score --ray``: the command's run on a Ray cluster, and its output written in place."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from .._files.io import iter_input
from .._files.output import write_rows
from .._files.score_file import RewardStats, ScoreSummary, count_scored
from .._files.staging import replacing
from .._files.tables import table_rows
from .._set.compose import RewardSet
from ..errors import InputFileError, OutputFileError
from .cluster import connect, entries_of
from .reading import read_dataset
from .scoring import score_dataset

__all__ = ["score_file"]


def score_file(
    config: Any, input_path: str | Path, output: str | Path, *, address: str | None = None, batch_size: int = 256,
    concurrency: int | None = None, num_cpus: float = 1, quiet: bool = False,
):
    """``rewardhub score --ray``: score a file on a Ray cluster and write the output by its extension.

    ``.parquet`` is written by the actors as a folder of parts (``pairs``, ``select`` and ``score``
    read such a folder); JSONL and ``datasets`` folders are streamed back and written here. The
    output is replaced only when the run succeeds. Returns a ``ScoreSummary`` of the written rows.
    ``quiet``: no INFO logs or progress bars from Ray (``-q``).
    """
    if str(output) != "-" and str(input_path) != "-" and Path(output).resolve() == Path(input_path).resolve():
        raise InputFileError(f"the output {output} is the input file: scoring would overwrite it before reading it")
    ray = connect(address, quiet=quiet)
    entries = entries_of(config)
    summary = ScoreSummary(stats={alias: RewardStats() for alias in RewardSet(entries).aliases})
    start = time.perf_counter()
    actors = concurrency or max(1, int(ray.cluster_resources().get("CPU", 1) // num_cpus))
    local = address is None and not os.environ.get("RAY_ADDRESS")  # a Ray on this machine: files read here
    ds, grouped = read_dataset(input_path, summary, blocks=2 * actors, local=local)
    scored = score_dataset(ds, entries, batch_size=batch_size, concurrency=actors, num_cpus=num_cpus, grouped=grouped,
                           bad_rows=summary.bad_rows)
    if str(output) != "-" and Path(output).suffix.lower() == ".parquet":
        _write_parquet_folder(scored, Path(output))
        rows: Any = (record.row for record in iter_input(output))
    else:  # Arrow batches, JSON columns decoded: the rows `rewardhub score` writes
        rows = (row for batch in scored.iter_batches(batch_format="pyarrow", batch_size=None)
                for row in table_rows(batch))
    counted = count_scored(rows, summary, input_path)
    if str(output) != "-" and Path(output).suffix.lower() == ".parquet":
        for _ in counted:
            pass
    else:
        write_rows(counted, output)
    summary.seconds = time.perf_counter() - start
    return summary


def _write_parquet_folder(scored: Any, target: Path) -> None:
    """``write_parquet`` into a staging folder private to this run, renamed into place once every part is written."""
    if not target.parent.is_dir():
        raise OutputFileError(f"cannot write {target}: folder {target.parent} does not exist")
    with replacing(target.resolve()) as staged:
        scored.write_parquet(str(staged))


