"""``length_penalty``: rewards and penalties by completion length, in four published styles.

- ``overlong`` (default): DAPO's soft overlong punishment. 0 up to ``max_completion_len - cache_len``
  tokens, then a linear ramp down to -1 at ``max_completion_len``, -1 beyond.
- ``target``: ``-|len - target_len| / target_len``, floored at -1.
- ``group``: Kimi 1.5's length reward over the completions of one prompt:
  ``lambda = 0.5 - (len - min) / (max - min)``; correct answers get ``lambda``, wrong ones ``min(0, lambda)``.
- ``cosine``: the cosine-scaled reward of "Demystifying Long Chain-of-Thought Reasoning in LLMs": short
  correct answers earn most, short wrong answers lose most; ``len / max_completion_len`` sets the phase.

Lengths are always tokens, counted the best way the call allows, and the reason says which: the
``completion_ids`` column when the trainer passes it (TRL), else the ``tokenizer`` param's count (a
Hugging Face tokenizer name or folder, loaded once), else an estimate, ``max(words, ceil(UTF-8 bytes /
4))`` (about four bytes per token for English and for CJK text alike with BPE vocabularies; never fewer
tokens than whitespace words). So the server, the shims and the CLI, which get no ``completion_ids``,
measure the same budget TRL does, and words joined by invisible characters are not one word.
``group`` and ``cosine`` reuse another reward's verdicts
(``correctness``, e.g. ``"math"`` or ``"exact_match"``) instead of verifying again. In ``group`` mode a
lone completion has no range to be placed in and a group short of ``group_size`` is a fragment: both
abstain (one-sample callers such as verl and OpenRLHF get whole groups through the shims' assembly).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sized
from typing import Any, NamedTuple

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl

__all__ = [
    "BYTES_PER_TOKEN",
    "COUNTED_BY",
    "Length",
    "LengthPenalty",
    "MODES",
    "NEEDS_CORRECTNESS",
    "TokenCounter",
    "batch_lengths",
    "completion_length",
    "estimated_tokens",
    "is_correct",
    "register_rewards",
]

MODES = ("overlong", "target", "group", "cosine")
NEEDS_CORRECTNESS = ("group", "cosine")


BYTES_PER_TOKEN = 4  # the estimate without completion_ids or a tokenizer: ceil(UTF-8 bytes / 4), at least the words
# How a count was made, as the reason says it.
COUNTED_BY = {"completion_ids": "", "tokenizer": " (counted by the tokenizer)",
              "estimate": " (estimated: no completion_ids)"}


class Length(NamedTuple):
    """A completion's length in tokens and how it was counted: ``completion_ids``, ``tokenizer`` or ``estimate``."""

    count: int
    counted_by: str

    def __str__(self) -> str:
        return f"{self.count} token{'' if self.count == 1 else 's'}{COUNTED_BY[self.counted_by]}"


