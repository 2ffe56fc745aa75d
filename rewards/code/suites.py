"""A row's tests for the ``code`` reward, in the form that lets them be checked outside the solution.

Accepted forms (column ``tests``), each turned into a :class:`Suite`:

- stdin/stdout cases (APPS / CodeContests): ``[{"input": ..., "output": ...}]`` or
  ``{"inputs": [...], "outputs": [...]}`` -> ``io`` cases, one run each.
- call-based cases (LiveCodeBench, APPS, verl's code data): ``{"fn_name": f, "inputs": [...],
  "outputs": [...]}``; an input is a list of arguments (APPS) or a string with one JSON argument per
  line (LiveCodeBench); an output is the value or its JSON text -> ``call`` cases, one run each.
- Python test code (HumanEval / MBPP): a script, or a list of assert strings (one case each). Where
  every statement is an ``assert`` over the solution against a constant (``candidate(1) == 2``,
  ``abs(f(x) - 0.5) < 1e-6``, ``math.isclose(...)``, ``not f(x)``, ``f(x) is True``, ...), the
  sandbox side becomes a *probe* whose value is compared here -> ``probe`` cases; otherwise
  (loops, helpers, random inputs) the scripts run after the solution in its interpreter -> ``asserts``.

All forms are parsed here, in the trainer: test code is never evaluated outside the sandbox (constant
sides are read with a small literal evaluator).
"""

from __future__ import annotations

import ast
import functools
import json
import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardhub import RewardhubError

from .harness import same_value

_CHECK_CALL = re.compile(r"^check\s*\(", re.M)
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
           ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not}
FLIPPED = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
CONSTRUCTORS = {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list, "sorted": sorted,
                "float": float, "int": int, "str": str, "dict": dict, "abs": abs}


class UnusableTestsError(RewardhubError, ValueError):
    """A row's tests column is in no form the code reward understands."""


class NotConvertible(Exception):
    """A test that cannot be split into probes and checks (it runs in the solution's interpreter instead)."""


# ----- checks: what a probe's value must satisfy, evaluated here on plain data ------------------------
@dataclass(frozen=True)
class Check:
    """``op`` applied to probe values; ``probes`` index the run's probes, ``args`` are constants.

    ops: ``compare`` (args: operator, expected), ``truthy``, ``close`` (abs(value - x) < tol; args:
    x, tol, inclusive), ``isclose`` (args: x, rel_tol, abs_tol), ``not`` / ``all`` over ``parts``,
    ``const`` (an assert on constants only; args: its truth).
    """

    op: str
    probes: tuple[int, ...] = ()
    args: tuple = ()
    parts: tuple[Check, ...] = ()

    def probe_indices(self) -> list[int]:
        """The probes this check reads, its parts' included."""
        return [*self.probes, *(index for part in self.parts for index in part.probe_indices())]

    def holds(self, values: dict[int, Any]) -> bool:
        if self.op == "all":
            return all(part.holds(values) for part in self.parts)
        if self.op == "not":
            return not self.parts[0].holds(values)
        if self.op == "const":
            return bool(self.args[0])
        value = values[self.probes[0]]
        try:
            if self.op == "compare":
                compare, expected = self.args
                return bool(COMPARE[compare](value, expected))
            if self.op == "truthy":
                return bool(value)
            if self.op == "close":
                expected, tolerance, inclusive = self.args
                distance = abs(value - expected)
                return bool(distance <= tolerance if inclusive else distance < tolerance)
            if self.op == "isclose":
                expected, rel_tol, abs_tol = self.args
                return math.isclose(value, expected, rel_tol=rel_tol, abs_tol=abs_tol)
        except (TypeError, ValueError, OverflowError, RecursionError):
            return False
        raise ValueError(f"unknown check {self.op!r}")


@dataclass(frozen=True)
class ProbeCase:
    """One test (a script or an assert string) as probes: its checks, all of which must hold."""

    checks: tuple[Check, ...]


@dataclass(frozen=True)
class CallCase:
    """One call-based case: ``fn_name(*args)`` must return ``expected``.

    ``wrapped``: APPS lists outputs inside a one-element list, so the element itself matches too.
    """

    args: list
    expected: Any
    wrapped: bool = False

    def matches(self, value: Any, tolerance: float | None) -> bool:
        got = _lists(value)  # JSON has no tuples: a tuple answer stands for a list (as in LiveCodeBench)
        if same_value(got, self.expected, tolerance):
            return True
        return self.wrapped and isinstance(self.expected, list) and len(self.expected) == 1 \
            and same_value(got, self.expected[0], tolerance)


def _lists(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_lists(item) for item in value]
    return value


