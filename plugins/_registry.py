"""The reward registry: name -> factory(**params) -> reward, filled by the ``register_rewards`` hook."""

from __future__ import annotations

import collections.abc
import contextlib
import inspect
import threading
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ._manager import load_plugins, plugin_source, pm
from .errors import (
    ConfigError,
    DuplicateRewardError,
    PluginLoadError,
    RewardhubError,
    UnknownRewardError,
    number_text_hint,
)

__all__ = [
    "Param",
    "REQUIRED",
    "Registry",
    "RewardSpec",
    "factory_params",
    "get",
    "list_rewards",
    "registry",
    "spec_from_factory",
]

REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """One parameter a reward factory accepts."""

    name: str
    default: Any = REQUIRED
    annotation: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def describe(self) -> str:
        kind = f": {self.annotation}" if self.annotation else ""
        return f"{self.name}{kind}" + ("" if self.required else f" = {self.default!r}")


@dataclass(frozen=True)
class RewardSpec:
    """A registered reward: its factory, the params it takes and the distribution it came from."""

    name: str
    factory: Callable[..., Any]
    description: str
    params: dict[str, Param] = field(default_factory=dict)
    source: str = "rewardhub"

    def create(self, **params: Any) -> Any:
        """Build the reward, checking params against the factory's signature first."""
        self.check_params(params)
        return self.factory(**params)

    def check_params(self, params: dict[str, Any]) -> None:
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise ConfigError(
                f"reward {self.name!r} got unknown param(s) {', '.join(map(repr, unknown))}; "
                f"accepted params: {self.describe_params()}"
            )
        missing = [p.name for p in self.params.values() if p.required and p.name not in params]
        if missing:
            raise ConfigError(f"reward {self.name!r} needs param(s) {', '.join(map(repr, missing))}")
        for key, value in params.items():
            problem = _type_problem(self.factory, key, value, self.params[key].annotation)
            if problem:
                raise ConfigError(f"reward {self.name!r}, param {key!r}: {problem}")

    def describe_params(self) -> str:
        return ", ".join(p.describe() for p in self.params.values()) or "(none)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "params": {
                p.name: {"default": None if p.required else p.default, "required": p.required, "type": p.annotation}
                for p in self.params.values()
            },
            "source": self.source,
        }


def spec_from_factory(factory: Any, source: str) -> RewardSpec:
    """Describe a factory: a ``Reward`` subclass or a ``sample_reward``/``batch_reward`` result."""
    name = getattr(factory, "name", None)
    if not name or not isinstance(name, str):
        raise TypeError(f"{factory!r} has no registry name: give it a `name` attribute")
    description = getattr(factory, "description", "") or _first_line(inspect.getdoc(factory))
    return RewardSpec(name=name, factory=factory, description=description, params=factory_params(factory), source=source)


def factory_params(factory: Any) -> dict[str, Param]:
    """The keyword parameters of a factory (its ``params()`` method, else its signature)."""
    if hasattr(factory, "params") and callable(factory.params):
        return factory.params()
    target = factory.__init__ if inspect.isclass(factory) else factory
    params = {}
    hints = _hints(target)
    for p in inspect.signature(target).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        params[p.name] = Param(p.name, p.default, _annotation_text(hints.get(p.name, p.annotation)))
    return params


def _hints(target: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(target)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        return {}


def _annotation_text(annotation: Any) -> str:
    if annotation is REQUIRED:
        return ""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


_SIMPLE_TYPES = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}
_FRIENDLY = {type(None): "null", list: "list", tuple: "list", dict: "mapping"}  # as a config writer knows them


def _type_problem(factory: Any, key: str, value: Any, annotation_text: str = "") -> str | None:
    """A message when ``value`` clearly does not fit the annotated type of ``key``, else None.

    The resolved annotation is used when the hints resolve; else its text (``"float | None"``), so that
    an unresolvable annotation of another param does not switch the checks off.
    """
    target = factory.__init__ if inspect.isclass(factory) else getattr(factory, "signature_target", factory)
    annotation = _hints(target).get(key)
    allowed = _allowed_types(annotation) if annotation is not None else _allowed_from_text(annotation_text)
    if allowed is None or isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed):
        return None
    names = " or ".join(sorted({_FRIENDLY.get(t, t.__name__) for t in allowed}))
    hint = number_text_hint(value) if float in allowed else ""
    return f"expected {names}, got {type(value).__name__} {value!r}{hint}"


_SEQUENCES = (list, tuple)  # a list param takes a YAML/JSON list; text is never read letter by letter
_CONTAINER_ORIGINS = {list: _SEQUENCES, tuple: _SEQUENCES, collections.abc.Sequence: _SEQUENCES,
                      set: _SEQUENCES, frozenset: _SEQUENCES, dict: (dict,), collections.abc.Mapping: (dict,)}


