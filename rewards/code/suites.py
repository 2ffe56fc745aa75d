"""A row's tests for the ``code`` reward, in the form that lets them be checked outside the solution.

Accepted forms (column ``tests``), each turned into a :class:`Suite`:

- stdin/stdout cases (APPS / CodeContests): ``[{"input": ..., "output": ...}]`` or
  ``{"inputs": [...], "outputs": [...]}`` -> ``io`` cases, one run each.
- call-based cases (LiveCodeBench, APPS, verl's code data): ``{"fn_name": f, "inputs": [...],
  "outputs": [...]}``; an input is a list of arguments (APPS) or a string with one JSON argument per
  line (LiveCodeBench); an output is the value or its JSON text -> ``call`` cases, one run each.
- Python test code (HumanEval / MBPP): a script, or a list of assert strings (one case each). Where
  the planner of ``checks.py`` can follow every script (asserts, loops and comprehensions over known
  values, ``check(candidate)``), the sandbox only makes the calls of solution functions and every
  check around them is computed here -> ``probe`` cases; otherwise (random inputs, helpers, ``try``)
  the scripts run in the harness's test process, apart from the solution -> ``asserts``.

All forms are parsed here, in the trainer: test code is never executed outside the sandbox (the
planner computes only known values with bounded operations).
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardhub import RewardhubError

from ._plain import ObjectUsed
from .checks import NotConvertible, Planner

__all__ = [
    "CallCase",
    "Suite",
    "UnusableTestsError",
    "call_tests",
    "close_numbers",
    "io_tests",
    "parse_tests",
    "python_tests",
    "same_value",
]

_CHECK_CALL = re.compile(r"^check\s*\(", re.M)


class UnusableTestsError(RewardhubError, ValueError):
    """A row's tests column is in no form the code reward understands."""


@dataclass(frozen=True)
class CallCase:
    """One call-based case: ``fn_name(*args)`` must return ``expected``.

    ``wrapped``: APPS lists outputs inside a one-element list, so the element itself matches too.
    """

    args: list
    expected: Any
    wrapped: bool = False

    def matches(self, value: Any, tolerance: float | None, absolute: float | None = None) -> bool:
        got = _lists(value)  # JSON has no tuples: a tuple answer stands for a list (as in LiveCodeBench)
        if same_value(got, self.expected, tolerance, absolute):
            return True
        return self.wrapped and isinstance(self.expected, list) and len(self.expected) == 1 \
            and same_value(got, self.expected[0], tolerance, absolute)


def _lists(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_lists(item) for item in value]
    return value


def same_value(got: Any, expected: Any, tolerance: float | None = None, absolute: float | None = None) -> bool:
    """``got == expected`` on built-in values; with ``tolerance``, floats may differ as :func:`close_numbers`
    allows wherever they stand. Values that cannot be compared are not the same."""
    try:
        if tolerance is not None and isinstance(got, float | int) and isinstance(expected, float) \
                and not isinstance(got, bool):
            return close_numbers(got, expected, tolerance, absolute)
        if tolerance is not None and type(got) is type(expected) and isinstance(got, list | tuple) \
                and len(got) == len(expected):
            return all(same_value(a, b, tolerance, absolute) for a, b in zip(got, expected, strict=True))
        return bool(got == expected)
    except ObjectUsed as exc:
        if exc.standard:  # a standard-library value the trainer cannot check: the caller abstains
            raise
        return False
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return False


def close_numbers(got: float, expected: float, tolerance: float, absolute: float | None = None) -> bool:
    """``got`` within ``tolerance`` of ``expected``, *relative* to ``expected``: an absolute slack would let
    ``return 0`` pass every answer near 1e-7. Only an expected 0 is met within ``tolerance`` absolutely, and
    ``absolute`` (the ``float_abs_tolerance`` param: the user asks for it) allows that much error anywhere."""
    if not (math.isfinite(got) and math.isfinite(expected)):
        return got == expected
    if absolute is not None and abs(got - expected) <= absolute:
        return True
    if expected == 0:
        return abs(got) <= tolerance
    return math.isclose(got, expected, rel_tol=tolerance, abs_tol=0.0)


@dataclass(frozen=True)
class Suite:
    """A row's tests in one of four forms (``kind``): ``io``, ``call``, ``probe`` or ``asserts``.

    ``probe``: ``calls`` are the solution calls of all cases (one run), ``cases`` each case's checks
    (see ``checks.py``). ``asserts``: ``scripts``, run in the harness's test process.
    """

    kind: str
    io: list[tuple[str, str]] = field(default_factory=list)
    calls: list[CallCase] = field(default_factory=list)
    fn_name: str = ""
    probes: list[dict] = field(default_factory=list)
    cases: list[list] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len({"io": self.io, "call": self.calls, "probe": self.cases, "asserts": self.scripts}[self.kind])


