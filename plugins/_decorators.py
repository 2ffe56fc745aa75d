"""Write a reward as a plain function: ``sample_reward`` / ``batch_reward`` make it a registry factory.

The function's signature says what it needs::

    @rewardhub.sample_reward(name="shouting")
    def shouting(text, solution, *, min_ratio: float = 0.5):   # text, columns..., *, params
        ...

The first argument is the completion text (a list of texts for ``batch_reward``); further
positional parameters are dataset columns fetched by name (``prompt``, ``completion``,
``completion_ids`` and ``trainer_state`` are also available); keyword-only parameters are the
reward's params; ``**columns`` receives every column. ``async def`` functions make async rewards.

``sample_reward(isolated=True)`` runs each sample in deadline-killed worker processes
(:mod:`rewardhub.workers`) for scorers that may run away (parsers, solvers, huge regexes); such a
reward gains the params ``timeout`` (seconds per sample), ``timeout_score`` and ``workers``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from ._batch import LIVE_COLUMNS, Batch, Row, Score
from ._registry import Param, factory_params, spec_from_factory
from ._reward import AsyncReward, Reward
from .episode import TRAJECTORY_COLUMNS
from .errors import ConfigError, MissingColumnError

__all__ = [
    "AsyncFunctionReward",
    "FunctionReward",
    "FunctionRewardFactory",
    "ISOLATION_PARAMS",
    "IsolatedFunctionReward",
    "IsolatedScorerError",
    "batch_reward",
    "call_isolated",
    "sample_reward",
]

_FROM_BATCH = {
    "prompt": lambda batch: batch.prompts,
    "completion": lambda batch: batch.completions,
}


class FunctionRewardFactory:
    """A registry factory around a scoring function; calling it with params builds the reward."""

    def __init__(
        self, func: Callable[..., Any], *, name: str | None, description: str | None, batched: bool,
        isolated: bool = False, check: Callable[..., None] | None = None,
    ):
        self.func = func
        self.isolated = isolated
        self.check = check
        self.name = name or func.__name__
        self.description = description or _first_line(inspect.getdoc(func))
        self.batched = batched
        self.signature_target = func
        self.is_async = inspect.iscoroutinefunction(func)
        if isolated and (batched or self.is_async):
            raise TypeError(f"{func.__qualname__}: isolated=True is for synchronous per-sample scorers only")
        self.column_args, self.takes_all_columns = _column_args(func)
        # Names **columns must not pass on: the text argument and the positional columns.
        self.taken_names = (next(iter(inspect.signature(func).parameters)), *(c for c, _ in self.column_args))
        self.__module__ = func.__module__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__

    def params(self) -> dict[str, Param]:
        own = {
            name: param
            for name, param in factory_params(self.func).items()
            if inspect.signature(self.func).parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        }
        if self.isolated:
            own.update({name: Param(name, default, kind) for name, (default, kind) in ISOLATION_PARAMS.items()})
        own["on_error"] = Param("on_error", "none", "str")
        return own

    def __call__(self, *, on_error: str = "none", **params: Any) -> Reward:
        spec_from_factory(self, self.__module__).check_params({**params, "on_error": on_error})  # typos fail here
        if self.check is not None:
            self._check_values(params)
        if self.isolated:
            isolation = {name: params.pop(name, default) for name, (default, _) in ISOLATION_PARAMS.items()}
            return IsolatedFunctionReward(self, params, on_error=on_error, **isolation)
        cls = AsyncFunctionReward if self.is_async else FunctionReward
        return cls(self, params, on_error=on_error)

    def _check_values(self, params: dict[str, Any]) -> None:
        """Run the author's ``check`` on the scorer's params (defaults filled in); its complaint is a config error."""
        signature = inspect.signature(self.func).parameters.values()
        values = {p.name: p.default for p in signature if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
        values.update((k, v) for k, v in params.items() if k not in ISOLATION_PARAMS)
        try:
            self.check(**values)
        except ConfigError as exc:
            raise ConfigError(f"reward {self.name!r}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"reward {self.name!r}: {exc}") from exc

    def __reduce__(self) -> Any:
        # Decorating rebinds the module-level name to this factory: pickle it by that reference. When the
        # name still holds the plain function (``f = sample_reward(name=...)(g)``), pickle the parts instead.
        try:
            if _resolve(self.__module__, self.__qualname__) is self:
                return (_resolve, (self.__module__, self.__qualname__))
        except (ImportError, AttributeError):
            pass
        return (_rebuild_factory, (self.func, self.name, self.description, self.batched, self.isolated, self.check))

    def __repr__(self) -> str:
        return f"<reward factory {self.name!r} from {self.__module__}.{self.__qualname__}>"


def _resolve(module: str, qualname: str) -> Any:
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _rebuild_factory(func: Callable[..., Any], name: str, description: str, batched: bool, isolated: bool,
                     check: Callable[..., None] | None) -> Any:
    return FunctionRewardFactory(func, name=name, description=description, batched=batched, isolated=isolated,
                                 check=check)


def _column_args(func: Callable[..., Any]) -> tuple[list[tuple[str, Any]], bool]:
    """(column name, default) for each positional parameter after the first; and whether it takes **columns."""
    params = list(inspect.signature(func).parameters.values())
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        raise TypeError(f"{func.__qualname__}: the first parameter must take the completion text")
    columns = [
        (p.name, p.default)
        for p in params[1:]
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return columns, any(p.kind is p.VAR_KEYWORD for p in params)


class FunctionReward(Reward):
    """A reward built from a function by ``sample_reward`` / ``batch_reward``."""

    def __init__(self, factory: FunctionRewardFactory, params: dict[str, Any], *, on_error: str = "none"):
        super().__init__(on_error=on_error)
        self.factory = factory
        self.params = params
        self.__name__ = factory.name

    def _sample_args(self, row: Row) -> tuple[list[Any], dict[str, Any]]:
        args = []
        for column, default in self.factory.column_args:
            try:
                args.append(row[column] if column != "completion" else row.completion)
            except MissingColumnError:
                if default is inspect.Parameter.empty:
                    raise
                args.append(default)
        extra = dict(row.items()) if self.factory.takes_all_columns else {}
        for name in self.factory.taken_names:
            extra.pop(name, None)
        return args, {**extra, **self.params}

    def _batch_args(self, batch: Batch) -> tuple[list[Any], dict[str, Any]]:
        args = []
        for column, default in self.factory.column_args:
            if column in _FROM_BATCH:
                args.append(_FROM_BATCH[column](batch))
            elif batch.live_column(column) is not None:
                args.append(batch.live_column(column))
            elif column in batch.extras:
                args.append(batch.extras[column])
            elif column in batch.columns:
                args.append(batch.columns[column])
            elif column in TRAJECTORY_COLUMNS:
                args.append(batch.trajectory(column))
            elif default is inspect.Parameter.empty:
                args.append(batch.column(column))
            else:
                args.append([default] * len(batch))
        extra = {k: v for k, v in batch.columns.items() if self.factory.takes_all_columns}
        for name in self.factory.taken_names:
            extra.pop(name, None)
        return args, {**extra, **self.params}

    def required_columns(self) -> tuple[str, ...]:
        """The scorer's column parameters that have no default."""
        return tuple(c for c, default in self.factory.column_args
                     if default is inspect.Parameter.empty and c not in _FROM_BATCH)

    def score_sample(self, text: str, row: Row) -> Any:
        args, kwargs = self._sample_args(row)
        return self.factory.func(text, *args, **kwargs)

    def _per_sample(self) -> bool:
        return not self.factory.batched

    def score_batch(self, batch: Batch) -> list[Any]:
        if not self.factory.batched:
            return super().score_batch(batch)
        args, kwargs = self._batch_args(batch)
        texts = [t if t is not None else "" for t in batch.texts]
        return self.factory.func(texts, *args, **kwargs)


