"""Compose rewards from a config: weights (fixed or scheduled) for TRL, gates, routes, shared verdicts, the
aggregate (``sum`` / ``normalize_then_sum``) and one weighted callable."""

from __future__ import annotations

import asyncio
import contextvars
import difflib
import time
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from .._aio import submit
from .._batch import Batch, Score
from .._call import Call, trainer_call, trainer_step
from .._files.rows import scored_rows
from .._registry import registry
from .._reward import BatchResult, Reward, report
from ..errors import ConfigError, RewardInputError, UnknownRewardError, shown
from . import aggregate as _aggregate
from .config import RewardEntry, SetConfig, read_config
from .groups import GROUP_FIELD, group_key
from .pass_at_k import with_pass_at_k
from .rescue import rescued
from .scorers import gated, routed

__all__ = [
    "AsyncEntryReward",
    "EntryReward",
    "MAX_GROUP_ROWS",
    "Member",
    "RewardSet",
    "SetResult",
    "WeightedReward",
    "load",
    "prompt_groups",
    "route_applies",
]

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


class WeightedReward:
    """All rewards of a set as one callable returning the set's total; components are logged.

    For trainers that take a single reward function (verl, OpenRLHF, PPO loops) or ignore
    ``reward_weights`` (TRL's async GRPO). The total follows the set's ``aggregate`` and weights at
    the trainer's step; an abstaining component counts at its prompt group's floor (``aggregate``); a
    sample whose every component abstained on its whole group gets ``None``. Picklable (a copy rebuilds
    nothing: it holds the set).
    """

    is_async = False
    needs_groups = False
    watched = False

    def __init__(self, rewards: RewardSet, name: str = "rewardhub"):
        self.rewards = rewards
        self.__name__ = name

    def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        batch = Batch.from_call(prompts, completions, kwargs, self.__name__)
        call = trainer_call(self, batch, kwargs)
        result = self.rewards.evaluate_batch(batch, call=call)
        log_metric, log_extra = call.log_metric, call.log_extra
        for alias, component in result.components.items():
            present = [v for v in component.values if v is not None]
            if log_metric is not None:
                if present:
                    log_metric(f"{alias}/mean", sum(present) / len(present))
                log_metric(f"{alias}/abstained", 1 - len(present) / max(len(component.values), 1))
            if log_extra is not None:
                log_extra(f"{alias}/reason", component.reasons)
                log_extra(f"{alias}/outcome", component.outcomes)
        if log_metric is not None:
            self.rewards.log_weights(result.weights, log_metric)
        self.rewards.notify(result.step, batch, result.components, log_metric, log_extra=log_extra)
        return result.totals

    def evaluate(self, prompts: Any = None, completions: Any = None, **columns: Any) -> BatchResult:
        """The totals as scores (no trainer logging)."""
        return self.evaluate_batch(Batch.from_call(prompts, completions, columns, self.__name__))

    def evaluate_batch(self, batch: Batch, call: Call | None = None) -> BatchResult:
        start = time.perf_counter()
        totals = self.rewards.evaluate_batch(batch, call=call).totals
        return BatchResult([Score(t) for t in totals], time.perf_counter() - start, 0)

    def __repr__(self) -> str:
        return f"<WeightedReward {self.__name__!r} of {', '.join(self.rewards.aliases)}>"


