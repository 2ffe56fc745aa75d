"""Which rows form a group, decided here for every caller (the set, file scoring, Ray, the server's
assembler, the router, the shims, the hacking monitor): a row's ``group`` value when it has one (verl's
``uid``, a client's key), else its prompt (compared by ``prompt_key``), else the row alone. A GRPO group
is the completions of one prompt, and group-aware rewards (majority vote, group length shaping) must see
it whole."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar

from ..completions import prompt_key

__all__ = ["GROUP_FIELD", "by_prompt", "group_key", "prompt_runs"]

T = TypeVar("T")
GROUP_FIELD = "group"  # a row's own group key; default: its prompt


def group_key(group: Any, prompt: Any, alone: Hashable) -> Hashable:
    """A row's group: ``group`` as text when given, else its prompt's key, else ``alone`` (a key of its own)."""
    if group is not None:
        return str(group)
    if prompt is not None:
        return prompt_key(prompt)
    return alone


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
