"""The batch a reward scores (prompts, completions, columns) and the score values it returns."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from ._live import portable_states
from ._set.groups import by_prompt
from .completions import NotText, completion_text, is_conversational
from .episode import LIVE_COLUMNS, TRAJECTORY_COLUMNS, TrajectoryView, split_messages
from .errors import MissingColumnError, RewardInputError

__all__ = ["BATCH_LEVEL", "Batch", "OUTCOMES", "Row", "Score", "TRAINER_HOOKS", "to_score"]

# Keyword arguments a trainer passes that are not dataset columns.
TRAINER_HOOKS = ("log_extra", "log_metric")
# Keyword arguments passed through per batch, not per row.
BATCH_LEVEL = ("trainer_state",)
# LIVE_COLUMNS: per-row live objects (TRL's ``environments``: one environment per rollout, aligned
# with the completions). They stay in this process: kept apart from the columns, so that they are
# subset with their rows but never pickled, sent, logged or put into a memo key.


# What happened to a sample, said by the code that knows (never read back from the reason's text):
# ok = scored; abstain = the reward does not apply (no reference, no text); error = a failure, the
# reward's own (value per its on_error policy) or its infrastructure's (always None); timeout = a
# deadline passed (value: the reward's timeout_score, or None).
OUTCOMES = ("ok", "abstain", "error", "timeout")


@dataclass(frozen=True, slots=True)
class Score:
    """One sample's result: a value (``None`` = no score), a reason, an optional verdict and an outcome.

    ``verdict`` is the reward's own pass/fail judgement (e.g. "the answer is correct"), which other
    rewards can reuse instead of verifying again. ``outcome`` (one of ``OUTCOMES``) defaults to
    ``ok`` for a value and ``abstain`` for ``None``; failures and timeouts set it explicitly.
    ``turns``: an episode's score by assistant turn (``value`` stays the episode total, what TRL
    gets); verl places them at each turn's last token. ``final``: a failure no second opinion may
    overturn (a hedge, several disagreeing answers, no answer at all): an entry's ``rescue`` never
    sends it to its model verifier.
    """

    value: float | None
    reason: str = ""
    verdict: bool | None = None
    outcome: str = ""
    turns: tuple[float, ...] | None = None
    final: bool = False

    def __post_init__(self) -> None:
        if self.turns is not None:
            turns = tuple(float(t) for t in self.turns)
            if not all(math.isfinite(t) for t in turns):
                raise ValueError(f"a score's turns must be finite numbers; got {list(self.turns)}")
            object.__setattr__(self, "turns", turns)
        if not self.outcome:
            object.__setattr__(self, "outcome", "ok" if self.value is not None else "abstain")
        elif self.outcome not in OUTCOMES:
            raise ValueError(f"a score's outcome is one of {', '.join(OUTCOMES)}; got {self.outcome!r}")


def to_score(raw: Any) -> Score:
    """Normalise what a scorer returned: number, bool, None, ``(value, reason)`` or a ``Score``."""
    kind = type(raw)
    if kind is float and math.isfinite(raw):  # the common cases first: this runs once per sample
        return Score(raw)
    if kind is Score and (raw.value is None or type(raw.value) is float and math.isfinite(raw.value)):
        return raw
    final = isinstance(raw, Score) and raw.final
    if isinstance(raw, Score):
        value, reason, verdict, outcome = raw.value, raw.reason, raw.verdict, raw.outcome
    elif isinstance(raw, tuple) and len(raw) == 2:
        value, reason, verdict, outcome = raw[0], "" if raw[1] is None else str(raw[1]), None, ""
    else:
        value, reason, verdict, outcome = raw, "", None, ""
    if value is None:
        return Score(None, reason, verdict, outcome if outcome != "ok" else "")
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b":  # bool, numpy bool
        return Score(float(value), reason, bool(value) if verdict is None else verdict, outcome, final=final)
    if isinstance(value, str | bytes):  # float("0.5") would pass: a scorer returning text is a bug
        raise TypeError(f"a score must be a number, bool, None or (value, reason); got {type(value).__name__} {value!r:.40}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"a score must be a number, bool, None or (value, reason); got {type(value).__name__}") from None
    if math.isnan(number):
        return Score(None, reason or "NaN score", verdict, outcome if outcome != "ok" else "")
    if math.isinf(number):
        raise ValueError(f"a score must be finite; got {number}")
    return Score(number, reason, verdict, outcome, final=final)


@dataclass
class Batch:
    """A reward's input: raw prompts and completions, their texts, and per-row columns.

    ``texts[i]`` is ``None`` when completion ``i`` holds no text (``text_errors[i]`` says why).
    ``live`` holds per-row objects that never leave the process (see ``LIVE_COLUMNS``); a live
    column given among ``columns`` is moved there.
    """

    prompts: list[Any]
    completions: list[Any]
    columns: dict[str, list[Any]]
    extras: dict[str, Any] = field(default_factory=dict)
    live: dict[str, list[Any]] = field(default_factory=dict)
    texts: list[str | None] = field(init=False)
    _view: TrajectoryView | None = field(default=None, init=False, repr=False, compare=False)
    text_errors: list[str] = field(init=False)
    reward_name: str = "(batch)"  # used in error messages; rewards re-label errors with their own name

    def __post_init__(self) -> None:
        n = len(self.completions)
        if self.prompts is None:
            self.prompts = [None] * n
        if len(self.prompts) != n:
            raise RewardInputError(f"{len(self.prompts)} prompts but {n} completions: they must pair up one to one")
        if any(name in self.columns for name in LIVE_COLUMNS):
            self.live = {**self.live, **{k: v for k, v in self.columns.items() if k in LIVE_COLUMNS}}
            self.columns = {k: v for k, v in self.columns.items() if k not in LIVE_COLUMNS}
        for name, values in (*self.columns.items(), *self.live.items()):
            if not isinstance(values, Sequence) or isinstance(values, str | bytes) or len(values) != n:
                got = f"{len(values)} values" if isinstance(values, Sequence) else type(values).__name__
                raise RewardInputError(f"column {name!r} must be a list with one value per completion ({n}); got {got}")
        self.texts = []
        self.text_errors = []
        for completion in self.completions:
            try:
                self.texts.append(completion_text(completion))
                self.text_errors.append("")
            except NotText as exc:
                self.texts.append(None)
                self.text_errors.append(str(exc))

    @classmethod
    def from_call(cls, prompts: Any, completions: Any, kwargs: dict[str, Any], reward_name: str) -> Batch:
        """Build a batch from TRL-style arguments; the trainer's logging hooks are not columns."""
        if not _is_list_like(completions):
            raise RewardInputError(
                f"reward {reward_name!r} takes a list of completions, got {type(completions).__name__}"
            )
        extras = {k: kwargs[k] for k in BATCH_LEVEL if k in kwargs}
        # A trainer passes None where it has no such thing (completion_ids, environments without tools).
        columns = {k: v for k, v in kwargs.items()
                   if k not in extras and k not in TRAINER_HOOKS and (v is not None or k not in _MAY_BE_NONE)}
        return cls(
            list(prompts) if prompts is not None else None,
            list(completions),
            {k: list(v) if _is_list_like(v) else v for k, v in columns.items()},
            extras,
            reward_name=reward_name,
        )

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]]) -> Batch:
        """A batch from row dicts (``prompt``, ``completion``, columns); a column missing from a row is ``None`` there.

        A row with ``messages`` (a whole conversation) and no ``completion`` is an episode: its prompt is
        the messages before the first assistant message, its completion the rest.
        """
        names = dict.fromkeys(key for row in rows for key in row if key not in ("prompt", "completion"))
        prompts, completions = [], []
        for row in rows:
            messages = row.get("messages")
            if row.get("completion") is None and is_conversational(messages):
                head, tail = split_messages(messages)
                prompts.append(row.get("prompt", head))
                completions.append(tail)
            else:
                prompts.append(row.get("prompt"))
                completions.append(row.get("completion"))
        return cls(prompts, completions, {name: [row.get(name) for row in rows] for name in names})

    def __len__(self) -> int:
        return len(self.completions)

    def settle(self, index: int, score: Any) -> None:
        """Deprecated: a batch is input only; call ``Reward.settle`` (the row is settled into the call's context)."""
        import warnings

        from ._call import current_call

        warnings.warn("Batch.settle is deprecated: call self.settle(index, score) in your Reward's score_batch "
                      "(a batch is input only; settled rows belong to the call)", DeprecationWarning, stacklevel=2)
        call = current_call()
        if call is not None:
            call.settle(index, score)

    def portable(self) -> Batch:
        """This batch without its live objects, which never leave the process: each row's environment
        is replaced by its ``env_state`` snapshot (JSON data). Used when a batch is pickled or sent."""
        if not self.live:
            return self
        columns = self.columns if "env_state" in self.columns else {**self.columns, "env_state": portable_states(self)}
        return Batch(self.prompts, self.completions, columns, self.extras, reward_name=self.reward_name)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.portable().__dict__, "_view": None}

    def trajectory(self, name: str) -> list[Any]:
        """A part of each row's episode (see :mod:`rewardhub.episode`), built on first use and kept."""
        if self._view is None:
            self._view = TrajectoryView(self)
        return self._view.column(name)

    def trajectory_note(self, name: str, index: int) -> str:
        """Why row ``index`` has no ``name`` (``""`` when it has one)."""
        if self._view is None:
            self._view = TrajectoryView(self)
        return self._view.note(name, index)

    def row(self, index: int) -> Row:
        return Row(self, index)

    def rows(self) -> Iterator[Row]:
        return (Row(self, i) for i in range(len(self)))

    def live_column(self, name: str) -> list[Any] | None:
        """A live column by name (``env`` and TRL's ``environments`` are one), or ``None`` if the batch has none."""
        if name not in LIVE_COLUMNS:
            return None
        values = self.live.get(name)
        if values is None:
            values = next((self.live[other] for other in LIVE_COLUMNS if other in self.live), None)
        return values

    def column(self, name: str) -> list[Any]:
        """A whole column; raises ``MissingColumnError`` naming what the batch has."""
        try:
            return self.columns[name]
        except KeyError:
            raise MissingColumnError(self.reward_name, name, self.columns) from None

    def lookup(self, name: str) -> list[Any] | None:
        """Every row's ``name`` as a reward reads it: a column, else a part of the trajectory view (not the
        live ``env``: objects are not compared or routed on); ``None`` when it is neither."""
        if name in self.columns:
            return self.columns[name]
        if name in TRAJECTORY_COLUMNS and name not in LIVE_COLUMNS:
            return self.trajectory(name)
        return None

    def subset(self, indices: Sequence[int]) -> Batch:
        """A batch of the given rows only: their columns and live objects, the same batch-level extras."""
        return Batch(
            [self.prompts[i] for i in indices],
            [self.completions[i] for i in indices],
            {k: [v[i] for i in indices] for k, v in self.columns.items()},
            self.extras,
            {k: [v[i] for i in indices] for k, v in self.live.items()},
            reward_name=self.reward_name,
        )

    def singles(self) -> list[Batch]:
        """One one-row batch per row (for re-scoring rows alone after a batch scorer failed)."""
        return [self.subset([i]) for i in range(len(self))]

    def groups(self) -> list[list[int]]:
        """Row indices grouped by prompt, in first-seen order (GRPO's completions of one prompt)."""
        return by_prompt(range(len(self)), self.prompts.__getitem__)