class AsyncFunctionReward(AsyncReward, FunctionReward):
    """The async twin of :class:`FunctionReward`, for ``async def`` scoring functions."""

    _per_sample = FunctionReward._per_sample  # AsyncReward's comes first in the MRO; the factory knows

    async def score_sample_async(self, text: str, row: Row) -> Any:
        args, kwargs = self._sample_args(row)
        return await self.factory.func(text, *args, **kwargs)

    async def score_batch_async(self, batch: Batch) -> list[Any]:
        if not self.factory.batched:
            return await super().score_batch_async(batch)
        args, kwargs = self._batch_args(batch)
        texts = [t if t is not None else "" for t in batch.texts]
        return await self.factory.func(texts, *args, **kwargs)


class IsolatedFunctionReward(FunctionReward):
    """A per-sample function reward whose samples run in worker processes killed at the deadline."""

    def __init__(self, factory: FunctionRewardFactory, params: dict[str, Any], *, on_error: str = "none",
                 timeout: float = 10.0, timeout_score: float | None = None, workers: int | None = None):
        super().__init__(factory, params, on_error=on_error)
        if not timeout > 0:
            raise ConfigError(f"reward {factory.name!r}: timeout must be a positive number of seconds; got {timeout}")
        if workers is not None and workers < 1:
            raise ConfigError(f"reward {factory.name!r}: workers must be at least 1 (or None); got {workers}")
        from .workers import require_importable

        require_importable(factory)  # workers import the scorer by name: not from __main__, not a local
        live = [column for column, _ in factory.column_args if column in LIVE_COLUMNS]
        if live:
            raise ConfigError(f"reward {factory.name!r}: isolated rewards score in worker processes, and {live[0]!r} "
                              f"is a live object that never leaves this process; ask for 'env_state' instead")
        self.timeout, self.timeout_score, self.workers = timeout, timeout_score, workers

    def _per_sample(self) -> bool:
        return False  # the worker pool scores the batch, each sample under its own hard deadline

    def score_batch(self, batch: Batch) -> list[Any]:
        from .workers import shared_pool

        scores: list[Any] = [None] * len(batch)
        jobs: list[tuple[int, tuple[Any, ...]]] = []
        for i, text in enumerate(batch.texts):
            if text is None:
                continue
            try:
                args, kwargs = self._sample_args(batch.row(i))
            except Exception as exc:
                scores[i] = self._failure(exc)
                continue
            jobs.append((i, (self.factory, text, args, kwargs)))
        outcomes = shared_pool(self.workers).map(call_isolated, [job for _, job in jobs], timeout=self.timeout)
        for (i, _), outcome in zip(jobs, outcomes, strict=True):
            if outcome.status == "ok":
                scores[i] = outcome.value
            elif outcome.status == "timeout":
                scores[i] = Score(self.timeout_score, f"timeout after {self.timeout:g} s", None, "timeout")
            elif outcome.status == "killed":  # the host took the worker (the OOM killer): never the sample's fault
                scores[i] = Score(None, f"error: {outcome.value}", None, "error")
            else:
                scores[i] = self._failure(IsolatedScorerError(outcome.value))
        return scores


