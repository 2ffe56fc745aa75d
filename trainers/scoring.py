"""Score a batch with a whole reward set: the weighted total and each component, sync or async.

Shared by the HTTP server (async: sync rewards in a thread pool, async ones on rewardhub's loop so
a slow reward never blocks the server's event loop) and the framework shims (sync).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from rewardhub import AsyncReward, Batch, BatchResult, RewardSet
from rewardhub._aio import background_loop
from rewardhub._compose import weighted_totals


@dataclass(frozen=True)
class Scored:
    """A batch's weighted totals (``None`` where every reward abstained) and per-alias results."""

    totals: list[float | None]
    components: dict[str, BatchResult]

    def component_values(self) -> dict[str, list[float | None]]:
        return {alias: r.values for alias, r in self.components.items()}

    def component_reasons(self) -> dict[str, list[str]]:
        return {alias: r.reasons for alias, r in self.components.items()}


def weights_of(rewards: RewardSet) -> dict[str, float]:
    return {m.alias: m.weight for m in rewards.members}


def score(rewards: RewardSet, batch: Batch) -> Scored:
    """Score ``batch`` with every member (async members run concurrently) and add up the weights."""
    components = rewards.evaluate(batch)
    return Scored(weighted_totals(components, weights_of(rewards)), components)


async def score_async(rewards: RewardSet, batch: Batch, executor: Executor | None = None) -> Scored:
    """``score`` for an event loop: sync members in ``executor``, async ones on rewardhub's loop."""
    loop = asyncio.get_running_loop()
    waits = []
    for member in rewards.members:
        reward = member.reward
        if isinstance(reward, AsyncReward):
            future = asyncio.run_coroutine_threadsafe(reward.aevaluate_batch(batch), background_loop())
            waits.append(asyncio.wrap_future(future))
        else:
            waits.append(loop.run_in_executor(executor, reward.evaluate_batch, batch))
    results: Sequence[BatchResult] = await asyncio.gather(*waits)
    components = {m.alias: r for m, r in zip(rewards.members, results, strict=True)}
    return Scored(weighted_totals(components, weights_of(rewards)), components)
