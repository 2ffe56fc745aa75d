"""rewardhub's exception hierarchy: every error a user can hit says what is wrong and how to fix it."""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable

__all__ = [
    "ConfigError",
    "DuplicateRewardError",
    "InfrastructureError",
    "InputFileError",
    "MissingColumnError",
    "OutputFileError",
    "PluginLoadError",
    "RewardContractError",
    "RewardInputError",
    "RewardNotScoringWarning",
    "RewardhubError",
    "RewardhubWarning",
    "SHOWN_CHARS",
    "UnknownRewardError",
    "WorkerShortfallWarning",
    "WorkerStartupError",
    "key_hint",
    "key_names",
    "number_text_hint",
    "shown",
    "unknown_keys_message",
]


class RewardhubError(Exception):
    """Base class of every error rewardhub raises on purpose."""


class ConfigError(RewardhubError, ValueError):
    """A reward config (file, dict or list) is malformed: names the entry and the key at fault."""


class UnknownRewardError(ConfigError, KeyError):
    """A reward name is not in the registry; the message lists the closest known names."""

    def __init__(self, name: str, known: Iterable[str]):
        self.name = name
        self.known = sorted(known)
        close = difflib.get_close_matches(name, self.known, n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
        available = ", ".join(self.known) if self.known else "(none installed)"
        super().__init__(f"unknown reward {name!r}.{hint} Installed rewards: {available}.")

    def __str__(self) -> str:  # KeyError would otherwise print the repr of the message
        return self.args[0]


class DuplicateRewardError(RewardhubError):
    """Two plugins registered the same reward name; the message names both distributions."""


class RewardInputError(RewardhubError, ValueError):
    """The batch handed to a reward is malformed (column lengths differ, wrong types)."""


class RewardContractError(RewardhubError):
    """A reward broke the batch contract (e.g. returned the wrong number of values): a plugin bug."""


class MissingColumnError(RewardhubError, KeyError):
    """A reward needs a dataset column the batch does not have."""

    def __init__(self, reward: str, column: str, available: Iterable[str]):
        self.reward = reward
        self.column = column
        self.available = sorted(available)
        close = difflib.get_close_matches(column, self.available, n=1, cutoff=0.6)
        self.closest = close[0] if close else None
        have = ", ".join(self.available) or "(none)"
        hint = f" Did you mean {self.closest!r}?" if self.closest else ""
        super().__init__(
            f"reward {reward!r} needs column {column!r}, but the batch has only: {have}.{hint} "
            f"Add the column to your dataset or point the reward at another one with its column parameter."
        )

    def for_reward(self, reward: str) -> MissingColumnError:
        """The same error, naming ``reward`` (a batch shared by several rewards does not know which asked)."""
        return self if reward == self.reward else MissingColumnError(reward, self.column, self.available)

    def __str__(self) -> str:
        return self.args[0]


class RewardhubWarning(UserWarning):
    """Base class of the warnings rewardhub gives (filter them, or turn them into errors, by category)."""


class RewardNotScoringWarning(RewardhubWarning):
    """A reward is not scoring (a column it needs is missing, or every sample fails): said once per reward.

    ``python -W error::rewardhub.RewardNotScoringWarning`` (or ``warnings.simplefilter("error", ...)``)
    stops a run at the first one instead."""


class PluginLoadError(RewardhubError):
    """A third-party plugin's entry point failed to import; the message names the plugin and its distribution."""


class InputFileError(RewardhubError):
    """An input file (JSONL, Parquet, datasets folder) cannot be read."""


class OutputFileError(RewardhubError):
    """An output cannot be written where asked (e.g. its folder does not exist); nothing was written."""


class InfrastructureError(RewardhubError, RuntimeError):
    """What a reward depends on failed (a worker process, a sandbox, an endpoint, a cache), not the
    completion: the sample abstains (``None``, outcome ``error``) under every ``on_error`` policy."""


class WorkerStartupError(RewardhubError, RuntimeError):
    """No worker process could be started (the message names the command and the modules they import)."""


class WorkerShortfallWarning(RewardhubWarning):
    """Fewer worker processes started than asked for (a memory limit that fits only some): scoring goes on
    with those that did; the message says how many."""


def key_names(keys: Iterable[object]) -> str:
    """Keys quoted for a message: ``'foo', 'bar'``."""
    return ", ".join(shown(k) for k in keys)


def key_hint(key: object, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a misspelt key, else ``""``."""
    text = key[:200] if isinstance(key, str) else shown(key)
    close = difflib.get_close_matches(text, list(allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_keys_message(where: str, unknown: list[object], allowed: Iterable[str]) -> str:
    """``<where>: unknown key(s) 'x' (did you mean 'y'?); allowed keys: a, b``."""
    allowed = list(allowed)
    return (f"{where}: unknown key(s) {key_names(unknown)}{key_hint(unknown[0], allowed)}; "
            f"allowed keys: {', '.join(allowed)}")


def number_text_hint(value: object) -> str:
    """A hint when a number arrived as text, as YAML 1.1 reads ``1e-3`` (no dot): else ``""``."""
    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    return " (a number given as text: unquote it; YAML also reads 1e-3 as text, write 1.0e-3 or 0.001)"


SHOWN_CHARS = 160  # at most this much of a value in an error message


class _BoundedRepr(reprlib.Repr):
    """``reprlib`` limits (a few items per container, a few levels, cut strings) and no huge-int repr."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, 60, 60, 40
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxfrozenset = 5

    def repr_int(self, value: int, level: int) -> str:
        if value.bit_length() > 128:  # Python refuses (or takes long) to print ints of thousands of digits
            return f"<an integer of {value.bit_length()} bits>"
        return super().repr_int(value, level)


_bounded_repr = _BoundedRepr()


def shown(value: object) -> str:
    """``repr(value)`` for an error message, bounded in length and in the work it takes: a value shared
    many times over (a YAML alias bomb), a huge number or a long text is shown by its first parts."""
    try:
        text = _bounded_repr.repr(value)
    except Exception:  # a hostile __repr__: name the type instead
        return f"<{type(value).__name__}>"
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
