"""Compose rewards from a config: weights for TRL, gates, shared verdicts, one weighted callable."""

from __future__ import annotations

import asyncio
import difflib
import math
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from ._aio import submit
from ._batch import Batch, Score
from ._config import TOTAL, Gate, RewardEntry, read_config
from ._registry import registry
from ._reward import AsyncReward, BatchResult, Reward, aevaluate_any
from .completions import prompt_key
from .errors import ConfigError, UnknownRewardError

# Rows of one prompt kept in one batch when the batch size is smaller (GRPO groups are 2-64 completions).
MAX_GROUP_ROWS = 1024


@dataclass(frozen=True)
class Member:
    """One reward of a set: its config entry and the reward object handed to the trainer."""

    entry: RewardEntry
    reward: Reward

    @property
    def alias(self) -> str:
        return self.entry.alias

    @property
    def weight(self) -> float:
        return self.entry.weight


_GATE_SAYS = {"abstain": "abstained", "error": "failed", "timeout": "timed out"}


class GatedReward(Reward):
    """``inner`` counts only where ``gate`` passes (value >= threshold); elsewhere ``otherwise``.

    The gate is scored first and ``inner`` only on the rows that pass it (a gated judge sends no
    request for the others), except when ``inner`` needs whole groups or shares its verdicts with
    other rewards: then it scores every row, as those need.
    """

    watched = False  # the inner reward and the gate say for themselves when they are not scoring

    def __init__(self, inner: Reward, gate_reward: Reward, gate: Gate):
        super().__init__(on_error="raise")  # members contain their own errors; what escapes them must propagate
        self.inner = inner
        self.gate_reward = gate_reward.share()
        self.gate = gate
        self.__name__ = inner.__name__

    def score_batch(self, batch: Batch) -> list[Score]:
        missing = self.inner._missing_column(batch)  # then no row can be scored, gated out or not: an error
        if missing is not None:
            return missing
        gate = self.gate_reward.evaluate_batch(batch)
        rows = self._rows_to_score(gate)
        inner = self.inner.evaluate_batch(batch if len(rows) == len(batch) else batch.subset(rows)) if rows else None
        return self._apply_gate(gate, rows, inner)

    def _rows_to_score(self, gate: BatchResult) -> list[int]:
        """Rows ``inner`` must score: those passing the gate, or all when it needs whole groups or shares verdicts."""
        if getattr(self.inner, "needs_groups", False) or self.inner._memo is not None:
            return list(range(len(gate.scores)))
        return [i for i, s in enumerate(gate.scores) if s.value is not None and s.value >= self.gate.threshold]

    def _apply_gate(self, gate: BatchResult, rows: list[int], inner: BatchResult | None) -> list[Score]:
        scored = dict(zip(rows, inner.scores, strict=True)) if inner is not None else {}
        scores = []
        for i, gate_score in enumerate(gate.scores):
            if gate_score.value is None:  # the gate's own failure stays a failure; its abstention an abstention
                outcome = gate_score.outcome if gate_score.outcome in ("error", "timeout") else "abstain"
                reason = f"gate {self.gate.reward!r} {_GATE_SAYS[outcome]}"
                scores.append(Score(None, f"{reason}: {gate_score.reason}".rstrip(": "), None, outcome))
            elif gate_score.value >= self.gate.threshold:
                scores.append(scored[i])
            else:
                reason = f"gated: {self.gate.reward} scored {gate_score.value:g} < {self.gate.threshold:g}"
                scores.append(Score(self.gate.otherwise, reason, False))
        return scores


class AsyncGatedReward(AsyncReward, GatedReward):
    """A gate over an async reward (or an async gate): TRL awaits it alongside its other async rewards."""

    async def score_batch_async(self, batch: Batch) -> list[Score]:
        missing = self.inner._missing_column(batch)
        if missing is not None:
            return missing
        gate = await aevaluate_any(self.gate_reward, batch)
        rows = self._rows_to_score(gate)
        subset = batch if len(rows) == len(batch) else batch.subset(rows)
        inner = await aevaluate_any(self.inner, subset) if rows else None
        return self._apply_gate(gate, rows, inner)


