"""rewardhub on Ray: offline scoring with Ray Data, and a pool of reward actors for CPU-heavy rewards.

    import ray, rewardhub.ray
    ds = ray.data.read_parquet("rollouts/")
    scored = rewardhub.ray.score_dataset(ds, "rewards.yaml", concurrency=8)
    scored.write_parquet("scored/")          # `rewardhub pairs scored/ ...` reads the folder as it is

Each actor of :class:`RewardScorer` builds the reward set once (worker pools, sandbox zygotes,
judge clients and reward models load once per actor, not per batch). A prompt's completions always
meet in one batch, so group rewards (``majority_vote``, group length modes) see whole groups: rows
the driver holds (a JSONL file) are sorted into blocks of whole groups there (:func:`grouped_dataset`,
no shuffle); any other Dataset is checked for blocks of whole groups (only the keys reach the
driver) and hash-partitioned by group key when a group spans two blocks. The scored rows carry
the same columns as ``rewardhub score`` writes: ``rewards``, ``reward``, ``reasons``, ``outcomes``,
``seconds``.

:class:`RewardActors` is a pool of actors holding the reward set, for callers that score batches
themselves (verl's reward manager, :mod:`rewardhub.trainers.verl_manager`) and want CPU-heavy rewards
spread over the cluster.

``ray`` is imported only inside the functions that need it: ``import rewardhub.ray`` is light.
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._batch import Batch
from ._files.io import iter_input, parquet_parts
from ._files.output import replacing, write_rows
from ._files.score_file import RewardStats
from ._files.tables import DecodedColumns, rows_table, table_rows
from ._reward import BatchResult
from ._set.by_group import evaluate_by_group
from ._set.compose import RewardSet, SetResult
from ._set.config import TOTAL, RewardEntry, read_config
from .completions import is_conversational, prompt_key
from .episode import split_messages
from .errors import ConfigError, InputFileError, OutputFileError, RewardhubError

GROUP_KEY = "__rewardhub_group"
PROBLEM = "__rewardhub_problem"  # why a row cannot be scored (null: it can), marked before the grouping
SCORED_COLUMNS = ("rewards", TOTAL, "reasons", "outcomes", "seconds")
ROWS_PER_BLOCK = 4096  # target rows per hash partition: whole groups, a few scoring batches each


class RayUnavailableError(RewardhubError, ImportError):
    """``ray`` (with Ray Data) is not installed."""


def require_ray():
    """The ``ray`` module, or :class:`RayUnavailableError` saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data is an extra of ray)
    except ImportError as exc:
        raise RayUnavailableError(f"rewardhub.ray needs Ray Data: pip install 'rewardhub[ray]' ({exc})") from None
    return ray


def entries_of(config: Any) -> list[RewardEntry]:
    """The config read once on the driver: actors on other machines get entries, not a local path."""
    if isinstance(config, RewardSet):
        return list(config.entries)
    if isinstance(config, list) and config and all(isinstance(e, RewardEntry) for e in config):
        return config
    return read_config(config)


class RewardScorer:
    """Ray Data's stateful callable for ``map_batches``: one reward set per actor, whole groups per call.

    Takes a ``pyarrow.Table`` holding whole groups (see :func:`score_dataset`) and returns it with
    the scored columns appended; rows are reordered so each group's rows are consecutive. Rewards get
    the rows as ``rewardhub score`` reads them from Parquet: JSON columns (``arrow.json``, how rewardhub
    stores mixed shapes such as text and chat-message completions) decoded to their values.
    """

    def __init__(self, entries: list[RewardEntry], batch_size: int = 256, default_timeout: float | None = None):
        self.rewards = RewardSet(entries, default_timeout=default_timeout)
        self.batch_size = batch_size

    def __call__(self, table):
        import pyarrow as pa
        import pyarrow.compute as pc

        if GROUP_KEY in table.column_names:  # keyed by score_dataset, rows it cannot score marked
            table = table.filter(pc.is_null(table.column(PROBLEM))).drop_columns([PROBLEM])
            keys = table.column(GROUP_KEY).to_pylist()
            table = table.drop_columns([GROUP_KEY])
        else:  # a block of whole groups (grouped_dataset, which left out and reported the rows it cannot score)
            keys = group_keys(table)
        order = sorted(range(len(keys)), key=keys.__getitem__)  # stable: a group keeps its rows' order
        table = table.take(pa.array(order, type=pa.int64()))
        rows, keys = list(table_rows(table)), [keys[i] for i in order]
        scored: list[dict[str, Any]] = []
        for start, end in group_chunks(keys, self.batch_size):
            scored += self.rewards.score(rows[start:end])
        for name, column in scored_columns(self.rewards.aliases, scored).items():
            table = table.append_column(name, column)
        return table


