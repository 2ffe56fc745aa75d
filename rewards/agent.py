"""Rewards on an agent's episode: its tool calls, its turns and the state it left its environment in.

They read the trajectory view (:mod:`rewardhub.episode`) by column name, so they work the same for
every trainer that fills it. What the model *said* never counts as what it *did*: a call written as
text, a tool result typed into an assistant message or success claimed in prose is not a call, a
result or a state.

- ``tool_call_format``: every call parses and its arguments validate against the tool's JSON schema.
- ``tool_call_match``: the calls made vs the expected calls of a column (name and arguments by value).
- ``tool_error_penalty``: a penalty per failed or malformed call.
- ``turn_budget``: full credit within a number of turns, decaying to 0 past it.
- ``final_state_match``: the environment's final state vs an expected state column.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl
from rewardhub.episode import parse_arguments

__all__ = [
    "FinalStateMatch",
    "NUMBER",
    "ToolCallFormat",
    "ToolCallMatch",
    "ToolErrorPenalty",
    "TurnBudget",
    "expected_calls",
    "register_rewards",
    "same_value",
    "state_mismatches",
    "tool_schemas",
]

NUMBER = (int, float)


def _trajectory(row: Row, name: str) -> tuple[Any, str]:
    """A trajectory column's value for the row and, when it is ``None``, the view's note why."""
    value = row[name]
    note = row.trajectory_note(name) if value is None else ""
    return value, note


class _AgainstExpected(Reward):
    """A trajectory ``part`` compared with the expected value of the row's ``column``; a row missing
    either abstains, saying which (``what``: the expected value's name, ``none``: why the part is absent)."""

    part = ""
    what = ""
    none = ""
    column: str

    def required_columns(self) -> tuple[str, ...]:
        return (self.column, self.part)

    def score_sample(self, text: str, row: Row) -> Score:
        expected = row[self.column]
        if expected is None:
            return Score(None, f"no {self.what} in column {self.column!r}")
        actual, note = _trajectory(row, self.part)
        if actual is None:
            return Score(None, note or self.none)
        score = self.compare(expected, actual)
        caveat = row.trajectory_note(self.part)  # e.g. state values that were not JSON data
        if caveat and not score.verdict:
            return Score(score.value, f"{score.reason} ({caveat})"[:400], score.verdict, score.outcome, score.turns)
        return score

    def compare(self, expected: Any, actual: Any) -> Score:
        raise NotImplementedError


# ----- comparing JSON values ---------------------------------------------------------------------
def same_value(actual: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """JSON values equal by value and type: ``True`` is not ``1``, ``"42"`` is not ``42``; numbers
    within ``tolerance`` (absolute); mappings key for key; lists item for item."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, NUMBER) and isinstance(actual, NUMBER):
        if not (math.isfinite(actual) and math.isfinite(expected)):
            return False
        return abs(actual - expected) <= tolerance
    if isinstance(expected, Mapping):
        return (isinstance(actual, Mapping) and set(map(str, actual)) == set(map(str, expected))
                and all(same_value(_get(actual, k), v, tolerance) for k, v in expected.items()))
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        return (isinstance(actual, Sequence) and not isinstance(actual, str) and len(actual) == len(expected)
                and all(same_value(a, e, tolerance) for a, e in zip(actual, expected, strict=True)))
    return type(actual) is type(expected) and actual == expected


def _get(mapping: Mapping, key: Any) -> Any:
    return mapping[key] if key in mapping else mapping.get(str(key))


def _from_json_text(value: Any, column: str) -> Any:
    """A column value stored as JSON text (Parquet files keep varying objects that way), parsed."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise ValueError(f"column {column!r} holds text that is not JSON: {value[:40]!r}") from None


def _check_tolerance(tolerance: float) -> None:
    if not (isinstance(tolerance, NUMBER) and math.isfinite(tolerance) and tolerance >= 0):
        raise ConfigError(f"tolerance must be a number >= 0, got {tolerance!r}")


# ----- tool_call_format --------------------------------------------------------------------------
def tool_schemas(tools: Any, where: str) -> dict[str, dict[str, Any]]:
    """Tool name -> JSON schema of its arguments, from OpenAI-style tool specs (``{"type": "function",
    "function": {"name", "parameters"}}``) or bare ``{"name", "parameters"}``; raises ConfigError."""
    if isinstance(tools, Mapping):
        tools = [tools]
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        raise ConfigError(f"{where} must be a list of tool specs, got {type(tools).__name__}")
    schemas = {}
    for i, spec in enumerate(tools):
        spec = spec.get("function", spec) if isinstance(spec, Mapping) else spec
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
            raise ConfigError(f"{where}[{i}] must be a tool spec with a 'name' (and 'parameters', a JSON schema)")
        parameters = spec.get("parameters", {"type": "object"})
        if not isinstance(parameters, Mapping):
            raise ConfigError(f"{where}[{i}] ({spec['name']}): 'parameters' must be a JSON schema object")
        schemas[spec["name"]] = dict(parameters)
    return schemas


def _jsonschema() -> Any:
    """The ``jsonschema`` module, imported on use (a reward keeps no module: it is pickled to workers)."""
    try:
        import jsonschema
    except ImportError as exc:  # pragma: no cover - the extra is part of [all]
        raise ConfigError("tool_call_format needs jsonschema: pip install 'rewardhub[agent]'") from exc
    return jsonschema


class ToolCallFormat(Reward):
    """1.0 when every tool call parses and its arguments validate against the tool's JSON schema."""

    role = "format"  # what the hacking monitor reads it as
    name = "tool_call_format"
    description = "1.0 if every tool call parses and its arguments validate against the tool's JSON schema"

    def __init__(self, *, tools: list[dict[str, Any]] | None = None, column: str = "tools", strict: bool = True,
                 partial_credit: bool = False, no_calls_score: float | None = None, on_error: str = "none"):
        super().__init__(on_error=on_error)
        _jsonschema()  # missing: say so now, not at the first batch
        self.schemas = self._checked(tool_schemas(tools, "params.tools")) if tools is not None else None
        self.column, self.strict, self.partial_credit = column, strict, partial_credit
        self.no_calls_score = no_calls_score

    def required_columns(self) -> tuple[str, ...]:
        return ("tool_calls",)

    def _checked(self, schemas: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, schema in schemas.items():
            cls = _jsonschema().validators.validator_for(schema)
            try:
                cls.check_schema(schema)
            except _jsonschema().SchemaError as exc:
                raise ConfigError(f"tool {name!r}: its parameters are not a valid JSON schema: {exc.message}") from None
        return schemas

    def score_sample(self, text: str, row: Row) -> Score:
        calls, note = _trajectory(row, "tool_calls")
        if not calls:
            return Score(self.no_calls_score, note or "no tool calls")
        schemas = self.schemas if self.schemas is not None else self._row_schemas(row)
        problems = [problem for call in calls if (problem := self._problem(call, schemas))]
        valid = len(calls) - len(problems)
        value = valid / len(calls) if self.partial_credit else float(not problems)
        reason = f"{valid}/{len(calls)} calls well-formed"
        return Score(value, f"{reason}: {problems[0]}" if problems else reason, not problems)

    def _row_schemas(self, row: Row) -> dict[str, dict[str, Any]] | None:
        tools = row.get(self.column)
        return self._checked(tool_schemas(tools, f"column {self.column!r}")) if tools is not None else None

    def _problem(self, call: Mapping[str, Any], schemas: dict[str, dict[str, Any]] | None) -> str:
        where = f"turn {call['turn']} {call['name'] or 'call'}"
        if call.get("parse_error"):
            return f"{where}: {call['parse_error']}"
        if schemas is None:
            return ""
        if call["name"] not in schemas:
            return f"{where}: no tool named {call['name']!r} (tools: {', '.join(sorted(schemas))})"
        schema = schemas[call["name"]]
        if self.strict and schema.get("type") == "object" and "additionalProperties" not in schema:
            schema = {**schema, "additionalProperties": False}  # a Python tool rejects unknown keywords too
        cls = _jsonschema().validators.validator_for(schema)
        error = _jsonschema().exceptions.best_match(
            cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(call["arguments"]))
        if error is None:
            return ""
        path = "".join(f"[{p!r}]" for p in error.absolute_path)
        return f"{where}: arguments{path}: {error.message}"


# ----- tool_call_match ---------------------------------------------------------------------------
def expected_calls(value: Any, column: str) -> list[tuple[str, dict[str, Any]]]:
    """A column's expected calls as (name, arguments), from a list or its JSON text; raises ValueError
    naming what is wrong."""
    value = _from_json_text(value, column)
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValueError(f"column {column!r} must hold a list of calls ({{'name', 'arguments'}}), got "
                         f"{type(value).__name__}")
    calls = []
    for i, call in enumerate(value):
        call = call.get("function", call) if isinstance(call, Mapping) else call
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ValueError(f"column {column!r}[{i}] must be a call with a 'name' and 'arguments'")
        arguments, problem = parse_arguments(call.get("arguments", {}))
        if problem:
            raise ValueError(f"column {column!r}[{i}] ({call['name']}): {problem}")
        calls.append((call["name"], arguments))
    return calls


class ToolCallMatch(_AgainstExpected):
    """The calls the model made vs the expected calls of a column: names and arguments by value."""

    role = "correctness"  # what the hacking monitor reads it as
    name = "tool_call_match"
    description = "1.0 if the tool calls made equal the expected calls (name and arguments by value)"

    part, what, none = "tool_calls", "expected calls", "no tool calls in the view"

    def __init__(self, *, column: str = "expected_calls", ordered: bool = True, partial_credit: bool = False,
                 arguments: str = "exact", tolerance: float = 0.0, count_failed: bool = False,
                 on_error: str = "none"):
        super().__init__(on_error=on_error)
        if arguments not in ("exact", "subset"):
            raise ConfigError(f"arguments must be 'exact' or 'subset' (the expected arguments, extra ones allowed); "
                              f"got {arguments!r}")
        _check_tolerance(tolerance)
        self.column, self.ordered, self.partial_credit = column, ordered, partial_credit
        self.arguments, self.tolerance, self.count_failed = arguments, tolerance, count_failed

    def compare(self, raw: Any, calls: Any) -> Score:
        expected = expected_calls(raw, self.column)
        made = [c for c in calls if not c.get("parse_error") and (self.count_failed or not c.get("error"))]
        matched = self._lcs(made, expected) if self.ordered else self._matching(made, expected)
        exact = matched == len(expected) == len(made) and len(made) == len(calls)
        if self.partial_credit:
            value = matched / max(len(expected), len(calls)) if (expected or calls) else 1.0
        else:
            value = float(exact)
        reason = f"{matched}/{len(expected)} expected calls matched, {len(calls)} made"
        if len(made) < len(calls):
            reason += f" ({len(calls) - len(made)} failed or malformed)"
        return Score(value, reason, exact)

    def _same(self, call: Mapping[str, Any], want: tuple[str, dict[str, Any]]) -> bool:
        name, arguments = want
        if call["name"] != name:
            return False
        actual = call["arguments"]
        if self.arguments == "subset" and isinstance(actual, Mapping):
            actual = {k: actual[k] for k in arguments if k in actual}
        return same_value(actual, arguments, self.tolerance)

    def _lcs(self, made: list[Mapping[str, Any]], expected: list[tuple[str, dict[str, Any]]]) -> int:
        """The longest run of expected calls made in order (gaps allowed)."""
        previous = [0] * (len(expected) + 1)
        for call in made:
            current = [0]
            for j, want in enumerate(expected):
                current.append(previous[j] + 1 if self._same(call, want) else max(previous[j + 1], current[j]))
            previous = current
        return previous[-1]

    def _matching(self, made: list[Mapping[str, Any]], expected: list[tuple[str, dict[str, Any]]]) -> int:
        """The most expected calls matched one to one by calls made, in any order (augmenting paths)."""
        owner: dict[int, int] = {}  # expected index -> made index

        def assign(i: int, seen: set[int]) -> bool:
            for j, want in enumerate(expected):
                if j in seen or not self._same(made[i], want):
                    continue
                seen.add(j)
                if j not in owner or assign(owner[j], seen):
                    owner[j] = i
                    return True
            return False

        return sum(assign(i, set()) for i in range(len(made)))


# ----- tool_error_penalty ------------------------------------------------------------------------
class ToolErrorPenalty(Reward):
    """A penalty for each tool call that failed (the tool raised) or was malformed, down to ``max_penalty``."""

    role = "shaping"  # what the hacking monitor reads it as
    name = "tool_error_penalty"
    description = "penalty in [max_penalty, 0]: per_error for each failed or malformed tool call"

    def __init__(self, *, per_error: float = -0.5, max_penalty: float = -1.0, count_malformed: bool = True,
                 count_unanswered: bool = False, on_error: str = "none"):
        super().__init__(on_error=on_error)
        for key, value in (("per_error", per_error), ("max_penalty", max_penalty)):
            if not (isinstance(value, NUMBER) and math.isfinite(value) and value <= 0):
                raise ConfigError(f"{key} must be a number <= 0 (it is a penalty), got {value!r}")
        self.per_error, self.max_penalty = float(per_error), float(max_penalty)
        self.count_malformed, self.count_unanswered = count_malformed, count_unanswered

    def required_columns(self) -> tuple[str, ...]:
        return ("tool_calls", "num_turns")

    def score_sample(self, text: str, row: Row) -> Score:
        calls, note = _trajectory(row, "tool_calls")
        if calls is None:
            return Score(None, note or "no tool calls in the view")
        bad = [c for c in calls if self._failed(c)]  # each call counts once, however many ways it went wrong
        if not bad:
            return Score(0.0, f"{len(calls)} calls, none failed", True)
        first = bad[0]
        why = first.get("error") or first.get("parse_error") or "no result"
        value = max(self.max_penalty, self.per_error * len(bad))
        return Score(value, f"{len(bad)}/{len(calls)} calls failed; first, turn {first['turn']} "
                            f"{first.get('name') or 'call'}: {why}"[:300], False, turns=self._by_turn(row, bad, value))

    def _failed(self, call: Mapping[str, Any]) -> bool:
        if call.get("error") or (self.count_malformed and call.get("parse_error")):
            return True
        return self.count_unanswered and call.get("result") is None and not call.get("parse_error")

    def _by_turn(self, row: Row, bad: list[Mapping[str, Any]], total: float) -> tuple[float, ...] | None:
        """The penalty at the turns whose calls failed, in call order until ``max_penalty`` is used up."""
        turns = row["num_turns"]
        if not isinstance(turns, int) or turns < 1:
            return None
        parts, left = [0.0] * turns, total
        for call in sorted(bad, key=lambda c: c["turn"]):
            step = max(self.per_error, left)
            parts[min(max(call["turn"], 1), turns) - 1] += step
            left -= step
        return tuple(parts)


# ----- turn_budget -------------------------------------------------------------------------------
class TurnBudget(Reward):
    """1.0 within ``free_turns`` assistant turns, falling linearly to 0 past ``max_turns``; an episode
    the trainer cut off (still calling tools, or out of tokens) gets ``unfinished_score``."""

    role = "shaping"  # what the hacking monitor reads it as
    name = "turn_budget"
    description = "1.0 within free_turns turns, linearly down to 0 past max_turns; unfinished episodes unfinished_score"

    def __init__(self, *, max_turns: int = 8, free_turns: int | None = None, unfinished_score: float | None = 0.0,
                 on_error: str = "none"):
        super().__init__(on_error=on_error)
        free = max_turns if free_turns is None else free_turns
        if not (isinstance(max_turns, int) and isinstance(free, int) and 1 <= free <= max_turns):
            raise ConfigError(f"turn_budget needs whole numbers 1 <= free_turns <= max_turns; got free_turns="
                              f"{free_turns!r}, max_turns={max_turns!r}")
        self.max_turns, self.free_turns, self.unfinished_score = max_turns, free, unfinished_score

    def required_columns(self) -> tuple[str, ...]:
        return ("num_turns", "finish_reason", "truncated")

    def score_sample(self, text: str, row: Row) -> Score:
        turns, note = _trajectory(row, "num_turns")
        if turns is None:
            return Score(None, note or "no turn count")
        finish = row["finish_reason"]
        if row["truncated"] or finish in ("tool_calls", "length"):
            return Score(self.unfinished_score, f"unfinished after {turns} turns ({finish or 'truncated'})", False)
        if turns <= self.free_turns:
            return Score(1.0, f"{turns} turns (budget {self.free_turns})", True)
        if turns > self.max_turns:
            return Score(0.0, f"{turns} turns, over the limit of {self.max_turns}", False)
        value = (self.max_turns + 1 - turns) / (self.max_turns + 1 - self.free_turns)
        return Score(value, f"{turns} turns, {turns - self.free_turns} over the budget of {self.free_turns}", False)


# ----- final_state_match -------------------------------------------------------------------------
def state_mismatches(state: Any, expected: Any, tolerance: float, path: str = "state") -> list[str]:
    """Where ``state`` differs from ``expected``: every expected key must be there with an equal value
    (extra keys in the state are fine); lists item for item; numbers within ``tolerance``."""
    if isinstance(expected, Mapping):
        if not isinstance(state, Mapping):
            return [f"{path} is {_short(state)}, expected an object"]
        out = []
        for key, want in expected.items():
            if key not in state and str(key) not in state:
                out.append(f"{path}.{key} is missing")
            else:
                out += state_mismatches(_get(state, key), want, tolerance, f"{path}.{key}")
        return out
    if not same_value(state, expected, tolerance):
        return [f"{path} is {_short(state)}, expected {_short(expected)}"]
    return []


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _path_value(state: Any, dotted: str) -> tuple[bool, Any]:
    for part in dotted.split("."):
        if isinstance(state, Mapping) and (part in state):
            state = state[part]
        elif isinstance(state, Sequence) and not isinstance(state, str) and part.isdigit() and int(part) < len(state):
            state = state[int(part)]
        else:
            return False, None
    return True, state


class FinalStateMatch(_AgainstExpected):
    """The environment's final state (``env_state``) vs the expected state of a column."""

    role = "correctness"  # what the hacking monitor reads it as
    name = "final_state_match"
    description = "1.0 if the environment's final state has the expected keys and values (numbers within tolerance)"

    part, what, none = "env_state", "expected state", "the environment exposes no state"

    def __init__(self, *, column: str = "expected_state", keys: list[str] | None = None, tolerance: float = 0.0,
                 partial_credit: bool = False, on_error: str = "none"):
        super().__init__(on_error=on_error)
        _check_tolerance(tolerance)
        if keys is not None and (isinstance(keys, str) or not all(isinstance(k, str) and k for k in keys)):
            raise ConfigError(f"keys must be a list of state keys (dotted for nested ones), got {keys!r}")
        self.column, self.keys, self.tolerance, self.partial_credit = column, keys, tolerance, partial_credit

    def compare(self, raw: Any, state: Any) -> Score:
        expected = _from_json_text(raw, self.column)
        if self.keys is None and not isinstance(expected, Mapping):
            raise ValueError(f"column {self.column!r} must hold an object of expected state values, got "
                             f"{type(expected).__name__}")
        per_key = []  # the mismatches of each checked key
        for key in self.keys if self.keys is not None else expected:
            has, want = _path_value(expected, key) if self.keys is not None else (True, expected[key])
            if not has:
                raise ValueError(f"the expected state has no {key!r} (keys: {self.keys})")
            found, value = _path_value(state, key) if self.keys is not None else _key_value(state, key)
            per_key.append(state_mismatches(value, want, self.tolerance, f"state.{key}") if found
                           else [f"state.{key} is missing"])
        problems = [p for found in per_key for p in found]
        if self.partial_credit:
            value = sum(not found for found in per_key) / len(per_key) if per_key else 1.0
        else:
            value = float(not problems)
        reason = "state matches" if not problems else f"{len(problems)} mismatch(es): {'; '.join(problems[:3])}"
        return Score(value, reason[:300], not problems)


def _key_value(state: Any, key: Any) -> tuple[bool, Any]:
    if isinstance(state, Mapping) and (key in state or str(key) in state):
        return True, _get(state, key)
    return False, None


@hookimpl
def register_rewards(register):
    for cls in (ToolCallFormat, ToolCallMatch, ToolErrorPenalty, TurnBudget, FinalStateMatch):
        register(cls)
