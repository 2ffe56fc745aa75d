"""rewardhub on Ray: offline scoring with Ray Data, and a pool of reward actors for CPU-heavy rewards.

    import ray, rewardhub.ray
    ds = ray.data.read_parquet("rollouts/")
    scored = rewardhub.ray.score_dataset(ds, "rewards.yaml", concurrency=8)
    scored.write_parquet("scored/")          # `rewardhub pairs scored/ ...` reads the folder as it is

Each actor of :class:`RewardScorer` builds the reward set once (worker pools, sandbox zygotes, judge
clients and reward models load once per actor, not per batch). A prompt's completions always meet in
one batch, so group rewards see whole groups (:mod:`.grouping`). The scored rows carry the same columns
as ``rewardhub score`` writes: ``rewards``, ``reward``, ``reasons``, ``outcomes``, ``seconds``.
:class:`RewardActors` is a pool of actors holding the reward set, for callers that score batches
themselves (:mod:`.actors`).

One module per job: :mod:`.cluster` (Ray itself), :mod:`.reading`, :mod:`.grouping`, :mod:`.scoring`,
:mod:`.actors`, :mod:`.writing` (``rewardhub score --ray``). ``ray`` is imported only inside the
functions that need it: ``import rewardhub.ray`` is light.
"""

from .actors import RewardActors, merge_results, shard_by_key
from .cluster import RayUnavailableError, connect, entries_of, quiet_ray, require_ray
from .grouping import (
    GROUP_KEY,
    PROBLEM,
    ROWS_PER_BLOCK,
    _keyed,
    group_chunks,
    group_keys,
    grouped_dataset,
    grouped_table,
    report_bad_rows,
    unscorable,
    whole_group_blocks,
)
from .reading import read_dataset
from .scoring import SCORED_COLUMNS, RewardScorer, score_dataset, scored_columns
from .writing import score_file

__all__ = ["GROUP_KEY", "PROBLEM", "ROWS_PER_BLOCK", "SCORED_COLUMNS", "RayUnavailableError", "RewardActors",
           "RewardScorer", "connect", "entries_of", "group_chunks", "group_keys", "grouped_dataset", "grouped_table",
           "merge_results", "quiet_ray", "read_dataset", "report_bad_rows", "require_ray", "score_dataset",
           "score_file", "scored_columns", "shard_by_key", "unscorable", "whole_group_blocks"]
_ = _keyed  # kept importable as rewardhub.ray._keyed (tests build keyed datasets with it)