def group_chunks(keys: Sequence[str], batch_size: int) -> list[tuple[int, int]]:
    """``(start, end)`` of scoring batches over rows sorted by group key: each ends at a group
    boundary once it holds ``batch_size`` rows, so no batch holds part of a group."""
    chunks, start = [], 0
    for i in range(1, len(keys) + 1):
        if i == len(keys) or (i - start >= batch_size and keys[i] != keys[i - 1]):
            chunks.append((start, i))
            start = i
    return chunks


def scored_columns(aliases: Sequence[str], scored: list[dict[str, Any]]) -> dict[str, Any]:
    """The scored columns as Arrow arrays with fixed types (a batch where a reward always abstained
    still has a ``float64`` column, so every block has one schema)."""
    import pyarrow as pa

    def struct(name: str, kind: Any) -> Any:
        fields = pa.struct([(alias, kind) for alias in aliases])
        return pa.array([{a: _finite(row[name][a]) if kind == pa.float64() else row[name][a] for a in aliases}
                         for row in scored], type=fields)

    return {
        "rewards": struct("rewards", pa.float64()),
        TOTAL: pa.array([_finite(row[TOTAL]) for row in scored], type=pa.float64()),
        "reasons": struct("reasons", pa.string()),
        "outcomes": struct("outcomes", pa.string()),
        "seconds": struct("seconds", pa.float64()),
    }


def _finite(value: Any) -> float | None:
    return value if value is None or math.isfinite(value) else None


def group_keys(table, columns: DecodedColumns | None = None) -> list[str]:
    """Each row's group key: its ``group`` column if it has one, else its prompt (``prompt_key`` of
    the decoded value); ``columns``: the table's, where they were decoded already."""
    columns = columns if columns is not None else DecodedColumns(table)
    names = table.column_names
    if "completion" not in names and "messages" not in names:
        raise ConfigError(f"rows need a 'completion' column (or an episode's 'messages') to be scored; "
                          f"the dataset has {names}")
    groups = columns["group"] if "group" in names else [None] * len(table)
    prompts = columns["prompt"] if "prompt" in names else _episode_prompts(table, columns)
    return [str(g) if g is not None else prompt_key(p) if p is not None else f"\x00row{id(table)}:{i}"
            for i, (g, p) in enumerate(zip(groups, prompts, strict=True))]


def _episode_prompts(table, columns: DecodedColumns) -> list[Any]:
    """Each row's prompt where the table has no ``prompt`` column: an episode's (``messages`` and no
    ``completion``) is its messages before the first assistant message, as rewards see it (``Batch``)."""
    import pyarrow.compute as pc

    names = table.column_names
    if "messages" not in names:
        return [None] * len(table)
    messages = columns["messages"]
    completions = pc.is_valid(table.column("completion")).to_pylist() if "completion" in names else [False] * len(table)
    return [split_messages(m)[0] if not has and is_conversational(m) else None
            for m, has in zip(messages, completions, strict=True)]