class EntryReward:
    """One entry of a set as TRL calls it (``RewardSet.reward_funcs``): the entry's reward, plus its schedule.

    TRL's ``reward_weights`` are fixed, so a scheduled entry scales its own values by its weight at
    ``trainer_state.global_step`` (TRL's weight for it is 1.0) and logs the weight as
    ``<alias>/weight`` and its unscaled mean as ``<alias>/mean``. Every call is reported to the set's
    watchers (the hacking monitor). Anything else (``evaluate``, ``close``, params) is the reward's own.
    """

    def __init__(self, rewards: RewardSet, member: Member):
        self.rewards = rewards
        self.member = member
        self.__name__ = member.alias

    @property
    def reward(self) -> Reward:
        return self.member.reward

    def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        batch, call = self._call(prompts, completions, kwargs)
        return self._finish(batch, self.reward.evaluate_batch(batch, call), call)

    def _call(self, prompts: Any, completions: Any, kwargs: dict[str, Any]) -> tuple[Batch, Call]:
        batch = Batch.from_call(prompts, completions, kwargs, self.__name__)
        return batch, trainer_call(self, batch, kwargs)

    def _finish(self, batch: Batch, result: BatchResult, call: Call) -> list[float | None]:
        log_metric, step = call.log_metric, call.step
        report(self.__name__, result, call)
        entry = self.member.entry  # TRL would count an abstention as 0: it gets its group's floor
        values = _aggregate.with_floors(result.values, prompt_groups(batch), route_applies(entry, batch))
        if entry.schedule is not None:
            weight = entry.weight_at(step)
            present = [v for v in values if v is not None]
            if log_metric is not None:
                log_metric(f"{entry.alias}/weight", weight)
                if present:
                    log_metric(f"{entry.alias}/mean", sum(present) / len(present))
            values = [None if v is None else weight * v for v in values]
        self.rewards.notify(step, batch, {entry.alias: result}, log_metric, log_extra=call.log_extra)
        return values

    def __getattr__(self, name: str) -> Any:
        if name in ("rewards", "member"):  # not set yet (unpickling): never recurse
            raise AttributeError(name)
        return getattr(self.member.reward, name)

    def __repr__(self) -> str:
        return f"<EntryReward {self.__name__!r}: {self.member.reward!r}>"


class AsyncEntryReward(EntryReward):
    """:class:`EntryReward` for an async reward: TRL awaits it alongside its other async rewards."""

    async def __call__(self, prompts: Any = None, completions: Any = None, **kwargs: Any) -> list[float | None]:
        batch, call = self._call(prompts, completions, kwargs)
        return self._finish(batch, await self.reward.aevaluate_batch(batch, call), call)


def prompt_groups(batch: Batch) -> list[list[int]]:
    """The rows of each prompt (a row without a prompt is a group of its own): where an abstention finds its floor."""
    groups = batch.groups()
    alone = [i for i, prompt in enumerate(batch.prompts) if prompt is None]
    if not alone:
        return groups
    return [g for g in groups if batch.prompts[g[0]] is not None] + [[i] for i in alone]


def route_applies(entry: RewardEntry, batch: Batch) -> list[bool] | None:
    """The rows ``entry``'s route lets through (``None``: no route, every row)."""
    return None if entry.when is None else entry.when.applies(batch, entry.where)


@dataclass(frozen=True)
class SetResult:
    """A batch scored by a whole set: per-sample totals (``None`` where every reward abstained), each
    member's result by alias (``result["math"]``), and the weights and trainer step the totals used
    (``weights`` is ``None`` when rows of the batch were scored at different steps). When the rows'
    prompt groups were given, ``group_floors[alias][i]`` is the lowest value of that reward over row i's group,
    at most 0.0 (``None`` where it abstained on the whole group): what an abstention counts as (verl's GDPO fill)."""

    totals: list[float | None]
    components: dict[str, BatchResult]
    weights: dict[str, float] | None = None
    step: float | None = None
    group_floors: dict[str, list[float | None]] | None = None
    row_weights: list[dict[str, float]] | None = None  # each row's weights (alias -> weight) at its step
    # With the groups given, ``group_ranges[alias][i]``: (lowest, highest) of that reward over row i's group (what
    # dynamic sampling's "flat group" test reads; ``None`` where it abstained on the whole group).
    group_ranges: dict[str, list[tuple[float, float] | None]] | None = None

    def weights_of(self, index: int) -> dict[str, float]:
        """The weights row ``index`` was totalled with (the set's weights at that row's step)."""
        if self.row_weights is not None:
            return self.row_weights[index]
        if self.weights is None:
            raise ValueError("this result holds no weights")
        return self.weights

    def __getitem__(self, alias: str) -> BatchResult:
        return self.components[alias]

    def component_values(self) -> dict[str, list[float | None]]:
        return {alias: r.values for alias, r in self.components.items()}

    def component_reasons(self) -> dict[str, list[str]]:
        return {alias: r.reasons for alias, r in self.components.items()}