_MAY_BE_NONE = ("completion_ids", *LIVE_COLUMNS)


def _is_list_like(value: Any) -> bool:
    """Lists, tuples, numpy arrays, pandas Series, tensors: one value per row (not text, a mapping or a set)."""
    if isinstance(value, str | bytes | Mapping | AbstractSet):  # a set has no row order
        return False
    if isinstance(value, Sequence):
        return True
    return hasattr(value, "__len__") and hasattr(value, "__iter__") and getattr(value, "ndim", 1) >= 1


class Row(Mapping[str, Any]):
    """One sample of a batch: its columns as a mapping, plus ``prompt``, ``completion`` and ``text``."""

    __slots__ = ("_batch", "index")

    def __init__(self, batch: Batch, index: int):
        self._batch = batch
        self.index = index

    @property
    def prompt(self) -> Any:
        return self._batch.prompts[self.index]

    @property
    def completion(self) -> Any:
        return self._batch.completions[self.index]

    @property
    def text(self) -> str | None:
        return self._batch.texts[self.index]

    def __getitem__(self, name: str) -> Any:
        if name in self._batch.columns:
            return self._batch.columns[name][self.index]
        if name == "prompt":
            return self.prompt
        live = self._batch.live_column(name)
        if live is not None:
            return live[self.index]
        if name in TRAJECTORY_COLUMNS:
            return self._batch.trajectory(name)[self.index]
        if name in self._batch.extras:
            return self._batch.extras[name]
        raise MissingColumnError(self._batch.reward_name, name, self._batch.columns)

    def trajectory_note(self, name: str) -> str:
        """Why this row has no ``name`` in its trajectory view (``""`` when it has one)."""
        return self._batch.trajectory_note(name, self.index)

    def __iter__(self) -> Iterator[str]:
        return iter(self._batch.columns)

    def __len__(self) -> int:
        return len(self._batch.columns)