def unscorable(table, columns: DecodedColumns) -> dict[int, str]:
    """The rows of ``table`` (its ``columns``) that cannot be scored, by index, each with why (as
    ``rewardhub score`` says it): a JSON value that does not decode, or neither a ``completion`` nor
    an episode's chat ``messages``."""
    import pyarrow.compute as pc

    problems = columns.errors()
    names = table.column_names
    if "completion" in names:
        missing = [i for i, ok in enumerate(pc.is_valid(table.column("completion")).to_pylist()) if not ok]
    else:
        missing = list(range(len(table)))
    if missing:
        messages = columns["messages"] if "messages" in names else [None] * len(table)
        fields = ", ".join(sorted(names)) or "none"
        for i in missing:
            if i not in problems and not is_conversational(messages[i]):
                problems[i] = f"no 'completion' (fields: {fields})"
    return problems


def _keyed(table):
    """``table`` with each row's group key and, for a row that cannot be scored, why (:func:`unscorable`)."""
    import pyarrow as pa

    columns = DecodedColumns(table)
    problems = unscorable(table, columns)
    return (table.append_column(GROUP_KEY, pa.array(group_keys(table, columns), type=pa.string()))
            .append_column(PROBLEM, pa.array([problems.get(i) for i in range(len(table))], type=pa.string())))


def _problems_only(table):
    import pyarrow.compute as pc

    return table.select([PROBLEM]).filter(pc.is_valid(table.column(PROBLEM)))


def report_bad_rows(problems: Sequence[tuple[int, str]], bad_rows: list[tuple[int, str]] | None) -> None:
    """Rows left out of scoring, as ``(row number, why)`` (0: the number is not known): each said on
    stderr, as ``rewardhub score`` says a row it skips, and added to ``bad_rows`` where given."""
    if bad_rows is not None:
        bad_rows.extend(problems)
    for number, why in problems:
        print(f"rewardhub: {f'row {number}' if number else 'a row'}: {why}; row skipped", file=sys.stderr)


def grouped_dataset(rows: Sequence[dict[str, Any]], blocks: int, bad_rows: list[tuple[int, str]] | None = None) -> Any:
    """Rows held here as a Ray Dataset of about ``blocks`` blocks (more for large inputs: about
    ``ROWS_PER_BLOCK`` rows each), each of whole groups (sorted by group key on the driver):
    :func:`score_dataset` with ``grouped=True`` scores it without a shuffle.

    The columns are typed as rewardhub types a Parquet file it writes: a column of mixed shapes (text
    and chat messages, numbers and text) is JSON, decoded back to the values for the rewards. Rows
    that cannot be scored (:func:`unscorable`) are left out and reported (:func:`report_bad_rows`)."""
    return grouped_table(rows_table(rows), blocks, bad_rows)


def grouped_table(table: Any, blocks: int, bad_rows: list[tuple[int, str]] | None = None) -> Any:
    """An Arrow table held here as a Ray Dataset of blocks of whole groups, as :func:`grouped_dataset`."""
    ray = require_ray()
    import pyarrow as pa

    columns = DecodedColumns(table)
    problems, keys = unscorable(table, columns), group_keys(table, columns)
    if problems:
        report_bad_rows([(i + 1, why) for i, why in sorted(problems.items())], bad_rows)
        kept = [i for i in range(len(table)) if i not in problems]
        table, keys = table.take(pa.array(kept, type=pa.int64())), [keys[i] for i in kept]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    table, keys = table.take(pa.array(order, type=pa.int64())), [keys[i] for i in order]
    size = max(1, math.ceil(len(keys) / max(1, blocks, math.ceil(len(keys) / ROWS_PER_BLOCK))))
    return ray.data.from_arrow([table.slice(start, end - start) for start, end in group_chunks(keys, size)]
                               or [table])  # no row to score: one empty block


def _actor_pool(ray: Any, concurrency: int | tuple[int, int]) -> Any:
    low, high = (concurrency, concurrency) if isinstance(concurrency, int) else concurrency
    return ray.data.ActorPoolStrategy(min_size=low, max_size=high)