def _allowed_types(annotation: Any) -> tuple[type, ...] | None:
    """Concrete types accepted by simple annotations (``float``, ``int | None``, ``str``, ``list[str] | None``,
    ``dict[str, float]``), else None (not checked)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        allowed: list[type] = []
        for arg in typing.get_args(annotation):
            one = (type(None),) if arg is type(None) else _allowed_types(arg)
            if one is None:
                return None
            allowed.extend(one)
        return tuple(allowed)
    if annotation in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[annotation]
    return _CONTAINER_ORIGINS.get(typing.get_origin(annotation) or annotation)


_TYPE_NAMES = {"bool": bool, "int": int, "float": float, "str": str}
_CONTAINER_NAMES = {"list": _SEQUENCES, "tuple": _SEQUENCES, "Sequence": _SEQUENCES, "set": _SEQUENCES,
                    "dict": (dict,), "Mapping": (dict,)}


def _allowed_from_text(text: str) -> tuple[type, ...] | None:
    """``_allowed_types`` for an annotation given as text (``"float"``, ``"int | None"``, ``"list[str]"``)."""
    allowed: list[type] = []
    for name in (part.strip() for part in text.split("|")) if text else ():
        container = name.split("[", 1)[0]
        if name == "None":
            allowed.append(type(None))
        elif name in _TYPE_NAMES:
            allowed.extend(_SIMPLE_TYPES[_TYPE_NAMES[name]])
        elif container in _CONTAINER_NAMES and (name == container or name.endswith("]")):
            allowed.extend(_CONTAINER_NAMES[container])
        else:
            return None
    return tuple(allowed) or None


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if text and text.strip() else ""


class Registry:
    """All installed rewards. Filled lazily on first use from every plugin's ``register_rewards``."""

    def __init__(self) -> None:
        self._specs: dict[str, RewardSpec] = {}
        self._filled = False
        self._lock = threading.RLock()

    def _fill(self) -> None:
        if self._filled:
            return
        with self._lock:
            if self._filled:
                return
            load_plugins()
            for impl in pm.hook.register_rewards.get_hookimpls():
                source = plugin_source(impl.plugin)
                try:
                    impl.function(register=lambda factory, _source=source: self.add(factory, source=_source))
                except RewardhubError:
                    raise
                except Exception as exc:  # a plugin bug: say whose, not just where in rewardhub
                    raise PluginLoadError(
                        f"plugin {impl.plugin_name!r} (distribution {source!r}) failed in register_rewards: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
            self._filled = True

    def add(self, factory: Any, *, source: str = "rewardhub", replace: bool = False) -> RewardSpec:
        """Register one factory; a name registered twice is an error naming both distributions
        (``replace=True``: the new factory takes the name)."""
        spec = spec_from_factory(factory, source)
        existing = self._specs.get(spec.name)
        if existing is not None and existing.factory is not factory and not replace:
            raise DuplicateRewardError(
                f"reward {spec.name!r} is registered twice: by {existing.source!r} and by {source!r}. "
                f"Uninstall one of them, or restrict plugins with REWARDHUB_LOAD_PLUGINS."
            )
        self._specs[spec.name] = spec
        return spec

    @contextlib.contextmanager
    def isolated(self) -> Iterator[Registry]:
        """The installed rewards, with what is registered inside the block removed (and what it
        replaced restored) on exit: for tests that register rewards of their own."""
        self._fill()
        with self._lock:
            saved = dict(self._specs)
        try:
            yield self
        finally:
            with self._lock:
                self._specs.clear()
                self._specs.update(saved)

    def spec(self, name: str) -> RewardSpec:
        self._fill()
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownRewardError(name, self._specs) from None

    def create(self, name: str, **params: Any) -> Any:
        return self.spec(name).create(**params)

    def names(self) -> list[str]:
        self._fill()
        return sorted(self._specs)

    def __contains__(self, name: object) -> bool:
        self._fill()
        return name in self._specs

    def __iter__(self) -> Iterator[RewardSpec]:
        self._fill()
        return iter(sorted(self._specs.values(), key=lambda s: s.name))

    def __len__(self) -> int:
        self._fill()
        return len(self._specs)


registry = Registry()


def get(name: str, **params: Any) -> Any:
    """One reward from the registry, ready to hand to a trainer: ``rewardhub.get("math", timeout=5)``."""
    return registry.create(name, **params)


def list_rewards() -> list[dict[str, Any]]:
    """Every installed reward as a dict: name, description, params and source distribution."""
    return [spec.as_dict() for spec in registry]
