"""Load a model once per reward instance, on first use: building the reward stays cheap and picklable."""

from __future__ import annotations

import threading
from typing import Any

from .loading import RewardModelLoadError

__all__ = ["LazyModel"]


class LazyModel:
    """Mixin for rewards holding a model: ``loaded()`` loads it on first use (``_load``), thread-safely;
    a failed load is remembered and re-raised, so a bad model costs one attempt per process, not one per
    batch; pickled copies load their own."""

    _loaded: Any = None
    _load_error: RewardModelLoadError | None = None

    def _load(self) -> Any:
        raise NotImplementedError

    def loaded(self) -> Any:
        if self._loaded is None:
            with self._load_lock:
                if self._load_error is not None:
                    raise self._load_error
                if self._loaded is None:
                    try:
                        self._loaded = self._load()
                    except RewardModelLoadError as exc:
                        self._load_error = exc
                        raise
        return self._loaded

    @property
    def _load_lock(self) -> threading.Lock:
        lock = self.__dict__.get("_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_lock", threading.Lock())
        return lock

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())  # type: ignore[misc]  # a copy: the instance keeps its model
        state["_loaded"] = state["_load_error"] = None  # each process loads its own copy on first use
        state.pop("_lock", None)
        return state