def score_dataset(
    ds: Any, config: Any, *, batch_size: int = 256, concurrency: int | tuple[int, int] = 1, num_cpus: float = 1,
    partitions: int | None = None, default_timeout: float | None = None, grouped: bool = False,
    bad_rows: list[tuple[int, str]] | None = None, **map_options: Any,
) -> Any:
    """Score a Ray Dataset of rows (``prompt``, ``completion`` and columns) with ``config``.

    The grouping (reading ``ds``, and a shuffle if one is needed) runs now; the scoring is lazy, like
    any Ray Data transform (it runs when the result is written or iterated). ``grouped=True`` says each
    block of ``ds`` already holds whole groups (:func:`grouped_dataset`): nothing is checked or moved.

    ``concurrency`` actors (a number, or ``(min, max)`` for autoscaling) each hold one reward set;
    ``num_cpus`` is reserved per actor (a reward that runs its own worker pool may want more).
    No group is ever split: when the blocks of ``ds`` already hold whole groups (no group key, the
    ``group`` column else the prompt, in two blocks: a prompt's completions kept together, as
    ``rewardhub score`` and trainers write them), large blocks are only cut at group boundaries, at
    least two pieces per actor (:func:`whole_group_blocks`); otherwise rows are hash-partitioned by
    group key into ``partitions`` blocks (default: about ``ROWS_PER_BLOCK`` rows each, at least two per
    actor), a shuffle. Rows that cannot be scored (:func:`unscorable`: JSON that does not decode,
    neither a ``completion`` nor an episode's ``messages``) are left out, as ``rewardhub score`` skips
    them, and reported: said on stderr, and added to ``bad_rows`` where given.
    ``map_options`` go to ``map_batches`` (e.g. ``resources``, ``runtime_env``).
    """
    ray = require_ray()
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1; got {batch_size}")
    entries = entries_of(config)
    RewardSet(entries)  # a bad config fails here, on the driver, with its message, not inside an actor
    actors = concurrency if isinstance(concurrency, int) else max(concurrency)
    if not grouped:
        light = {"batch_format": "pyarrow", "batch_size": None, "zero_copy_batch": True}
        # Materialized before the actors start: they may hold every CPU of the cluster (2 actors on 2 cores),
        # and a streaming read or shuffle waiting for a CPU behind them would never run. Ray spills to disk
        # what does not fit in the object store.
        keyed = ds.map_batches(_keyed, **light).materialize()
        report_bad_rows([(0, row[PROBLEM]) for row in keyed.map_batches(_problems_only, **light).take_all()],
                        bad_rows)
        ds = whole_group_blocks(ray, keyed, pieces=2 * actors)
        if ds is None:
            ds = _shuffled(keyed, partitions or max(2 * actors, math.ceil(keyed.count() / ROWS_PER_BLOCK)))
    return ds.map_batches(
        RewardScorer, fn_constructor_kwargs={"entries": entries, "batch_size": batch_size,
                                             "default_timeout": default_timeout},
        batch_format="pyarrow", batch_size=None, compute=_actor_pool(ray, concurrency), num_cpus=num_cpus, **map_options,
    )


def whole_group_blocks(ray: Any, keyed: Any, pieces: int) -> Any:
    """``keyed`` (materialized, with a group key column) as a Dataset of blocks of whole groups without
    a shuffle, when no group has rows in two of its blocks (rollouts usually keep a prompt's completions
    together), else None. Only the keys come to the driver; a block larger than ``1/pieces`` of the rows
    (or ``ROWS_PER_BLOCK``) is cut at group boundaries where it lies, so that every actor has work."""
    refs = [ref for bundle in keyed.iter_internal_ref_bundles() for ref in bundle.block_refs]
    owner: dict[str, int] = {}
    sizes = []
    for index, (keys, rows) in enumerate(ray.get([ray.remote(_block_keys).remote(ref) for ref in refs])):
        if any(owner.setdefault(key, index) != index for key in keys):
            return None
        sizes.append(rows)
    target = max(1, min(ROWS_PER_BLOCK, math.ceil(sum(sizes) / max(1, pieces))))
    split = ray.remote(_split_block)
    blocks = []
    for ref, rows in zip(refs, sizes, strict=True):
        count = math.ceil(rows / target)
        blocks.extend([ref] if count <= 1 else split.options(num_returns=count).remote(ref, count))
    return ray.data.from_arrow_refs(blocks)


