"""A pool of Ray actors each holding the reward set, for callers that score batches themselves (verl's
reward manager, :mod:`rewardhub.trainers.verl_manager`) and want CPU-heavy rewards spread over the cluster."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from .._batch import Batch
from .._reward import BatchResult
from .._set.by_group import evaluate_by_group
from .._set.compose import RewardSet, SetResult
from .._set.config import RewardEntry
from ..errors import ConfigError
from .cluster import entries_of, require_ray

__all__ = ["RewardActors", "merge_results", "shard_by_key"]


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
