"""A bounded memo the reward families keep readings and verdicts in: a plain dict, emptied when full."""

from __future__ import annotations

from typing import Any

__all__ = ["Kept"]


class Kept(dict):
    """A memo emptied when full. Unlike an ``lru_cache``, whose key tuples hold every argument (a setting object
    too), entries keyed by texts leave nothing for the garbage collector to walk as the memo grows."""

    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def keep(self, key: object, value: object) -> Any:
        """Remember ``value`` for ``key`` (emptying the memo first when it is full) and return it."""
        if len(self) >= self.size:
            self.clear()
        self[key] = value
        return value