# ----- parsing the column ---------------------------------------------------------------------------
def parse_tests(value: Any, entry_point: Any = None, trusted: frozenset[str] = frozenset()) -> Suite:
    """Normalise a tests column value; raises ``UnusableTestsError`` saying what was wrong.

    ``trusted``: names the prompt's own code defines (helpers the tests mean, which only the test
    process can run). Text is parsed once per (text, entry point, trusted): a training run scores
    the same tests for every completion of a prompt. The suites returned are shared, so nobody may
    change them.
    """
    entry_point = entry_point if isinstance(entry_point, str) else None
    if isinstance(value, str):
        return _parse_text(value, entry_point, trusted)
    if isinstance(value, dict):
        if value.get("fn_name") is not None:
            return call_tests(value)
        inputs, outputs = value.get("inputs", value.get("input")), value.get("outputs", value.get("output"))
        if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
            raise UnusableTestsError("a tests dict needs equally long 'inputs' and 'outputs' lists")
        return io_tests(list(zip(inputs, outputs, strict=True)))
    if isinstance(value, Sequence) and value:
        if all(isinstance(item, str) for item in value):
            return python_tests(list(value), entry_point, trusted)
        if all(isinstance(item, dict) and "input" in item and "output" in item for item in value):
            return io_tests([(item["input"], item["output"]) for item in value])
    raise UnusableTestsError(
        "tests must be Python test code, a list of asserts, stdin/stdout cases "
        "([{'input': ..., 'output': ...}] or {'inputs': [...], 'outputs': [...]}) or call-based cases "
        f"({{'fn_name': ..., 'inputs': [...], 'outputs': [...]}}); got {type(value).__name__}"
    )


@functools.lru_cache(maxsize=2048)
def _parse_text(value: str, entry_point: str | None, trusted: frozenset[str]) -> Suite:
    stripped = value.strip()
    if stripped[:1] in ("{", "["):
        try:
            return parse_tests(json.loads(stripped), entry_point, trusted)
        except json.JSONDecodeError:
            pass
    if not stripped:
        raise UnusableTestsError("the tests column is empty")
    return python_tests([value], entry_point, trusted)


def io_tests(pairs: list[tuple[Any, Any]]) -> Suite:
    if not pairs:
        raise UnusableTestsError("no test cases")
    return Suite("io", io=[(_text(i), _text(o)) for i, o in pairs])


def _text(value: Any) -> str:
    if value is None:  # no input at all (issue 13: it used to be sent as the text "None")
        return ""
    if isinstance(value, list):
        return "\n".join(map(str, value)) + "\n"
    return str(value)


def call_tests(value: dict) -> Suite:
    """``{"fn_name", "inputs", "outputs"}`` as LiveCodeBench, APPS and verl's prime_code read it."""
    name, inputs, outputs = value["fn_name"], value.get("inputs"), value.get("outputs")
    if not isinstance(name, str) or not name.isidentifier():
        raise UnusableTestsError(f"fn_name must be a function name; got {name!r}")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs) or not inputs:
        raise UnusableTestsError("call-based tests need equally long, non-empty 'inputs' and 'outputs' lists")
    cases = []
    for number, (args, expected) in enumerate(zip(inputs, outputs, strict=True), 1):
        try:
            if isinstance(args, str):  # LiveCodeBench: one JSON value per line, one line per argument
                args = [json.loads(line) for line in args.split("\n") if line.strip()]
            if isinstance(expected, str):
                expected = json.loads(expected)
        except json.JSONDecodeError as exc:
            raise UnusableTestsError(f"call-based case {number}: not JSON ({exc})") from None
        if not isinstance(args, list):
            raise UnusableTestsError(f"call-based case {number}: inputs must list the arguments; got {type(args).__name__}")
        cases.append(CallCase(args, expected, wrapped=not isinstance(inputs[number - 1], str)))
    return Suite("call", calls=cases, fn_name=name)


def python_tests(scripts: list[str], entry_point: str | None, trusted: frozenset[str] = frozenset()) -> Suite:
    """Test code as probes checked here where the planner follows every script, else as scripts for the
    harness's test process."""
    scripts = [_with_check_call(script, entry_point) for script in scripts]
    for number, script in enumerate(scripts, 1):
        _check_syntax(script, number)
    planner = Planner(entry_point, trusted)
    try:
        cases = [planner.script(script) for script in scripts]
    except (NotConvertible, SyntaxError, ValueError, RecursionError, MemoryError):
        return Suite("asserts", scripts=scripts)
    return Suite("probe", probes=planner.calls, cases=cases)


def _check_syntax(script: str, number: int) -> None:
    """Test code that is not Python (a cut or badly joined column) is unusable: the row abstains rather than
    score every program 0 on "SyntaxError on case 1"."""
    try:
        ast.parse(script)
    except SyntaxError as exc:
        raise UnusableTestsError(f"test {number} is not valid Python ({exc.msg}, line {exc.lineno}): is the tests "
                                 f"column cut short or badly joined?") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise UnusableTestsError(f"test {number} cannot be parsed ({type(exc).__name__})") from None


def _with_check_call(script: str, entry_point: str | None) -> str:
    """HumanEval: a ``check(candidate)`` that nothing calls is called on the entry point."""
    if "def check" not in script or _CHECK_CALL.search(script):
        return script
    if not entry_point:
        raise UnusableTestsError("the tests define check(candidate) but the row has no entry point to check")
    return f"{script}\n\ncheck({entry_point})\n"