def _evaluate_all(scorers: list[Any], batch: Batch, call: Call | None) -> list[BatchResult]:
    """Evaluate several scorers on one batch: async ones concurrently on the loop, sync ones meanwhile."""
    pending = {i: submit(r.aevaluate_batch(batch, call)) for i, r in enumerate(scorers) if r.is_async}
    results: list[BatchResult | None] = [None] * len(scorers)
    for i, scorer in enumerate(scorers):
        if i not in pending:
            results[i] = scorer.evaluate_batch(batch, call)
    for i, future in pending.items():
        results[i] = future.result()
    return results  # type: ignore[return-value]


async def _aevaluate_all(scorers: list[Any], batch: Batch, executor: Executor | None,
                         call: Call | None) -> list[BatchResult]:
    """``_evaluate_all`` from an event loop: sync scorers in ``executor``, async ones on rewardhub's loop
    (where their clients live), so a slow reward never blocks the caller's loop."""
    loop = asyncio.get_running_loop()
    waits = [  # each sync scorer in a copy of this context of its own (a context is entered by one thread at a time)
        asyncio.wrap_future(submit(r.aevaluate_batch(batch, call))) if r.is_async
        else loop.run_in_executor(executor, contextvars.copy_context().run, r.evaluate_batch, batch, call)
        for r in scorers
    ]
    return list(await asyncio.gather(*waits))


