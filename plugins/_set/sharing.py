"""Verdict sharing: a reward others depend on remembers its last few batches, so it runs once per batch.

``length_penalty`` reusing ``math``'s verdicts must not verify every answer a second time: the shared
reward keeps a small memo keyed by the batch's full content (never a hash, so two batches never
share a key), safe under the server's threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._live import NoState, env_state
from ..completions import prompt_key

__all__ = ["MEMO_SIZE", "VerdictMemo", "batch_key", "frozen", "live_key"]

if TYPE_CHECKING:
    from .._batch import Batch
    from .._reward import BatchResult

MEMO_SIZE = 4
_SCALARS = frozenset({str, bytes, int, float, bool, type(None)})


class VerdictMemo:
    """The last ``MEMO_SIZE`` results of a reward, by batch content; emptied when pickled."""

    def __init__(self) -> None:
        self._results: OrderedDict[tuple, BatchResult] = OrderedDict()
        self._lock = threading.Lock()

    def recall(self, key: tuple) -> BatchResult | None:
        with self._lock:
            try:
                result = self._results.get(key)
                if result is not None:
                    self._results.move_to_end(key)
            except RecursionError:  # a key nested deeper than Python compares (a hostile body): a miss
                return None
            return result

    def remember(self, key: tuple, result: BatchResult) -> None:
        with self._lock:
            try:
                self._results[key] = result
            except RecursionError:  # such a batch is not remembered; it is scored again if asked again
                return
            while len(self._results) > MEMO_SIZE:
                self._results.popitem(last=False)

    def __reduce__(self) -> tuple:
        return (VerdictMemo, ())  # results belong to this process's batches: a copy starts empty


def batch_key(batch: Batch) -> tuple:
    """The batch's full content as a dict key: texts, prompts, columns, live objects and the batch-level objects."""
    return (
        tuple((t, None) if t is not None else (None, frozen(c)) for t, c in zip(batch.texts, batch.completions, strict=True)),
        tuple(prompt_key(p) for p in batch.prompts),
        tuple(sorted((name, frozen(values)) for name, values in batch.columns.items())),
        # Batch-level objects (trainer_state) are the same object every step: their identity and step
        # keep a result from one step being served at the next (a reward may follow the schedule).
        tuple(sorted((k, id(v), getattr(v, "global_step", None)) for k, v in batch.extras.items())),
        tuple(sorted((name, tuple(map(live_key, values))) for name, values in batch.live.items())),
    )


class _Unmatched:
    """A memo-key part equal only to itself: a batch whose state cannot be read is never served from memory."""

    __slots__ = ()


def live_key(obj: Any) -> tuple:
    """A memo-key part for a live object: its identity and a frozen copy of its state, never the object.

    Identity alone would serve a reused environment's old verdict after its state changed (TRL resets
    the same instances every step); state alone would mix two environments that look alike.
    """
    try:
        state: Any = frozen(env_state(obj))
    except NoState:
        state = _Unmatched() if callable(getattr(obj, "state_dict", None)) else None
    return (type(obj).__qualname__, id(obj), state)


def frozen(value: Any) -> Any:
    """A hashable, complete stand-in for a column value (``repr`` elides the middle of big arrays).

    Types are part of it (``1``, ``1.0`` and ``True`` are equal in Python but may score differently);
    lists of plain scalars, such as token ids, take a fast path.
    """
    kind = type(value)
    if kind in _SCALARS:
        return (kind, value)
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds <= _SCALARS:
            return (kind, tuple(value), tuple(kinds) if len(kinds) <= 1 else tuple(map(type, value)))
        return (kind, tuple(map(frozen, value)))
    if isinstance(value, Mapping):
        return (Mapping, tuple((repr(k), frozen(v)) for k, v in value.items()))
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars, torch tensors
        return frozen(value.tolist())
    return (object, repr(value))
