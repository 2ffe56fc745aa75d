"""Live per-row objects (environments): their JSON snapshot, and a memo key that never holds them.

An environment is a live object of the trainer's process. What may leave that process is its
*state*: ``state_dict()`` when it has one, else its public attributes, made JSON-serialisable.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "NoState", "env_state", "jsonable", "live_objects", "portable_states"]

MAX_DEPTH = 6  # nested objects deeper than this are summarised by their type name
_JSON_SCALARS = (str, int, bool, type(None))


class NoState(Exception):
    """The environment exposes no state; the message says why (it becomes the sample's reason)."""


def env_state(env: Any, lost: list[str] | None = None) -> Any:
    """A JSON-serialisable snapshot of ``env``: ``state_dict()`` if it has one, else its public attributes.

    Raises :class:`NoState` (with the reason) when there is no environment, when ``state_dict()``
    raised, or when the object has neither a ``state_dict()`` nor public data attributes. Values that
    are not JSON data are kept as placeholders (see :func:`jsonable`); ``lost`` collects where.
    """
    if env is None:
        raise NoState("no environment for this rollout")
    state_dict = getattr(env, "state_dict", None)
    if callable(state_dict):
        try:
            return jsonable(state_dict(), lost=lost)
        except Exception as exc:
            raise NoState(f"{type(env).__name__}.state_dict() raised {type(exc).__name__}: {exc}") from None
    public = _public_attributes(env)
    if not public:
        raise NoState(f"environment {type(env).__name__} has no state_dict() and no public attributes")
    return jsonable(public, lost=lost)


def _public_attributes(obj: Any) -> dict[str, Any]:
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:  # __slots__ classes keep their data outside __dict__
        names += [n for n in getattr(cls, "__slots__", ()) if isinstance(n, str)]
    values = {}
    for name in dict.fromkeys(names):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except AttributeError:
            continue
        if not callable(value):
            values[name] = value
    return values


def jsonable(value: Any, depth: int = 0, *, lost: list[str] | None = None, path: str = "state") -> Any:
    """``value`` as JSON data: mappings with text keys, lists, finite numbers, text, bools and None.

    Tuples and sets become lists (sets sorted), arrays and tensors their ``tolist()``, dataclasses
    and plain objects their public fields; a non-finite float becomes ``None``; anything else its
    type name in angle brackets (a live object's ``repr`` may hold addresses or secrets). Each value
    not kept as it was is named in ``lost`` (``"state.total (nan, now null)"``), for the reason a
    reward gives when such a value decides its score.
    """
    if isinstance(value, _JSON_SCALARS):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return _placeholder(None, f"{path} ({value}, now null)", lost)
    if depth >= MAX_DEPTH:
        return _placeholder(f"<{type(value).__name__}>", f"{path} (nested deeper than {MAX_DEPTH})", lost)

    def inner(item: Any, key: Any) -> Any:
        return jsonable(item, depth + 1, lost=lost, path=f"{path}.{key}")

    if isinstance(value, Mapping):
        return {str(k): inner(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [inner(v, i) for i, v in enumerate(value)]
    if isinstance(value, set | frozenset):
        return sorted((inner(v, "<item>") for v in value), key=repr)
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars, torch tensors
        try:
            listed = value.tolist()
        except Exception as exc:
            return _placeholder(f"<{type(value).__name__}>", f"{path} ({type(value).__name__}.tolist() raised "
                                                             f"{type(exc).__name__})", lost)
        return jsonable(listed, depth + 1, lost=lost, path=path)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: inner(getattr(value, f.name), f.name) for f in dataclasses.fields(value)}
    public = _public_attributes(value) if not isinstance(value, type) else {}
    if public:
        return {k: inner(v, k) for k, v in public.items()}
    return _placeholder(f"<{type(value).__name__}>", f"{path} ({type(value).__name__}, not JSON data)", lost)


def _placeholder(value: Any, where: str, lost: list[str] | None) -> Any:
    if lost is not None:
        lost.append(where)
    return value


def live_objects(batch: Any) -> list[Any]:
    """Each row's live object (``env``, else TRL's ``environments``), ``None`` where a row has none."""
    values = batch.live_column("env")
    return list(values) if values is not None else [None] * len(batch)


def portable_states(batch: Any) -> list[Any]:
    """Each row's environment state (JSON data), ``None`` where it has none: what may leave the process."""
    states = []
    for env in live_objects(batch):
        try:
            states.append(env_state(env))
        except NoState:
            states.append(None)
    return states