def estimated_tokens(text: str) -> int:
    """Tokens a BPE tokenizer would make of ``text``, estimated: ``max(words, ceil(UTF-8 bytes / 4))``."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return max(len(text.split()), -(-size // BYTES_PER_TOKEN))


def completion_length(text: str, ids: Any = None, count_tokens: Callable[[str], int] | None = None) -> Length:
    """Token count from ``ids`` (one completion's ``completion_ids``) when given, else ``count_tokens(text)``
    (a tokenizer), else :func:`estimated_tokens`."""
    if ids is not None and isinstance(ids, Sized) and not isinstance(ids, str | bytes):  # None: no ABC check
        return Length(len(ids), "completion_ids")
    if count_tokens is not None:
        return Length(count_tokens(text), "tokenizer")
    return Length(estimated_tokens(text), "estimate")


def batch_lengths(batch: Batch, count_tokens: Callable[[str], int] | None = None) -> list[Length | None]:
    """Each completion's :func:`completion_length` (None where the completion holds no text)."""
    ids = batch.columns.get("completion_ids") or [None] * len(batch)
    return [None if t is None else completion_length(t, i, count_tokens) for t, i in zip(batch.texts, ids, strict=True)]


class TokenCounter:
    """Counts tokens with a Hugging Face tokenizer (a hub name or a local folder), loaded on first use."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, text: str) -> int:
        return len(_load_tokenizer(self.name)(text, add_special_tokens=False)["input_ids"])


@functools.cache
def _load_tokenizer(name: str) -> Any:
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ConfigError("length_penalty's tokenizer param needs transformers: pip install 'rewardhub[rm]'") from None
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"length_penalty: cannot load tokenizer {name!r} ({exc}); give a local folder or a "
                          f"hub name this machine can reach, or leave tokenizer unset for the estimate") from None


def is_correct(score: Score) -> bool | None:
    """A correctness reward's judgement: its verdict, else value >= 1.0; None when it abstained."""
    if score.verdict is not None:
        return score.verdict
    return None if score.value is None else score.value >= 1.0


class LengthPenalty(Reward):
    """Length shaping: DAPO overlong (default), target length, Kimi group-relative, or cosine-scaled."""

    name = "length_penalty"
    description = "length shaping: DAPO soft overlong (default), target length, Kimi 1.5 group, cosine"

    def __init__(
        self,
        *,
        mode: str = "overlong",
        max_completion_len: int = 4096,
        cache_len: int = 1024,
        target_len: int | None = None,
        correctness: str | None = None,
        group_size: int | None = None,
        min_value_correct: float = 0.5,
        max_value_correct: float = 1.0,
        min_value_wrong: float = -1.0,
        max_value_wrong: float = -0.5,
        tokenizer: str | None = None,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if tokenizer is not None and (not isinstance(tokenizer, str) or not tokenizer.strip()):
            raise ConfigError(f"tokenizer must be a Hugging Face tokenizer name or folder, got {tokenizer!r}")
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        if max_completion_len < 1 or (mode == "overlong" and not 1 <= cache_len <= max_completion_len):
            raise ConfigError(
                f"need max_completion_len >= 1 and 1 <= cache_len <= max_completion_len; "
                f"got max_completion_len={max_completion_len}, cache_len={cache_len}"
            )
        if (mode == "target") != (target_len is not None):
            raise ConfigError("target_len is required by mode 'target' and used by no other mode")
        if target_len is not None and target_len < 1:
            raise ConfigError(f"target_len must be >= 1, got {target_len}")
        if (mode in NEEDS_CORRECTNESS) != (correctness is not None):
            raise ConfigError(
                f"correctness (the reward whose verdict says an answer is right, e.g. 'math' or "
                f"'exact_match') is required by modes {' and '.join(NEEDS_CORRECTNESS)} and used by no other"
            )
        if group_size is not None and (mode != "group" or group_size < 1):
            raise ConfigError(f"group_size (completions per prompt, >= 1) is used by mode 'group' only; "
                              f"got group_size={group_size} with mode {mode!r}")
        if min_value_correct > max_value_correct or min_value_wrong > max_value_wrong:
            raise ConfigError("cosine values need min_value_correct <= max_value_correct and "
                              "min_value_wrong <= max_value_wrong")
        self.mode = mode
        self.max_completion_len = max_completion_len
        self.cache_len = cache_len
        self.target_len = target_len
        self.correctness = correctness
        self.group_size = group_size
        self.needs_groups = mode == "group"  # callers sending one completion per call must assemble groups
        self.correct_range = (min_value_correct, max_value_correct)
        self.wrong_range = (min_value_wrong, max_value_wrong)
        self.count_tokens = None if tokenizer is None else TokenCounter(tokenizer)

    def dependencies(self) -> dict[str, str]:
        return {"correctness": self.correctness} if self.correctness else {}

    def score_batch(self, batch: Batch) -> list[Score]:
        lengths = batch_lengths(batch, self.count_tokens)
        if self.mode == "overlong":
            return [self._overlong(n) if n is not None else Score(None) for n in lengths]
        if self.mode == "target":
            return [self._target(n) if n is not None else Score(None) for n in lengths]
        verdicts = self.dependency_scores("correctness", batch)
        if self.mode == "cosine":
            return [self._cosine(n, v) if n is not None else Score(None) for n, v in zip(lengths, verdicts, strict=True)]
        scores = [Score(None)] * len(batch)
        for group in batch.groups():
            for i, score in self._group(group, lengths, verdicts):
                scores[i] = score
        return scores

    def _overlong(self, length: Length) -> Score:
        free = self.max_completion_len - self.cache_len
        if length.count <= free:
            return Score(0.0, f"{length} <= {free}: no penalty")
        if length.count <= self.max_completion_len:
            value = (free - length.count) / self.cache_len
            return Score(value, f"{length}: {length.count - free} into the last {self.cache_len} before "
                                f"{self.max_completion_len}")
        return Score(-1.0, f"{length} > max_completion_len {self.max_completion_len}")

    def _target(self, length: Length) -> Score:
        distance = abs(length.count - self.target_len)
        return Score(-min(1.0, distance / self.target_len) if distance else 0.0,
                     f"{length}, target {self.target_len}")

    def _cosine(self, length: Length, verdict: Score) -> Score:
        correct = is_correct(verdict)
        if correct is None:
            return _abstained(verdict)
        progress = min(length.count / self.max_completion_len, 1.0)
        low, high = self.correct_range if correct else self.wrong_range[::-1]  # wrong: short is worst
        value = low + 0.5 * (high - low) * (1.0 + math.cos(math.pi * progress))
        return Score(value, f"{'correct' if correct else 'wrong'}, {length} of {self.max_completion_len}")

    def _group(self, group: list[int], lengths: list[Length | None], verdicts: list[Score]):
        """(row, score) for one prompt's completions: Kimi 1.5's lambda from the group's length range."""
        fragment = _fragment(len(group), self.group_size)
        if fragment:
            yield from ((i, Score(None, fragment, outcome="abstain")) for i in group)
            return
        counts = [lengths[i].count for i in group if lengths[i] is not None]
        if not counts:
            return
        shortest, longest = min(counts), max(counts)
        for i in group:
            length = lengths[i]
            if length is None:
                continue
            correct = is_correct(verdicts[i])
            if correct is None:
                yield i, _abstained(verdicts[i])
            elif shortest == longest:
                yield i, Score(0.0, f"all {len(counts)} completions of this prompt have {length}")
            else:
                lam = 0.5 - (length.count - shortest) / (longest - shortest)
                value = lam if correct else min(0.0, lam)
                yield i, Score(value, f"{'correct' if correct else 'wrong'}, {length} in group range "
                                      f"{shortest}..{longest}")


def _fragment(size: int, group_size: int | None) -> str:
    """Why a group of ``size`` cannot be ranked by length, or "" when it can."""
    if group_size is not None and size % group_size:
        return f"incomplete group: {size} completions of this prompt in the batch, group_size is {group_size}"
    if size == 1:
        return "a lone completion of its prompt: no group length range to place it in"
    return ""


def _abstained(verdict: Score) -> Score:
    return Score(None, f"correctness abstained: {verdict.reason}" if verdict.reason else "correctness abstained")


@hookimpl
def register_rewards(register):
    register(LengthPenalty)