class IsolatedScorerError(RuntimeError):
    """A scorer raised inside a worker process; the message is the worker's report."""


def call_isolated(job: tuple[Any, ...]) -> Any:
    """Run one sample of an isolated function reward (in a worker process)."""
    factory, text, args, kwargs = job
    return factory.func(text, *args, **kwargs)


ISOLATION_PARAMS: dict[str, tuple[Any, str]] = {
    "timeout": (10.0, "float"),
    "timeout_score": (None, "float | None"),
    "workers": (None, "int | None"),
}


def sample_reward(
    func: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None,
    isolated: bool = False, check: Callable[..., None] | None = None,
):
    """Make a registry factory from a per-sample scorer ``func(text, columns..., *, params)``.

    ``isolated=True``: run each sample in a worker process with a hard ``timeout`` (a param).
    ``check``: called with the params (``check(**params)``) when the reward is built; what it raises
    (``ConfigError``, ``ValueError`` or ``TypeError``) becomes a config error naming the reward.
    """

    def wrap(f: Callable[..., Any]) -> FunctionRewardFactory:
        return FunctionRewardFactory(f, name=name, description=description, batched=False, isolated=isolated,
                                     check=check)

    return wrap(func) if func is not None else wrap


def batch_reward(
    func: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None,
    check: Callable[..., None] | None = None,
):
    """Make a registry factory from a batch scorer ``func(texts, column_lists..., *, params)`` (``check``:
    as for :func:`sample_reward`)."""

    def wrap(f: Callable[..., Any]) -> FunctionRewardFactory:
        return FunctionRewardFactory(f, name=name, description=description, batched=True, check=check)

    return wrap(func) if func is not None else wrap


def _first_line(text: str | None) -> str:
    return text.strip().splitlines()[0] if text and text.strip() else ""
