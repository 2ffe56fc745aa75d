"""The run behind pairs and selections: read rows, drop invalid ones, score what lacks scores, group, write."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .._files.io import read_rows
from .._files.output import write_rows
from .._set.compose import RewardSet, load
from .._set.groups import prompt_runs
from ..errors import ConfigError
from .grouping import Item, contiguous_groups, in_prompt_order
from .options import TOTAL, Options, PreferenceError, Stats, has_score

__all__ = ["from_rows", "per_prompt", "scored", "valid", "write_file"]


def from_rows(rows: Iterable[Mapping[str, Any]], options: Options, stats: Stats | None,
               unsorted: str) -> Iterator[dict[str, Any]]:
    stats = stats if stats is not None else Stats()
    stats.kind = options.kind
    items = in_prompt_order(valid(rows, stats), unsorted)
    return per_prompt(scored(items, options), options, stats)


def valid(source: str | Path | Iterable[Mapping[str, Any]], stats: Stats, progress: bool = False) -> Iterator[Item]:
    """The rows of ``source`` with a prompt and a completion; the others are counted as ``invalid_row``."""
    for record in read_rows(source, required=("prompt", "completion"), progress=progress):
        stats.rows += 1
        if record.error is not None:
            stats.bad_row(record.where, record.error)
        else:
            yield Item(record.where, record.row)


def scored(items: Iterator[Item], options: Options, rewards: RewardSet | None = None, *,
            rescore: bool = False, batch_size: int = 64) -> Iterator[Item]:
    """Items with every score the options read: reused when present, else computed by ``rewards``.

    Decided per run of one prompt's rows: if any lacks a score the whole run is scored, since
    group-aware rewards (majority vote, group length shaping) must see all of a prompt's
    completions. Runs that need scoring go through :meth:`RewardSet.iter_scores` (batches end at
    prompt boundaries) in order, so output order is input order and memory stays at one batch.
    """
    names = options.score_names

    def has_scores(item: Item) -> bool:
        return all(has_score(item.row, name) for name in names)

    def needs_scores(run: list[Item]) -> bool:
        return rescore or not all(has_scores(item) for item in run)

    runs_by_prompt = (run for _, run in prompt_runs(items, lambda item: item.row["prompt"]))
    for needs, runs in itertools.groupby(runs_by_prompt, key=needs_scores):
        run = itertools.chain.from_iterable(runs)
        if not needs:
            yield from run
        elif rewards is None:
            first = next(item for item in run if not has_scores(item))
            raise PreferenceError(f"{first.where} has no {_missing_scores(first.row, names)}; "
                                  f"pass a reward config (--config) to score raw completions")
        else:
            yield from _score_run(run, rewards, batch_size)


def _score_run(run: Iterable[Item], rewards: RewardSet, batch_size: int) -> Iterator[Item]:
    """Score rows in order, keeping each one's place (scored rows come back in input order)."""
    wheres: deque[str] = deque()

    def rows() -> Iterator[dict[str, Any]]:
        for item in run:
            wheres.append(item.where)
            yield item.row

    for scored in rewards.iter_scores(rows(), batch_size=batch_size):
        yield Item(wheres.popleft(), scored)


def _missing_scores(row: Mapping[str, Any], names: set[str]) -> str:
    missing = sorted(name for name in names if not has_score(row, name))
    rewards = row.get("rewards")
    have = ", ".join(rewards) if isinstance(rewards, Mapping) and rewards else "none"
    parts = [f"'{TOTAL}'" if name == TOTAL else f"score {name!r} in 'rewards' (it has: {have})" for name in missing]
    return " and no ".join(parts)


def per_prompt(items: Iterator[Item], options: Options, stats: Stats) -> Iterator[dict[str, Any]]:
    """The options' output for each prompt group, counted in ``stats``."""
    for group in contiguous_groups(items):
        stats.prompts += 1
        out = options.build([item.row for item in group], stats.dropped)
        if out:
            stats.prompts_written += 1
            stats.written += len(out)
            yield from out


def write_file(input: str | Path, output: str | Path, options: Options, *,
                config: Any, rescore: bool, batch_size: int, unsorted: str, progress: bool) -> Stats:
    if batch_size < 1:
        raise PreferenceError(f"batch_size must be at least 1, got {batch_size}")
    rewards = _reward_set(config, options, rescore)
    stats = Stats(options.kind)
    items = in_prompt_order(valid(input, stats, progress), unsorted)
    items = scored(items, options, rewards, rescore=rescore, batch_size=batch_size)
    write_rows(per_prompt(items, options, stats), output)
    return stats


def _reward_set(config: Any, options: Options, rescore: bool) -> RewardSet | None:
    if config is None:
        if rescore:
            raise PreferenceError("rescoring needs a reward config (--config)")
        return None
    rewards = config if isinstance(config, RewardSet) else load(config)
    unknown = sorted(name for name in options.score_names if name != TOTAL and name not in rewards.aliases)
    if unknown:
        raise ConfigError(f"score(s) {', '.join(map(repr, unknown))} are not in the reward config; "
                          f"its aliases: {', '.join(rewards.aliases)} (or 'reward' for the weighted total)")
    return rewards
