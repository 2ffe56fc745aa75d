"""Group assembly: completions of one prompt, collected across one-sample calls, scored as one group.

verl and OpenRLHF send one completion per reward call, so a reward that compares the completions of
a prompt (``majority_vote``, ``length_penalty`` with ``mode: group``) would see groups of one and,
say, give a wrong answer full credit as its own majority. A :class:`GroupAssembler` holds each
arriving completion under its prompt's key until ``group_size`` have arrived, scores the group as
one batch and answers every waiting call. A group still incomplete at its deadline is scored
without the group rewards, which abstain with the reason: nothing ever votes on a fragment.

A waiting call that gives up (its future cancelled: the server cancels the call of a client that
disconnected, see :mod:`.disconnect`) withdraws its completion from its group, so that the client's
retry is counted once; identical completions are legitimate members, so nothing is matched by
content. A completion whose group is already being scored stays in it. :meth:`GroupAssembler.finish`
(a SIGTERM's drain) scores every waiting group at once, as incomplete, instead of at its deadline.

Callers wait on a ``concurrent.futures.Future`` (threads) or ``await`` it (event loops); one
background thread enforces the deadlines and a small pool scores complete groups. It works across
the threads of one process; across processes (several Ray workers) the reward server is the meeting
point: ``rewardhub serve --group-size N``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Hashable, Iterable, Sequence
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rewardhub import (
    Batch,
    BatchResult,
    ConfigError,
    RewardSet,
    Score,
    SetResult,
    group_key,
    needs_groups,
)

from .abstentions import warn_if_all_abstained

__all__ = [
    "CallScorer",
    "DEFAULT_GROUP_TIMEOUT",
    "GroupAssembler",
    "Keyed",
    "SHUTTING_DOWN",
    "SampleResult",
    "StepClock",
    "collect",
    "group_size_for",
    "keyed_rows",
    "score_group",
]

# Below OpenRLHF 0.11.2's 180 s client timeout (openrlhf/utils/agent.py), so a late group is answered
# with abstentions before the client gives up and retries.
DEFAULT_GROUP_TIMEOUT = 120.0
SHUTTING_DOWN = "before the reward server shut down"

Keyed = tuple[Hashable, dict[str, Any]]  # (group key, row with prompt, completion and columns)
SampleResult = tuple[SetResult, int]  # a scored group and the sample's index in it


def group_size_for(rewards: RewardSet, requested: int | None = None) -> int | None:
    """The group size to assemble for ``rewards``: ``requested`` or the group rewards' own ``group_size``.

    ``None`` when no member needs groups and none was requested. Raises :class:`ConfigError` when a
    group reward has no size to go by, or when the sizes disagree.
    """
    if requested is not None and requested < 1:
        raise ConfigError(f"group_size must be a positive number of completions per prompt; got {requested}")
    declared = {m.alias: m.reward.group_size
                for m in rewards.members if needs_groups(m.reward)}
    sizes = {size for size in declared.values() if size is not None}
    if requested is not None:
        clashing = {alias: size for alias, size in declared.items() if size not in (None, requested)}
        if clashing:
            raise ConfigError(f"group_size {requested} disagrees with the config's {_listing(clashing)}")
        return requested
    if len(sizes) > 1:
        raise ConfigError(f"the group rewards disagree on group_size: {_listing(declared)}")
    if rewards.aggregate == "normalize_then_sum" and not sizes:
        raise ConfigError(
            "aggregate normalize_then_sum normalises each reward within its prompt group, but verl and OpenRLHF "
            "send one completion per call: pass --group-size / group_size (the completions per prompt: OpenRLHF "
            "--rollout.n_samples_per_prompt, verl actor_rollout_ref.rollout.n) so that groups are assembled"
        )
    if declared and not sizes:
        raise ConfigError(
            f"{', '.join(declared)} compare(s) the completions of one prompt, but verl and OpenRLHF send one "
            f"completion per call: set params.group_size to the completions per prompt (OpenRLHF "
            f"--rollout.n_samples_per_prompt, verl actor_rollout_ref.rollout.n), or pass --group-size / group_size"
        )
    return next(iter(sizes), None)


def _listing(sizes: dict[str, int | None]) -> str:
    return ", ".join(f"{alias}: group_size {size}" for alias, size in sizes.items())


def keyed_rows(batch: Batch, keys: Sequence[Hashable] | None = None) -> list[Keyed]:
    """Each row of ``batch`` with its group key (``keys[i]``, by default the row's prompt); its live
    objects (environments) come along, for scoring in this process."""
    keys = keys if keys is not None else [group_key(None, p, f"\x00row:{i}") for i, p in enumerate(batch.prompts)]
    rows = []
    for i, key in enumerate(keys):
        row = {name: values[i] for name, values in (*batch.columns.items(), *batch.live.items())}
        row.update(prompt=batch.prompts[i], completion=batch.completions[i])
        rows.append((key, row))
    return rows


def score_group(rewards: RewardSet, rows: list[dict[str, Any]], incomplete: str | None = None,
                step: float | None = None) -> SetResult:
    """Score one prompt's rows together (one group for ``normalize_then_sum``, at trainer step ``step``);
    with ``incomplete`` (the reason) group rewards abstain."""
    batch = Batch.from_rows(rows)
    whole = [list(range(len(batch)))]
    if incomplete is None:
        return rewards.evaluate_batch(batch, step=step, groups=whole)
    abstained = BatchResult([Score(None, incomplete, outcome="abstain")] * len(batch), 0.0, 0)
    components = {m.alias: abstained if needs_groups(m.reward) else m.reward.evaluate_batch(batch)
                  for m in rewards.members}
    return rewards.combine(components, batch, step=step, groups=whole)


def collect(results: Sequence[SampleResult]) -> SetResult:
    """One :class:`SetResult` for a call's samples, in call order, from the groups they were scored in."""
    groups = list({id(scored): scored for scored, _ in results}.values())
    aliases = list(groups[0].components) if groups else []
    components = {
        alias: BatchResult(
            [scored.components[alias].scores[i] for scored, i in results],
            max(g.components[alias].seconds for g in groups),
            sum(g.components[alias].errors for g in groups),
        )
        for alias in aliases
    }
    floors = ranges = None
    if all(g.group_floors is not None for g in groups):
        floors = {alias: [scored.group_floors[alias][i] for scored, i in results] for alias in aliases}
    if all(g.group_ranges is not None for g in groups):
        ranges = {alias: [scored.group_ranges[alias][i] for scored, i in results] for alias in aliases}
    return SetResult([scored.totals[i] for scored, i in results], components, group_floors=floors,
                     row_weights=[scored.weights_of(i) for scored, i in results], group_ranges=ranges)


@dataclass
class _Group:
    deadline: float
    serial: int
    step: float | None = None  # the trainer step of its first completion (for scheduled weights)
    rows: list[dict[str, Any]] = field(default_factory=list)
    waiters: list[Future] = field(default_factory=list)


class GroupAssembler:
    """Hold completions under their prompt's key until ``group_size`` arrive (or ``timeout`` passes), then score.

    Thread-safe; :meth:`score` blocks the calling thread, :meth:`ascore` awaits. A group's deadline
    starts with its first completion. Arrivals beyond ``group_size`` start the next group of that key.
    """

    def __init__(self, rewards: RewardSet, group_size: int, timeout: float = DEFAULT_GROUP_TIMEOUT, *,
                 threads: int = 4):
        if group_size < 1:
            raise ConfigError(f"group_size must be a positive number of completions per prompt; got {group_size}")
        if not timeout > 0:
            raise ConfigError(f"group_timeout must be a positive number of seconds; got {timeout}")
        self.rewards = rewards
        self.group_size = group_size
        self.timeout = timeout
        self._pending: dict[Hashable, _Group] = {}
        self._deadlines: list[tuple[float, int, Hashable]] = []
        self._serials = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._finishing = False  # set by finish(): every group is scored at once, as incomplete
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rewardhub-groups")
        self._reaper = threading.Thread(target=self._expire, name="rewardhub-group-deadlines", daemon=True)
        self._reaper.start()

    @property
    def pending(self) -> int:
        """Completions waiting for the rest of their group."""
        with self._cond:
            return sum(len(g.rows) for g in self._pending.values())

    def submit(self, key: Hashable, row: dict[str, Any], step: float | None = None) -> Future:
        """Add one completion (scored at trainer step ``step``) to its group; the future resolves to
        ``(scored group, index in it)``. Cancelling it while the group waits withdraws the completion."""
        waiter: Future = Future()
        waiter.add_done_callback(partial(self._withdraw, key))
        with self._cond:
            if self._closed:
                raise RuntimeError("the group assembler is closed")
            group = self._pending.get(key)
            if group is None:
                group = self._pending[key] = _Group(time.monotonic() + self.timeout, next(self._serials), step)
                heapq.heappush(self._deadlines, (group.deadline, group.serial, key))
                self._cond.notify()
            group.rows.append(row)
            group.waiters.append(waiter)
            if len(group.rows) >= self.group_size:
                del self._pending[key]
                self._pool.submit(self._score, group, None)
            elif self._finishing:
                del self._pending[key]
                self._pool.submit(self._score, group, self._incomplete(group, SHUTTING_DOWN))
        return waiter

    def _withdraw(self, key: Hashable, waiter: Future) -> None:
        """Take a cancelled waiter's completion out of its group, if the group is still waiting."""
        if not waiter.cancelled():
            return
        with self._cond:
            group = self._pending.get(key)
            index = next((i for i, w in enumerate(group.waiters) if w is waiter), None) if group else None
            if index is None:  # its group is being scored (or was): it is a member, as it arrived
                return
            del group.rows[index], group.waiters[index]
            if not group.rows:  # its deadline entry is skipped: the key has no group, or a later one
                del self._pending[key]

    def score(self, rows: Iterable[Keyed], step: float | None = None) -> SetResult:
        """Score keyed rows, blocking until each one's group is scored (or its deadline passed)."""
        return collect([waiter.result() for waiter in [self.submit(key, row, step) for key, row in rows]])

    async def ascore(self, rows: Iterable[Keyed], step: float | None = None) -> SetResult:
        """:meth:`score` for an event loop: waits without holding a thread."""
        waiters = [asyncio.wrap_future(self.submit(key, row, step)) for key, row in rows]
        return collect(await asyncio.gather(*waiters))

    def finish(self) -> None:
        """Score every waiting group now as incomplete (its group rewards abstain), and so every later
        arrival: a process that is shutting down answers its callers instead of making them wait for
        group deadlines it will not live to see."""
        with self._cond:
            if self._closed:
                return
            self._finishing = True
            left, self._pending = list(self._pending.values()), {}
            for group in left:
                self._pool.submit(self._score, group, self._incomplete(group, SHUTTING_DOWN))

    def close(self) -> None:
        """Score what is still pending as incomplete, then stop the deadline thread and the pool."""
        with self._cond:
            self._closed = True
            left, self._pending = list(self._pending.values()), {}
            self._cond.notify()
        for group in left:
            self._score(group, self._incomplete(group, SHUTTING_DOWN))
        self._reaper.join(timeout=5)
        self._pool.shutdown(wait=True)

    def _expire(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                while self._deadlines and self._deadlines[0][0] <= now:
                    _, serial, key = heapq.heappop(self._deadlines)
                    group = self._pending.get(key)
                    if group is not None and group.serial == serial:
                        del self._pending[key]
                        self._pool.submit(self._score, group, self._incomplete(group, f"within {self.timeout:g} s"))
                self._cond.wait(self._deadlines[0][0] - now if self._deadlines else None)

    def _incomplete(self, group: _Group, when: str) -> str:
        """The reason group rewards abstain on ``group``, whose completions arrived only ``when``."""
        return (f"incomplete group: {len(group.rows)} of {self.group_size} completions of this prompt arrived "
                f"{when}; group rewards abstain")

    def _score(self, group: _Group, incomplete: str | None) -> None:
        try:
            scored = score_group(self.rewards, group.rows, incomplete, group.step)
        except BaseException as exc:  # every waiter must hear of it, or it would wait forever
            for waiter in group.waiters:
                _resolve(waiter, exception=exc)
            return
        for index, waiter in enumerate(group.waiters):
            _resolve(waiter, result=(scored, index))


def _resolve(waiter: Future, *, result: Any = None, exception: BaseException | None = None) -> None:
    """Answer a waiter unless its caller gave up (a cancelled future cannot take a result)."""
    try:
        if exception is not None:
            waiter.set_exception(exception)
        else:
            waiter.set_result(result)
    except InvalidStateError:
        pass


class CallScorer:
    """Scores one framework call: straight through, or through a :class:`GroupAssembler` when the
    set needs whole groups (see :func:`group_size_for`); a batch where a reward abstained on every
    sample is reported once per reward (:func:`~rewardhub.trainers.abstentions.warn_if_all_abstained`).

    Each call is scored at a trainer step: the one the caller gives (the server's ``step`` field), else
    one counted from the samples scored so far when ``samples_per_step`` is set (see :class:`StepClock`;
    ``clock`` gives one that starts elsewhere or is saved, :mod:`.steps`).
    What was scored is reported to the set's watchers (the hacking monitor) with the call's group keys.
    """

    def __init__(self, rewards: RewardSet, *, group_size: int | None = None,
                 group_timeout: float = DEFAULT_GROUP_TIMEOUT, samples_per_step: int | None = None,
                 clock: StepClock | None = None):
        self.rewards = rewards
        size = group_size_for(rewards, group_size)
        self.assembler = GroupAssembler(rewards, size, group_timeout) if size else None
        self.clock = clock or (StepClock(samples_per_step) if samples_per_step else None)

    def score(self, batch: Batch, keys: Sequence[Hashable] | None = None, step: float | None = None) -> SetResult:
        """Score ``batch`` (blocking); ``keys`` group rows when assembling (default: by prompt)."""
        step = self._step(step, len(batch))
        if self.assembler is None:
            return self._watched(batch, keys, step, self.rewards.evaluate_batch(batch, step=step))
        return self._watched(batch, keys, step, self.assembler.score(keyed_rows(batch, keys), step))

    async def ascore(self, batch: Batch, keys: Sequence[Hashable] | None = None, executor: Any = None,
                     step: float | None = None) -> SetResult:
        """:meth:`score` for an event loop (sync rewards in ``executor`` when not assembling)."""
        step = self._step(step, len(batch))
        if self.assembler is None:
            scored = await self.rewards.aevaluate_batch(batch, executor, step=step)
        else:
            scored = await self.assembler.ascore(keyed_rows(batch, keys), step)
        # the watchers (the hacking monitor) read texts: off the event loop, which keeps serving meanwhile
        return await asyncio.get_running_loop().run_in_executor(executor, self._watched, batch, keys, step, scored)

    def _step(self, step: float | None, samples: int) -> float | None:
        if step is None and self.clock is not None:
            return self.clock.advance(samples)
        return step

    def _watched(self, batch: Batch, keys: Sequence[Hashable] | None, step: float | None,
                 scored: SetResult) -> SetResult:
        warn_if_all_abstained(scored)
        self.rewards.notify(step, batch, scored.components, keys=keys)
        return scored

    def finish_groups(self) -> None:
        """Answer every waiting group now, as incomplete (see :meth:`GroupAssembler.finish`)."""
        if self.assembler is not None:
            self.assembler.finish()

    def close(self) -> None:
        if self.assembler is not None:
            self.assembler.close()


class StepClock:
    """A trainer step counted from samples, for callers that do not send one (verl, OpenRLHF): the
    step is the number of samples scored before this call, divided by ``samples_per_step`` (verl
    data.train_batch_size * actor_rollout_ref.rollout.n; OpenRLHF rollout_batch_size *
    n_samples_per_prompt). Thread-safe."""

    def __init__(self, samples_per_step: int):
        if samples_per_step < 1:
            raise ConfigError(f"samples_per_step must be a positive number of samples; got {samples_per_step}")
        self.samples_per_step = samples_per_step
        self._scored = 0
        self._lock = threading.Lock()

    def advance(self, samples: int) -> int:
        """The step of a call of ``samples`` samples, counting them as scored."""
        with self._lock:
            step = self._scored // self.samples_per_step
            self._scored += samples
            return step