def _block_keys(block) -> tuple[set[str], int]:
    return set(block.column(GROUP_KEY).unique().to_pylist()), len(block)


def _split_block(block, count: int) -> tuple[Any, ...]:
    """``block`` sorted by group key (stably) and cut into ``count`` tables of whole groups (some may be empty)."""
    import pyarrow as pa

    keys = block.column(GROUP_KEY).to_pylist()
    order = sorted(range(len(keys)), key=keys.__getitem__)
    block, keys = block.take(pa.array(order, type=pa.int64())), [keys[i] for i in order]
    pieces = [block.slice(start, end - start) for start, end in group_chunks(keys, math.ceil(len(keys) / count))]
    return (*pieces, *[block.slice(0, 0)] * (count - len(pieces)))  # group_chunks makes at most `count`


def _shuffled(keyed: Any, partitions: int) -> Any:
    """``keyed`` hash-partitioned by group key into ``partitions`` blocks (materialized)."""
    try:
        return keyed.repartition(partitions, keys=[GROUP_KEY]).materialize()
    except Exception as exc:
        if "unify schemas" not in str(exc):
            raise
        raise InputFileError(
            "the Dataset's blocks give a column different types (as ray.data.from_items does with rows of "
            "text and chat messages), which Ray cannot shuffle; build it with rewardhub.ray.grouped_dataset(rows), "
            f"or write the rows with `rewardhub score -o x.parquet` first ({str(exc).splitlines()[-1][:300]})") from None