class WeightedReward(Reward):
    """All rewards of a set as one callable returning the weighted sum; components are logged.

    For trainers that take a single reward function (verl, OpenRLHF, PPO loops) or ignore
    ``reward_weights`` (TRL's async GRPO). Abstaining components are skipped like TRL's ``nansum``;
    a sample where every component abstains gets ``None``.
    """

    watched = False  # its members say for themselves when they are not scoring

    def __init__(self, rewards: RewardSet, name: str = "rewardhub"):
        super().__init__(on_error="raise")  # members contain their own errors; what escapes them must propagate
        self.rewards = rewards
        self.__name__ = name

    def score_batch(self, batch: Batch) -> list[Score]:
        return [Score(t) for t in self.rewards.evaluate_batch(batch).totals]

    def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        result = self.rewards.evaluate_batch(Batch.from_call(prompts, completions, kwargs, self.__name__))
        log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
        for alias, component in result.components.items():
            present = [v for v in component.values if v is not None]
            if log_metric is not None:
                if present:
                    log_metric(f"{alias}/mean", sum(present) / len(present))
                log_metric(f"{alias}/abstained", 1 - len(present) / max(len(component.values), 1))
            if log_extra is not None:
                log_extra(f"{alias}/reason", component.reasons)
                log_extra(f"{alias}/outcome", component.outcomes)
        return result.totals


@dataclass(frozen=True)
class SetResult:
    """A batch scored by a whole set: per-sample weighted totals (``None`` where every reward
    abstained) and each member's result by alias (``result["math"]``)."""

    totals: list[float | None]
    components: dict[str, BatchResult]

    @classmethod
    def of(cls, components: dict[str, BatchResult], weights: dict[str, float]) -> SetResult:
        """The result of these components, totalled with these weights (``None`` where all abstained)."""
        return cls(weighted_totals(components, weights), components)

    def __getitem__(self, alias: str) -> BatchResult:
        return self.components[alias]

    def component_values(self) -> dict[str, list[float | None]]:
        return {alias: r.values for alias, r in self.components.items()}

    def component_reasons(self) -> dict[str, list[str]]:
        return {alias: r.reasons for alias, r in self.components.items()}


def weighted_totals(components: dict[str, BatchResult], weights: dict[str, float]) -> list[float | None]:
    """Per-sample weighted sum skipping ``None`` values; ``None`` where every component abstained."""
    n = len(next(iter(components.values())).scores) if components else 0
    totals: list[float | None] = []
    for i in range(n):
        parts = [weights[a] * r.scores[i].value for a, r in components.items() if r.scores[i].value is not None]
        totals.append(math.fsum(parts) if parts else None)
    return totals


def _evaluate_all(rewards: list[Reward], batch: Batch) -> list[BatchResult]:
    """Evaluate several rewards on one batch: async ones concurrently on the loop, sync ones meanwhile."""
    pending = {i: submit(r.aevaluate_batch(batch)) for i, r in enumerate(rewards) if isinstance(r, AsyncReward)}
    results: list[BatchResult | None] = [None] * len(rewards)
    for i, reward in enumerate(rewards):
        if i not in pending:
            results[i] = reward.evaluate_batch(batch)
    for i, future in pending.items():
        results[i] = future.result()
    return results  # type: ignore[return-value]


async def _aevaluate_all(rewards: list[Reward], batch: Batch, executor: Executor | None) -> list[BatchResult]:
    """``_evaluate_all`` from an event loop: sync rewards in ``executor``, async ones on rewardhub's loop
    (where their clients live), so a slow reward never blocks the caller's loop."""
    loop = asyncio.get_running_loop()
    waits = [
        asyncio.wrap_future(submit(r.aevaluate_batch(batch))) if isinstance(r, AsyncReward)
        else loop.run_in_executor(executor, r.evaluate_batch, batch)
        for r in rewards
    ]
    return list(await asyncio.gather(*waits))