@dataclass(frozen=True)
class Suite:
    """A row's tests in one of four forms (``kind``): ``io``, ``call``, ``probe`` or ``asserts``.

    ``probe``: ``probes`` are the sandbox-side expressions of all cases (one run), ``setup`` the test's
    imports, ``bind`` the names the entry point goes by (``candidate``). ``asserts``: ``scripts``.
    """

    kind: str
    io: list[tuple[str, str]] = field(default_factory=list)
    calls: list[CallCase] = field(default_factory=list)
    fn_name: str = ""
    cases: list[ProbeCase] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    bind: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len({"io": self.io, "call": self.calls, "probe": self.cases, "asserts": self.scripts}[self.kind])

    @property
    def case_ends(self) -> list[int]:
        """``probe``: the index of each case's last probe (a case without probes ends where the last one did)."""
        ends = []
        for case in self.cases:
            indices = [index for check in case.checks for index in check.probe_indices()]
            ends.append(max(indices, default=ends[-1] if ends else -1))
        return ends


# ----- parsing the column ---------------------------------------------------------------------------
def parse_tests(value: Any, entry_point: Any = None) -> Suite:
    """Normalise a tests column value; raises ``UnusableTestsError`` saying what was wrong.

    Text is parsed once per (text, entry point): a training run scores the same tests for every
    completion of a prompt. The suites returned are shared, so nobody may change them.
    """
    entry_point = entry_point if isinstance(entry_point, str) else None
    if isinstance(value, str):
        return _parse_text(value, entry_point)
    if isinstance(value, dict):
        if value.get("fn_name") is not None:
            return call_tests(value)
        inputs, outputs = value.get("inputs", value.get("input")), value.get("outputs", value.get("output"))
        if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
            raise UnusableTestsError("a tests dict needs equally long 'inputs' and 'outputs' lists")
        return io_tests(list(zip(inputs, outputs, strict=True)))
    if isinstance(value, Sequence) and value:
        if all(isinstance(item, str) for item in value):
            return python_tests(list(value), entry_point)
        if all(isinstance(item, dict) and "input" in item and "output" in item for item in value):
            return io_tests([(item["input"], item["output"]) for item in value])
    raise UnusableTestsError(
        "tests must be Python test code, a list of asserts, stdin/stdout cases "
        "([{'input': ..., 'output': ...}] or {'inputs': [...], 'outputs': [...]}) or call-based cases "
        f"({{'fn_name': ..., 'inputs': [...], 'outputs': [...]}}); got {type(value).__name__}"
    )


@functools.lru_cache(maxsize=2048)
def _parse_text(value: str, entry_point: str | None) -> Suite:
    stripped = value.strip()
    if stripped[:1] in ("{", "["):
        try:
            return parse_tests(json.loads(stripped), entry_point)
        except json.JSONDecodeError:
            pass
    if not stripped:
        raise UnusableTestsError("the tests column is empty")
    return python_tests([value], entry_point)


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


def python_tests(scripts: list[str], entry_point: str | None) -> Suite:
    """Test code as probes where every test converts, else as scripts for the in-interpreter harness."""
    scripts = [_with_check_call(script, entry_point) for script in scripts]
    converter = Converter(entry_point)
    try:
        cases = [ProbeCase(converter.convert(script)) for script in scripts]
    except (NotConvertible, SyntaxError, ValueError, RecursionError):
        return Suite("asserts", scripts=scripts)
    return Suite("probe", cases=cases, probes=converter.probes, setup=converter.setup,
                 bind=sorted(converter.bind))


def _with_check_call(script: str, entry_point: str | None) -> str:
    """HumanEval: a ``check(candidate)`` that nothing calls is called on the entry point."""
    if "def check" not in script or _CHECK_CALL.search(script):
        return script
    if not entry_point:
        raise UnusableTestsError("the tests define check(candidate) but the row has no entry point to check")
    return f"{script}\n\ncheck({entry_point})\n"


