"""The ``instruction_following`` reward: IFEval's verifiable instructions, checked per row.

Each row names its instructions in IFEval's own format: ``instruction_id_list`` (ids such as
``length_constraints:number_words``) and ``kwargs`` (one mapping per id, IFEval's kwargs names).
``mode: strict`` checks the response as written; ``loose`` also accepts it with its first and/or
last line removed and/or ``*`` stripped (IFEval's loose accuracy). The score is 1.0 when every
instruction is followed (IFEval's prompt-level accuracy) or, with ``partial_credit``, the fraction
followed (instruction-level); the reason names each instruction that failed and what was measured.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from ..deps import require
from ..text import canonical
from . import text as measure
from .checks import resolve
from .errors import InstructionRowError
from .guards import gamed

__all__ = ["InstructionFollowing", "MODES", "loose_variants", "register_rewards"]

MODES = ("strict", "loose")


class InstructionFollowing(Reward):
    """IFEval's verifiable instructions (strict or loose), all-or-nothing or partial credit."""

    name = "instruction_following"
    description = "IFEval verifiable instructions from the row (instruction_id_list + kwargs), strict or loose"

    def __init__(
        self,
        *,
        instructions_column: str = "instruction_id_list",
        kwargs_column: str = "kwargs",
        mode: str = "strict",
        partial_credit: bool = False,
        max_repeated_share: float | None = 0.25,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if mode not in MODES:
            raise ConfigError(f"instruction_following: mode must be one of {', '.join(MODES)}; got {mode!r}")
        if max_repeated_share is not None and not 0 <= max_repeated_share < 1:
            raise ConfigError(
                f"instruction_following: max_repeated_share must be in [0, 1) or null; got {max_repeated_share}"
            )
        require(self.name, "ifeval", *measure.MODULES)
        self.instructions_column = instructions_column
        self.kwargs_column = kwargs_column
        self.mode = mode
        self.partial_credit = partial_credit
        self.max_repeated_share = max_repeated_share

    def score_sample(self, text: str, row: Row) -> Score:
        instructions = self._instructions(row)
        if self.max_repeated_share is not None:  # the gaming guard reads what a reader sees (guards.py)
            text = canonical(text)
        if not instructions:
            return Score(None, f"no instructions in column {self.instructions_column!r}")
        variants = list(dict.fromkeys(loose_variants(text))) if self.mode == "loose" else [text]  # any one may pass
        failed = []
        for (instruction_id, instruction, args) in instructions:
            why = self._unfollowed(instruction_id, instruction, args, variants)
            if why is not None:
                failed.append(f"{instruction_id} ({why})")
        followed = len(instructions) - len(failed)
        value = followed / len(instructions) if self.partial_credit else float(not failed)
        if not failed:
            return Score(value, f"all {len(instructions)} instructions followed ({self.mode})", True)
        return Score(value, f"{followed}/{len(instructions)} followed ({self.mode}); failed: " + "; ".join(failed), False)

    def _unfollowed(self, instruction_id: str, instruction: Any, args: dict[str, Any], variants: list[str]) -> str | None:
        """Why no variant of the response follows the instruction, or ``None`` when one does."""
        first_reason = None
        for variant in variants:
            if not variant.strip():
                first_reason = first_reason or "empty response"
                continue
            ok, detail = instruction.check(variant, args)
            if ok and self.max_repeated_share is not None:
                gaming = gamed(instruction_id, args, variant, self.max_repeated_share)
                if gaming is not None:
                    ok, detail = False, gaming
            if ok:
                return None
            first_reason = first_reason or detail
        return first_reason

    def _instructions(self, row: Row) -> list[tuple[str, Any, dict[str, Any]]]:
        ids = _decoded(row[self.instructions_column], self.instructions_column)
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, Sequence) and hasattr(ids, "tolist"):
            ids = ids.tolist()  # a numpy array from a Parquet / datasets column
        if not isinstance(ids, Sequence):
            raise InstructionRowError(f"column {self.instructions_column!r} must list instruction ids; got {ids!r}")
        kwargs = _decoded(row[self.kwargs_column], self.kwargs_column) if self.kwargs_column in row else None
        if kwargs is None:
            kwargs = [{}] * len(ids)
        elif isinstance(kwargs, Mapping):
            kwargs = [kwargs]
        elif not isinstance(kwargs, Sequence) and hasattr(kwargs, "tolist"):
            kwargs = kwargs.tolist()
        if not isinstance(kwargs, Sequence) or len(kwargs) != len(ids):
            count = len(kwargs) if isinstance(kwargs, Sequence) else type(kwargs).__name__
            raise InstructionRowError(
                f"column {self.kwargs_column!r} must hold one kwargs mapping per instruction id "
                f"({len(ids)} ids, got {count})"
            )
        return [(instruction_id, *resolve(instruction_id, given)) for instruction_id, given in zip(ids, kwargs, strict=True)]


def _decoded(value: Any, column: str) -> Any:
    """A column value, JSON-decoded when it arrived as JSON text (CSV or string-typed columns)."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise InstructionRowError(f"column {column!r} holds text that is not valid JSON: {exc}") from None
    return value


def loose_variants(response: str) -> list[str]:
    """IFEval's loose-mode variants: the response with its first, last or both lines removed, each
    also with ``*`` removed."""
    lines = response.split("\n")
    trimmed = [response, "\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [trimmed[0], trimmed[0].replace("*", ""), *trimmed[1:], *(t.replace("*", "") for t in trimmed[1:])]


@hookimpl
def register_rewards(register):
    register(InstructionFollowing)