class RewardSet:
    """The rewards of a config, ready for TRL (``reward_funcs`` / ``reward_weights``) or offline scoring."""

    def __init__(self, entries: list[RewardEntry], *, default_timeout: float | None = None):
        self.entries = entries
        bases = {e.alias: _create(e, default_timeout) for e in entries}
        alias_of = {id(reward): alias for alias, reward in bases.items()}
        uses: dict[str, list[str]] = {}
        for alias, reward in bases.items():
            for role, target in reward.dependencies().items():
                bound = _in_set(target, entries, bases, f"reward entry {alias!r}, dependency {role!r}")
                if bound is not None:
                    reward.bind(role, bound)
                    uses.setdefault(alias, []).append(alias_of[id(bound)])
        _reject_cycles(uses)
        self.members: list[Member] = []
        for entry in entries:
            reward = bases[entry.alias]
            if entry.gate is not None:
                gate_reward = _in_set(entry.gate.reward, entries, bases, f"reward entry {entry.alias!r}, gate")
                if gate_reward is None:
                    gate_reward = _create(RewardEntry(entry.gate.reward, entry.gate.reward), default_timeout)
                gated = AsyncGatedReward if isinstance(reward, AsyncReward) or isinstance(gate_reward, AsyncReward) \
                    else GatedReward
                reward = gated(reward, gate_reward, entry.gate)
            self.members.append(Member(entry, reward))

    @property
    def aliases(self) -> list[str]:
        return [m.alias for m in self.members]

    @property
    def reward_funcs(self) -> list[Reward]:
        """The reward callables, in config order, for ``GRPOTrainer(reward_funcs=...)``."""
        return [m.reward for m in self.members]

    @property
    def reward_weights(self) -> list[float]:
        """The weights, in the same order, for ``GRPOConfig(reward_weights=...)``."""
        return [m.weight for m in self.members]

    @property
    def weighted(self) -> WeightedReward:
        """One callable returning the weighted total (for PPO loops, verl, OpenRLHF, async GRPO)."""
        return WeightedReward(self)

    def __getitem__(self, alias: str) -> Reward:
        for member in self.members:
            if member.alias == alias:
                return member.reward
        raise KeyError(f"no reward with alias {alias!r} in this set; aliases: {', '.join(self.aliases)}")

    def __iter__(self) -> Iterator[Member]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    @property
    def weights(self) -> dict[str, float]:
        return {m.alias: m.weight for m in self.members}

    def evaluate(self, prompts: Any = None, completions: Any = None, **columns: Any) -> SetResult:
        """Score a batch given as TRL-style arguments (as :meth:`Reward.evaluate` takes them)."""
        return self.evaluate_batch(Batch.from_call(prompts, completions, columns, "rewardhub"))

    def evaluate_batch(self, batch: Batch) -> SetResult:
        """Every member's result on ``batch`` and the weighted totals (async members run concurrently)."""
        return self._result(_evaluate_all(self.reward_funcs, batch))

    async def aevaluate_batch(self, batch: Batch, executor: Executor | None = None) -> SetResult:
        """:meth:`evaluate_batch` for an event loop (the reward server): sync members run in ``executor``."""
        return self._result(await _aevaluate_all(self.reward_funcs, batch, executor))

    def _result(self, results: list[BatchResult]) -> SetResult:
        return SetResult.of({m.alias: r for m, r in zip(self.members, results, strict=True)}, self.weights)

    def score(self, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Score rows (``prompt``, ``completion`` and columns) as one batch; see :meth:`iter_scores`."""
        rows = list(rows)
        return list(self.iter_scores(rows, batch_size=max(len(rows), 1)))

    def iter_scores(self, rows: Iterable[dict[str, Any]], batch_size: int = 256) -> Iterator[dict[str, Any]]:
        """Stream scored rows: each input row plus ``rewards``, ``reward``, ``reasons``, ``outcomes`` and ``seconds``.

        Rows are batched at prompt boundaries so that a prompt's consecutive completions are scored
        together (group-aware rewards see whole groups). Memory stays bounded whatever the input: a
        prompt with more consecutive rows than ``max(batch_size, MAX_GROUP_ROWS)`` is scored in pieces
        (with a warning, since a group-aware reward then sees part of the group).
        """
        group_cap = max(batch_size, MAX_GROUP_ROWS)
        chunk: list[dict[str, Any]] = []
        run = 0  # rows of the current prompt in the chunk
        last_key: object = None
        for row in rows:
            # Rows without a prompt form no group: a unique key lets the chunk end at batch_size.
            key = prompt_key(row["prompt"]) if row.get("prompt") is not None else object()
            run = run + 1 if key == last_key else 1
            if chunk and (len(chunk) >= batch_size and key != last_key or run > group_cap):
                if run > group_cap:
                    _warn_split_group(group_cap)
                    run = 1
                yield from self._score_chunk(chunk)
                chunk = []
            chunk.append(row)
            last_key = key
        if chunk:
            yield from self._score_chunk(chunk)

    def _score_chunk(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        result = self.evaluate_batch(Batch.from_rows(rows))
        per_item = {alias: r.seconds / max(len(rows), 1) for alias, r in result.components.items()}
        return [
            {
                **row,
                "rewards": {alias: r.scores[i].value for alias, r in result.components.items()},
                TOTAL: result.totals[i],
                "reasons": {alias: r.scores[i].reason for alias, r in result.components.items()},
                "outcomes": {alias: r.scores[i].outcome for alias, r in result.components.items()},
                "seconds": per_item,
            }
            for i, row in enumerate(rows)
        ]


def _warn_split_group(cap: int) -> None:
    warnings.warn(
        f"a prompt has more than {cap} consecutive rows: it is scored in pieces of at most {cap}, so group-aware "
        f"rewards (majority_vote, group length modes) see part of its group; a batch size above {cap} keeps "
        f"such groups whole", RuntimeWarning, stacklevel=4,
    )


def _create(entry: RewardEntry, default_timeout: float | None) -> Reward:
    try:
        spec = registry.spec(entry.name)
    except UnknownRewardError as exc:
        raise UnknownRewardError(entry.name, exc.known) from None
    try:
        reward = spec.create(**entry.params)
    except ConfigError as exc:
        raise ConfigError(f"reward entry {entry.alias!r}: {exc}") from None
    reward.__name__ = entry.alias
    reward.batch_timeout = entry.timeout if entry.timeout is not None else default_timeout
    return reward


def _in_set(target: str, entries: list[RewardEntry], bases: dict[str, Reward], where: str) -> Reward | None:
    """The set's reward that ``target`` (an alias, or a registry name used once) refers to; None if not in the set.

    A name used by several entries is ambiguous (each may have other params): that is a config error,
    and so is a target that is neither in the set nor installed.
    """
    if target in bases:
        return bases[target]
    aliases = [e.alias for e in entries if e.name == target]
    if len(aliases) > 1:
        raise ConfigError(f"{where}: {target!r} names several entries ({', '.join(aliases)}); refer to one by its alias")
    if aliases:
        return bases[aliases[0]]
    if target not in registry:
        aliases = [e.alias for e in entries]
        close = difflib.get_close_matches(target, [*aliases, *registry.names()], n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(map(repr, dict.fromkeys(close)))}?" if close else ""
        raise ConfigError(f"{where}: {target!r} is neither an alias of this config ({', '.join(aliases)}) "
                          f"nor an installed reward.{hint}")
    return None


def _reject_cycles(uses: dict[str, list[str]]) -> None:
    """A reward that (through others) reuses its own verdicts would recurse forever: a config error."""

    def visit(alias: str, path: list[str]) -> None:
        if alias in path:
            cycle = " -> ".join([*path[path.index(alias):], alias])
            raise ConfigError(f"rewards reuse each other's verdicts in a cycle: {cycle}; break it in the config")
        for used in uses.get(alias, ()):
            visit(used, [*path, alias])

    for alias in uses:
        visit(alias, [])


def load(config: Any, *, default_timeout: float | None = None) -> RewardSet:
    """Build a :class:`RewardSet` from a config path (.yaml/.yml/.toml/.json), dict or list.

    ``default_timeout``: the batch deadline of entries that set no ``timeout`` of their own.
    """
    return RewardSet(read_config(config), default_timeout=default_timeout)