# ----- turning asserts into probes and checks ----------------------------------------------------------
class Converter:
    """Splits test scripts into sandbox-side expressions (probes) and checks on their values.

    Accepted: ``assert`` statements (and ``def check(param): <asserts>`` called once on the entry
    point), imports (run in the sandbox before the probes), docstrings, and names bound to constants
    (``METADATA = {...}``, ``expected = [1, 2]``), which only the checks may use: a sandbox-side
    expression that mentions one is not convertible (its value would be in the solution's reach).
    """

    def __init__(self, entry_point: str | None):
        self.entry_point = entry_point
        self.probes: list[str] = []
        self.setup: list[str] = []
        self.bind: set[str] = set()
        self.constants: dict[str, Any] = {}

    def convert(self, script: str) -> tuple[Check, ...]:
        checks: list[Check] = []
        body = ast.parse(script).body
        functions = {node.name: node for node in body if isinstance(node, ast.FunctionDef)}
        for node in body:
            if isinstance(node, ast.FunctionDef):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _called(node.value) in functions:
                checks += self._check_function(functions.pop(_called(node.value)), node.value)
            else:
                checks += self._statement(node)
        if functions:
            raise NotConvertible(f"helper functions {sorted(functions)}")
        return tuple(checks)

    def _check_function(self, function: ast.FunctionDef, call: ast.Call) -> list[Check]:
        params = [arg.arg for arg in function.args.args]
        if len(params) != 1 or len(call.args) != 1 or not isinstance(call.args[0], ast.Name) or call.keywords \
                or function.decorator_list:
            raise NotConvertible("a check function other than check(candidate)")
        if call.args[0].id != self.entry_point:
            raise NotConvertible("check() is called on something other than the entry point")
        self.bind.add(params[0])
        shadowed = dict(self.constants)
        try:
            return [check for node in function.body for check in self._statement(node)]
        finally:
            self.constants = shadowed  # names bound inside check() stay inside it

    def _statement(self, node: ast.stmt) -> list[Check]:
        if isinstance(node, ast.Assert):
            return [self._test(node.test)]
        if isinstance(node, ast.Import | ast.ImportFrom):
            self.setup.append(ast.unparse(node))
            return []
        if isinstance(node, ast.Pass) or isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return []
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.constants[node.targets[0].id] = self._constant(node.value)
            return []
        raise NotConvertible(f"a {type(node).__name__} statement")

    def _test(self, node: ast.expr) -> Check:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return Check("not", parts=(self._test(node.operand),))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return Check("all", parts=tuple(self._test(value) for value in node.values))
        if self._is_constant(node):
            return Check("const", args=(bool(self._constant(node)),))
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node.left, type(node.ops[0]), node.comparators[0])
        if isinstance(node, ast.Call) and _called(node) in ("math.isclose", "isclose") and len(node.args) == 2:
            keywords = {k.arg: self._constant(k.value) for k in node.keywords}
            if set(keywords) - {"rel_tol", "abs_tol"}:
                raise NotConvertible("math.isclose with other arguments")
            probe, expected = self._sides(node.args[0], node.args[1])
            return Check("isclose", (probe,), (expected, keywords.get("rel_tol", 1e-9), keywords.get("abs_tol", 0.0)))
        return Check("truthy", (self._probe(node),))

    def _compare(self, left: ast.expr, op: type, right: ast.expr) -> Check:
        if op in (ast.Lt, ast.LtE) and self._is_constant(right):
            distance = _distance(left)
            if distance is not None:  # abs(value - expected) < tolerance
                probe, expected = self._sides(*distance)
                return Check("close", (probe,), (expected, self._constant(right), op is ast.LtE))
        if self._is_constant(left) and not self._is_constant(right):
            if op not in FLIPPED:
                raise NotConvertible("a constant on the left of in/is")
            left, right, op = right, left, FLIPPED[op]
        if not self._is_constant(right):
            raise NotConvertible("a comparison of two computed values")
        expected = self._constant(right)
        if op in (ast.Is, ast.IsNot) and expected not in (None, True, False):
            raise NotConvertible("'is' with something other than None, True or False")
        return Check("compare", (self._probe(left),), (op, expected))

    def _sides(self, first: ast.expr, second: ast.expr) -> tuple[int, Any]:
        if self._is_constant(first):
            first, second = second, first
        if not self._is_constant(second):
            raise NotConvertible("a comparison of two computed values")
        return self._probe(first), self._constant(second)

    def _probe(self, node: ast.expr) -> int:
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if names & set(self.constants):
            raise NotConvertible("the tested expression uses a name the test binds")
        self.probes.append(ast.unparse(node))
        return len(self.probes) - 1

    def _is_constant(self, node: ast.expr) -> bool:
        try:
            self._constant(node)
        except NotConvertible:
            return False
        return True

    def _constant(self, node: ast.expr) -> Any:
        """A constant expression's value: literals, names bound to constants, + - * / // % on numbers,
        and set/tuple/sorted/... of constants. Anything else is not a constant."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.constants[node.id]
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = [self._constant(item) for item in node.elts]
            return {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)](items)
        if isinstance(node, ast.Dict) and None not in node.keys:
            return {self._constant(k): self._constant(v) for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            operand = self._constant(node.operand)
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}[type(node.op)](operand)
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            left, right = self._constant(node.left), self._constant(node.right)
            if not all(isinstance(x, int | float) for x in (left, right)):
                raise NotConvertible("arithmetic on something other than numbers")
            try:
                return ARITHMETIC[type(node.op)](left, right)
            except ArithmeticError:
                raise NotConvertible("arithmetic that fails") from None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CONSTRUCTORS \
                and not node.keywords and node.func.id not in self.constants:
            try:
                return CONSTRUCTORS[node.func.id](*(self._constant(arg) for arg in node.args))
            except (TypeError, ValueError):
                raise NotConvertible(f"{node.func.id}() of these constants fails") from None
        raise NotConvertible(f"not a constant: {type(node).__name__}")


def _called(call: ast.Call) -> str:
    try:
        return ast.unparse(call.func)
    except Exception:
        return ""


def _distance(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """``abs(a - b)`` or ``math.fabs(a - b)``: the two operands, else ``None``."""
    if isinstance(node, ast.Call) and _called(node) in ("abs", "math.fabs", "fabs") and len(node.args) == 1 \
            and isinstance(node.args[0], ast.BinOp) and isinstance(node.args[0].op, ast.Sub):
        return node.args[0].left, node.args[0].right
    return None
