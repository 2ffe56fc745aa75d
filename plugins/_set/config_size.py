"""Refuse configs too large to handle safely, before anything walks them: a YAML alias bomb ("billion
laughs") loads fast, since aliases share one object, but expands exponentially in any repr, copy
or check that walks it. The expanded size is counted without expanding (each shared part once)."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError

__all__ = ["MAX_CONFIG_BYTES", "MAX_CONFIG_NODES", "check_expanded_size", "check_file_size"]

MAX_CONFIG_BYTES = 16 * 1024 * 1024  # a config file; inline data belongs in the dataset's columns
MAX_CONFIG_NODES = 1_000_000  # values in the config written out in full (aliases expanded)


def check_file_size(path: Any, size: int) -> None:
    """Raise :class:`ConfigError` when a config file is larger than ``MAX_CONFIG_BYTES``."""
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is {size} bytes, above the limit of {MAX_CONFIG_BYTES} bytes "
                          f"for a config: keep data (test cases, word lists) in the dataset's columns or a file")


def check_expanded_size(config: Any, where: str = "config") -> None:
    """Raise :class:`ConfigError` when ``config`` written out in full (every alias or shared reference
    expanded) would hold more than ``MAX_CONFIG_NODES`` values, or when it contains itself."""
    sizes: dict[int, int] = {}
    entered: set[int] = set()
    stack = [config]
    while stack:
        node = stack[-1]
        children = _children(node)
        if children is None or id(node) in sizes:
            stack.pop()
            continue
        if id(node) not in entered:  # first visit: its unvisited containers go on top of it
            entered.add(id(node))
            pending = [c for c in children if _children(c) is not None and id(c) not in sizes]
            if any(id(c) in entered for c in pending):  # an entered, unfinished container is an ancestor
                raise ConfigError(f"{where} contains itself (a YAML alias inside its own anchor, or a "
                                  f"self-referencing value): write the value out")
            stack.extend(pending)
            continue
        sizes[id(node)] = size = 1 + sum(sizes.get(id(c), 1) for c in children)
        if size > MAX_CONFIG_NODES:
            raise ConfigError(f"{where} would expand to more than {MAX_CONFIG_NODES:,} values (YAML aliases "
                              f"repeated within one another, an 'alias bomb'?): a config is a few hundred values; "
                              f"write them out, or keep large data in the dataset")
        stack.pop()


def _children(node: Any) -> list[Any] | None:
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    if isinstance(node, list | tuple | set | frozenset):
        return list(node)
    return None