class RewardSet:
    """The rewards of a config, ready for TRL (``reward_funcs`` / ``reward_weights``) or offline scoring.

    The config's ``aggregate``, weight schedules and routes live here, so every caller (TRL, the
    weighted callable, the server, the framework shims) gets the same totals.
    """

    def __init__(self, config: SetConfig | list[RewardEntry], *, default_timeout: float | None = None):
        self.config = config if isinstance(config, SetConfig) else SetConfig(list(config))
        entries = self.config.entries
        self._default_timeout = default_timeout
        bases = {e.alias: _create(e, default_timeout) for e in entries}
        self._bases = bases
        # Which aliases each entry reads the verdicts of (its dependencies, its gate): built first, so that
        # a reward reusing another's verdicts gets that entry's whole scorer (its gate and route included).
        uses: dict[str, list[tuple[str, str | None]]] = {}
        for alias, reward in bases.items():
            for role, target in reward.dependencies().items():
                bound = _in_set(target, entries, f"reward entry {alias!r}, dependency {role!r}")
                uses.setdefault(alias, []).append((bound or target, role))
        for entry in entries:
            if entry.gate is not None:
                bound = _in_set(entry.gate.reward, entries, f"reward entry {entry.alias!r}, gate")
                uses.setdefault(entry.alias, []).append((bound or entry.gate.reward, None))
        _reject_cycles({alias: [t for t, _ in targets if t in bases] for alias, targets in uses.items()})
        self._scorers: dict[str, Any] = {}
        for entry in entries:
            self._scorer(entry.alias, uses)
        self.members = [Member(entry, self._scorers[entry.alias]) for entry in entries]
        self._watchers: list[Any] = []

    def _scorer(self, alias: str, uses: dict[str, list[tuple[str, str | None]]]) -> Any:
        """The entry's scorer: its reward, bound to its dependencies' scorers, behind its gate and route."""
        if alias in self._scorers:
            return self._scorers[alias]
        entry = next(e for e in self.config.entries if e.alias == alias)
        reward = self._bases[alias]
        for target, role in uses.get(alias, ()):
            if role is not None and target in self._bases:
                reward.bind(role, self._scorer(target, uses))
        scorer: Any = reward
        if entry.rescue is not None:  # the rule's plain 0s go to a model verifier (``rescue``)
            verifier = RewardEntry(entry.rescue.name, f"{alias}/rescue", params=entry.rescue.params)
            scorer = rescued(scorer, _create(verifier, None), entry.rescue)
        if entry.gate is not None:
            target = entry.gate.reward
            gate = self._scorer(target, uses) if target in self._bases else \
                _create(RewardEntry(target, target), self._default_timeout)
            scorer = gated(scorer, gate, entry.gate)
        scorer = with_pass_at_k(scorer, entry.pass_at_k)
        if entry.when is not None:
            scorer = routed(scorer, entry.when, entry.where)
        self._scorers[alias] = scorer
        return scorer

    @property
    def entries(self) -> list[RewardEntry]:
        return self.config.entries

    @property
    def aggregate(self) -> str:
        """``sum`` or ``normalize_then_sum`` (the config's top-level ``aggregate``)."""
        return self.config.aggregate

    @property
    def aliases(self) -> list[str]:
        return [m.alias for m in self.members]

    @property
    def reward_funcs(self) -> list[EntryReward]:
        """The reward callables, in config order, for ``GRPOTrainer(reward_funcs=...)``."""
        return [(AsyncEntryReward if m.reward.is_async else EntryReward)(self, m) for m in self.members]

    @property
    def reward_weights(self) -> list[float]:
        """The weights, in the same order, for ``GRPOConfig(reward_weights=...)``: 1.0 for a scheduled
        entry, whose reward applies its weight at the trainer's step itself."""
        return [m.weight for m in self.members]

    @property
    def weighted(self) -> WeightedReward:
        """One callable returning the set's total (for PPO loops, verl, OpenRLHF, async GRPO)."""
        return WeightedReward(self)

    def __getitem__(self, alias: str) -> Any:
        for member in self.members:
            if member.alias == alias:
                return member.reward
        raise KeyError(f"no reward with alias {alias!r} in this set; aliases: {', '.join(self.aliases)}")

    def __iter__(self) -> Iterator[Member]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def weights_at(self, step: float | None = None) -> dict[str, float]:
        """Each alias's weight at trainer step ``step``; raises ``ConfigError`` for a schedule and no step."""
        return {m.alias: m.entry.weight_at(step) for m in self.members}

    def log_weights(self, weights: dict[str, float] | None, log_metric: Any) -> None:
        """Log the scheduled entries' weights as ``<alias>/weight`` (fixed weights are in the config)."""
        for member in self.members:
            if member.entry.schedule is not None and weights is not None:
                log_metric(f"{member.alias}/weight", weights[member.alias])

    def evaluate(self, prompts: Any = None, completions: Any = None, **columns: Any) -> SetResult:
        """Score a batch given as TRL-style arguments (as :meth:`Reward.evaluate` takes them)."""
        return self.evaluate_batch(Batch.from_call(prompts, completions, columns, "rewardhub"))

    def evaluate_batch(self, batch: Batch, *, step: float | None = None,
                       groups: list[list[int]] | None = None, call: Call | None = None) -> SetResult:
        """Every member's result on ``batch`` and the totals (async members run concurrently).

        ``step``: the trainer's step for scheduled weights (default: the call's step, else TRL's
        ``trainer_state``, else a ``step`` column); ``groups``: row indices of each prompt group for
        ``normalize_then_sum`` (default: rows grouped by prompt); ``call``: the caller's context (its
        step and logging hooks; every member keeps its own deadline and settled rows).
        """
        step = step if step is not None or call is None else call.step
        results = _evaluate_all(self.member_rewards, batch, call)
        return self.combine(self._by_alias(results), batch, step=step, groups=groups)

    async def aevaluate_batch(self, batch: Batch, executor: Executor | None = None, *, step: float | None = None,
                              groups: list[list[int]] | None = None, call: Call | None = None) -> SetResult:
        """:meth:`evaluate_batch` for an event loop (the reward server): sync members run in ``executor``."""
        step = step if step is not None or call is None else call.step
        results = await _aevaluate_all(self.member_rewards, batch, executor, call)
        return self.combine(self._by_alias(results), batch, step=step, groups=groups)

    @property
    def member_rewards(self) -> list[Any]:
        """Each entry's scorer (its reward, gated and routed as configured), unscaled: what the set scores with."""
        return [m.reward for m in self.members]

    def _by_alias(self, results: list[BatchResult]) -> dict[str, BatchResult]:
        return {m.alias: r for m, r in zip(self.members, results, strict=True)}

    def combine(self, components: dict[str, BatchResult], batch: Batch, *, step: float | None = None,
                groups: list[list[int]] | None = None) -> SetResult:
        """The :class:`SetResult` of member results on ``batch``: totals by the set's aggregate and weights."""
        steps = _row_steps(batch, step) if self.config.scheduled else [None] * len(batch)
        per_step: dict[Any, dict[str, float]] = {}
        weights = []
        for row_step in steps:
            if row_step not in per_step:
                per_step[row_step] = self.weights_at(row_step)
            weights.append(per_step[row_step])
        values = {alias: r.values for alias, r in components.items()}
        floors = None if groups is None else {alias: _aggregate.group_floors(v, groups) for alias, v in values.items()}
        ranges = None if groups is None else {alias: _aggregate.group_ranges(v, groups) for alias, v in values.items()}
        if groups is None:
            groups = batch.groups() if self.aggregate == "normalize_then_sum" else prompt_groups(batch)
        applies = {m.alias: route_applies(m.entry, batch) for m in self.members if m.entry.when is not None}
        totals = _aggregate.combine(values, weights, self.aggregate, groups, applies)
        single = len(per_step) == 1
        return SetResult(totals, components, next(iter(per_step.values())) if single else None,
                         next(iter(per_step)) if single else None, floors, weights, ranges)

    def watch(self, watcher: Any) -> None:
        """Report what trainers score to ``watcher.observe(step, batch, results, log_metric, keys)`` (the
        hacking monitor): TRL's calls, the weighted callable, the PPO adapter, the server and shims."""
        self._watchers.append(watcher)

    def notify(self, step: float | None, batch: Batch, results: dict[str, BatchResult], log_metric: Any = None,
               keys: Any = None, log_extra: Any = None) -> None:
        """Tell the watchers what was scored (``results``: alias -> result, all or some of the members;
        ``keys``: each row's group, when not its prompt; ``log_extra``: TRL's per-completion logger)."""
        for watcher in self._watchers:
            watcher.observe(step, batch, results, log_metric, keys, log_extra=log_extra)

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
            key = group_key(row.get(GROUP_FIELD), row.get("prompt"), object())
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
        return scored_rows(rows, self.evaluate_batch(Batch.from_rows(rows)))


def _row_steps(batch: Batch, step: float | None) -> list[Any]:
    """The trainer step of each row: ``step``, else TRL's ``trainer_state``, else a ``step`` column, else None."""
    if step is None:
        step = trainer_step(batch)
    if step is not None:
        return [step] * len(batch)
    steps = batch.columns.get("step", [None] * len(batch))
    for i, value in enumerate(steps):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise RewardInputError(f"row {i}: column 'step' is read as the trainer step of scheduled weights and "
                                   f"must be a number, got {type(value).__name__} {shown(value)}")
    return list(steps)


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


def _in_set(target: str, entries: list[RewardEntry], where: str) -> str | None:
    """The alias of the set's entry that ``target`` (an alias, or a registry name used once) refers to;
    None when it is not in the set but installed.

    A name used by several entries is ambiguous (each may have other params): that is a config error,
    and so is a target that is neither in the set nor installed.
    """
    aliases = [e.alias for e in entries]
    if target in aliases:
        return target
    named = [e.alias for e in entries if e.name == target]
    if len(named) > 1:
        raise ConfigError(f"{where}: {target!r} names several entries ({', '.join(named)}); refer to one by its alias")
    if named:
        return named[0]
    if target not in registry:
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
