"""Group rows by prompt: a GRPO group is the completions of one prompt, and group-aware rewards
(majority vote, group length shaping) must see it whole. Prompts compare by ``prompt_key``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from .completions import prompt_key

T = TypeVar("T")


def by_prompt(items: Iterable[T], prompt_of: Callable[[T], Any]) -> list[list[T]]:
    """Items grouped by prompt wherever they sit, groups in first-seen order."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(prompt_key(prompt_of(item)), []).append(item)
    return list(groups.values())


def prompt_runs(items: Iterable[T], prompt_of: Callable[[T], Any]) -> Iterator[tuple[str, list[T]]]:
    """Runs of consecutive items with the same prompt, each with its prompt key (one run in memory)."""
    run: list[T] = []
    current = ""
    for item in items:
        key = prompt_key(prompt_of(item))
        if run and key != current:
            yield current, run
            run = []
        run.append(item)
        current = key
    if run:
        yield current, run