def connect(address: str | None = None, **init_options: Any):
    """``ray.init`` once: ``address`` as Ray takes it (``auto``, ``HOST:PORT``, ``ray://...``); ``None``
    joins the cluster ``RAY_ADDRESS`` names, or starts a local one (``init_options`` go to ``ray.init``).

    Ray gives a local node's raylet a fixed 30 s to come up; on a loaded machine that start is tried
    again, twice, before the error is raised."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    options = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False, **init_options}
    for attempt in range(3):
        try:
            ray.init(address=address, **options)
            return ray
        except Exception as exc:
            ray.shutdown()
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise
    return ray


def read_dataset(input_path: str | Path, summary: Any = None, *, blocks: int = 2, local: bool = False) -> tuple[Any, bool]:
    """The input as a Ray Dataset, and whether its blocks hold whole groups. Parquet files and part
    folders are read by Ray itself (in parallel, on the cluster; grouped later, see
    :func:`score_dataset`), or, on a ``local`` Ray (this machine is the cluster), read here with pyarrow
    and grouped here (Ray's reader took 2 s for a 100 MB file that pyarrow reads here in 0.1 s); JSONL
    and ``datasets`` folders are read here, bad rows reported and skipped exactly as ``rewardhub score``
    does (``summary.bad_rows``), and grouped here into ``blocks`` blocks (:func:`grouped_dataset`)."""
    ray = require_ray()
    bad = summary if summary is not None else _Bad()
    path = Path(input_path)
    if str(input_path) != "-" and (path.suffix.lower() == ".parquet" and path.is_file()
                                   or path.is_dir() and parquet_parts(path)):
        table = _parquet_table(path) if local else None
        if table is not None:
            return grouped_table(table, blocks, bad.bad_rows), True
        return ray.data.read_parquet(str(path.resolve())), False
    from ._files.score_file import _valid_rows

    rows = list(_valid_rows(input_path, bad, progress=False))
    if not rows:
        raise InputFileError(f"{input_path} has no rows to score")
    return grouped_dataset(rows, blocks), True


def _parquet_table(path: Path) -> Any:
    """A Parquet file, or a folder of parts of one schema, as one Arrow table; None for parts of
    different schemas (Ray's reader says what it makes of them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = [path] if path.is_file() else parquet_parts(path)
    try:
        return pa.concat_tables([pq.read_table(part) for part in parts])
    except pa.ArrowInvalid:
        return None


class _Bad:
    def __init__(self):
        self.bad_rows: list[tuple[int, str]] = []


def score_file(
    config: Any, input_path: str | Path, output: str | Path, *, address: str | None = None, batch_size: int = 256,
    concurrency: int | None = None, num_cpus: float = 1,
):
    """``rewardhub score --ray``: score a file on a Ray cluster and write the output by its extension.

    ``.parquet`` is written by the actors as a folder of parts (``pairs``, ``select`` and ``score``
    read such a folder); JSONL and ``datasets`` folders are streamed back and written here. The
    output is replaced only when the run succeeds. Returns a ``ScoreSummary`` of the written rows.
    """
    from ._files.score_file import ScoreSummary, _counted

    if str(output) != "-" and str(input_path) != "-" and Path(output).resolve() == Path(input_path).resolve():
        raise InputFileError(f"the output {output} is the input file: scoring would overwrite it before reading it")
    ray = connect(address)
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
    counted = _counted(rows, summary, input_path)
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


class _SetActor:
    """A Ray actor holding one reward set (its pools, zygotes and models loaded once)."""

    def __init__(self, entries: list[RewardEntry], default_timeout: float | None = None):
        self.rewards = RewardSet(entries, default_timeout=default_timeout)

    def evaluate(self, rows: list[dict[str, Any]], keys: list[Any]) -> SetResult:
        return evaluate_by_group(self.rewards, Batch.from_rows(rows), keys)


class RewardActors:
    """A pool of Ray actors, each holding the reward set: CPU-heavy rewards (sandboxed code, sympy,
    a reward model) scored off the caller's process and spread over the cluster's CPUs.

    :meth:`ascore` splits a batch into ``size`` shards without ever splitting a group (rows with one
    key stay together), scores the shards at once (group rewards one group at a time, see
    :func:`~rewardhub._set.by_group.evaluate_by_group`) and returns one result in the batch's order.
    """

    def __init__(self, config: Any, size: int, *, num_cpus: float = 1, default_timeout: float | None = None):
        ray = require_ray()
        if size < 1:
            raise ConfigError(f"a reward actor pool needs at least one actor; got {size}")
        entries = entries_of(config)
        self.aliases = RewardSet(entries).aliases  # a bad config fails here, not in an actor
        remote = ray.remote(_SetActor).options(num_cpus=num_cpus)
        self.actors = [remote.remote(entries, default_timeout) for _ in range(size)]

    async def ascore(self, batch: Batch, keys: Sequence[Any]) -> SetResult:
        rows = [{**{name: values[i] for name, values in batch.columns.items()},
                 "prompt": batch.prompts[i], "completion": batch.completions[i]} for i in range(len(batch))]
        shards = shard_by_key(keys, len(self.actors))
        results = await asyncio.gather(*(actor.evaluate.remote([rows[i] for i in shard], [keys[i] for i in shard])
                                         for actor, shard in zip(self.actors, shards, strict=False) if shard))
        return merge_results([s for s in shards if s], results, len(batch))

    def close(self) -> None:
        ray = require_ray()
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []


def shard_by_key(keys: Sequence[Any], count: int) -> list[list[int]]:
    """Row indices in ``count`` shards of about equal size; rows with the same key share a shard."""
    groups: dict[Any, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    shards: list[list[int]] = [[] for _ in range(count)]
    for members in sorted(groups.values(), key=len, reverse=True):  # largest first: a balanced greedy fill
        min(shards, key=len).extend(members)
    return shards


def merge_results(shards: list[list[int]], results: Sequence[SetResult], size: int) -> SetResult:
    """One :class:`SetResult` in batch order from the results of the shards (index lists)."""
    totals: list[float | None] = [None] * size
    aliases = list(results[0].components) if results else []
    scores: dict[str, list[Any]] = {alias: [None] * size for alias in aliases}
    for shard, result in zip(shards, results, strict=True):
        for position, i in enumerate(shard):
            totals[i] = result.totals[position]
            for alias in aliases:
                scores[alias][i] = result.components[alias].scores[position]
    components = {alias: BatchResult(scores[alias], max(r.components[alias].seconds for r in results),
                                     sum(r.components[alias].errors for r in results)) for alias in aliases}
    return SetResult(totals, components)
