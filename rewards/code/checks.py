"""Python tests as calls made in the sandbox and checks made here, in the trainer.

A small interpreter runs a test script (asserts, assignments, ``for`` loops and comprehensions over
known values, ``def check(candidate)`` called on the entry point, ``import math``) twice in effect:
while planning, each call of a solution function with known arguments becomes a *probe* (made in
the sandbox, its value reported as plain data) and stands for a :class:`Later` value; once the run
has reported, every comparison, reduction and wrapper around the calls (``or``, chained
comparisons, ``all(...)``, ``sum(...)``, ``math.isclose``, ``not``, ...) is computed here on the
reported values. So only the callee's own value comes from the sandbox.

The work is bounded whatever the values: operations that could run away on a hostile value
(big-number arithmetic, sequence repetition, padding, sets of keys that hash alike) are refused
past fixed sizes, and any error while checking (a ``TypeError`` included) fails the check, it is
never read as ``False``. A script the interpreter cannot follow raises :class:`NotConvertible`
and runs in the harness's test process instead.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._plain import NotPlainData, ObjectUsed, _spread, plain

__all__ = [
    "BINARY",
    "COMPARE",
    "CONSTRUCTORS",
    "FUNCTIONS",
    "Later",
    "MATH",
    "MAX_BITS",
    "MAX_DIVISION_BITS",
    "MAX_ITEMS",
    "MAX_PROBES",
    "MAX_STEPS",
    "METHODS",
    "Module",
    "NotConvertible",
    "OBJECT_USED",
    "POISONED",
    "Planner",
    "ProbeFailed",
    "Refused",
    "Solution",
    "TYPES",
    "UNARY",
    "holds",
    "resolve",
]

MAX_ITEMS = 1 << 20  # elements a check may build (strings, lists)
MAX_BITS = 1 << 20  # bits of an integer a check may build
MAX_DIVISION_BITS = 1 << 16  # bits of integers a check may divide (division is quadratic)
MAX_PROBES = 5000
MAX_STEPS = 200_000  # nodes the planner evaluates per script


OBJECT_USED = "an object of the solution used as a value"


class NotConvertible(Exception):
    """A test the planner cannot split into probes and checks (it runs in the test process instead)."""


class Refused(Exception):
    """An operation whose cost on these values is not bounded (the check fails)."""


class ProbeFailed(Exception):
    """A check needs a probe that reported no value (``kind``: ``error`` or ``unusable``)."""

    def __init__(self, kind: str, why: str):
        super().__init__(why)
        self.kind, self.why = kind, why


class Later:
    """A value known once the run has reported: ``compute(values)`` gives it, or raises."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[dict], Any]):
        self.compute = compute


def resolve(value: Any, values: dict) -> Any:
    return value.compute(values) if isinstance(value, Later) else value


def _fails(error: BaseException) -> Later:
    def compute(values: dict) -> Any:
        raise error

    return Later(compute)


# ----- bounded operations ----------------------------------------------------------------------------
def _bits(value: Any) -> int:
    return value.bit_length() if type(value) is int or type(value) is bool else 0


def _length(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple) else 0


def _add(a: Any, b: Any) -> Any:
    if _length(a) + _length(b) > MAX_ITEMS:
        raise Refused("a sequence too long")
    return a + b


def _mul(a: Any, b: Any) -> Any:
    for seq, times in ((a, b), (b, a)):
        if isinstance(seq, str | bytes | list | tuple) and type(times) in (int, bool):
            if len(seq) * max(times, 0) > MAX_ITEMS:
                raise Refused("a sequence too long")
    if _bits(a) + _bits(b) > MAX_BITS:
        raise Refused("an integer too big")
    return a * b


def _pow(a: Any, b: Any, modulo: Any = None) -> Any:
    if modulo is not None:
        if max(_bits(a), _bits(b), _bits(modulo)) > MAX_DIVISION_BITS:
            raise Refused("an integer too big")
        return pow(a, b, modulo)
    if type(b) is int and b > 0 and type(a) in (int, bool) and abs(a) > 1 and _bits(a) * b > MAX_BITS:
        raise Refused("an integer too big")
    return a ** b


def _divide(op: Callable) -> Callable:
    def divide(a: Any, b: Any) -> Any:
        if max(_bits(a), _bits(b)) > MAX_DIVISION_BITS:
            raise Refused("an integer too big")
        if op is operator.mod and isinstance(a, str | bytes):
            raise Refused("string formatting")
        return op(a, b)

    return divide


def _lshift(a: Any, b: Any) -> Any:
    if type(b) is int and b > 0 and _bits(a) + b > MAX_BITS:
        raise Refused("an integer too big")
    return a << b


BINARY = {ast.Add: _add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: _divide(operator.truediv),
          ast.FloorDiv: _divide(operator.floordiv), ast.Mod: _divide(operator.mod), ast.Pow: _pow,
          ast.LShift: _lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
          ast.BitOr: operator.or_, ast.BitXor: operator.xor}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
           ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not}


def _hashed(build: Callable) -> Callable:
    def construct(*args: Any) -> Any:
        if args and not isinstance(args[0], range):
            items = list(args[0])
            keys = [k for k, _ in items] if build is dict and not isinstance(args[0], dict) else items
            try:
                _spread(list(args[0].keys()) if isinstance(args[0], dict) else keys)
            except NotPlainData as exc:
                raise Refused(str(exc)) from None
        return build(*args)

    return construct


def _sized(build: Callable) -> Callable:
    def construct(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(arg, range) and len(arg) > MAX_ITEMS for arg in args):
            raise Refused("a sequence too long")
        return build(*args, **kwargs)

    return construct


def _sum(items: Any, start: Any = 0) -> Any:
    if type(start) not in (int, float, bool, complex):
        raise Refused("sum of sequences")
    total = start
    for item in items:
        total = _add(total, item)
    return total


def _guard_argument(limit: int, position: int) -> Callable:
    """A math function whose argument at ``position`` must stay at most ``limit`` (factorial, comb)."""
    def wrap(function: Callable) -> Callable:
        def call(*args: Any) -> Any:
            if len(args) > position and isinstance(args[position], int) and args[position] > limit:
                raise Refused("an argument too big")
            return function(*args)

        return call

    return wrap


TYPES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "tuple": tuple, "dict": dict,
         "set": set, "frozenset": frozenset, "bytes": bytes, "complex": complex, "type": type}
CONSTRUCTORS = {int: int, float: float, str: str, bool: bool, complex: complex, bytes: bytes,
                list: _sized(list), tuple: _sized(tuple), set: _hashed(set), frozenset: _hashed(frozenset),
                dict: _hashed(dict), type: type, range: range}
FUNCTIONS: dict[str, Callable] = {
    "abs": abs, "all": all, "any": any, "len": len, "min": min, "max": max, "round": round, "repr": repr,
    "sorted": _sized(sorted), "sum": _sum, "isinstance": isinstance, "chr": chr, "ord": ord, "hex": hex,
    "bin": bin, "oct": oct, "divmod": _divide(divmod), "pow": _pow,
    "reversed": lambda x: list(reversed(x)), "enumerate": _sized(lambda *a: list(enumerate(*a))),
    "zip": _sized(lambda *a: list(zip(*a, strict=False))), "range": range,
}
MATH: dict[str, Any] = {
    **{name: getattr(math, name) for name in (
        "isclose", "fabs", "sqrt", "floor", "ceil", "trunc", "log", "log2", "log10", "exp", "isnan", "isinf",
        "isfinite", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "hypot", "degrees", "radians",
        "copysign", "fsum", "pi", "e", "inf", "nan", "tau")},
    "gcd": _divide(math.gcd), "factorial": _guard_argument(5000, 0)(math.factorial),
    "comb": _guard_argument(5000, 0)(math.comb), "perm": _guard_argument(5000, 0)(math.perm),
}
METHODS = {
    str: {"lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith",
          "endswith", "count", "find", "rfind", "index", "rindex", "isdigit", "isalpha", "isalnum", "isspace",
          "islower", "isupper", "istitle", "isnumeric", "isdecimal", "title", "capitalize", "swapcase",
          "casefold", "join", "partition", "rpartition"},
    list: {"count", "index"}, tuple: {"count", "index"},
    dict: {"keys", "values", "items", "get"},
    set: {"issubset", "issuperset", "isdisjoint"}, frozenset: {"issubset", "issuperset", "isdisjoint"},
}


def _method(value: Any, name: str) -> Callable:
    if name == "replace" and type(value) is str:
        def replace(old: Any, new: Any, *count: Any) -> Any:
            if isinstance(new, str) and isinstance(old, str) and (len(value) + 1) * len(new) > MAX_ITEMS:
                raise Refused("a string too long")
            return value.replace(old, new, *count)

        return replace
    if name not in METHODS.get(type(value), ()):
        raise Refused(f"method {name} of {type(value).__name__}")
    return getattr(value, name)


# ----- the planner ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Solution:
    """A name the tests take from the solution (the entry point under ``candidate``, or any free name)."""

    name: str


class Module:
    """``math``, imported by the test."""


POISONED = object()  # a name whose object a solution call may have changed: its value is not known here


class Planner:
    """Turns test scripts into probes (``calls``) and per script a list of checks (values or :class:`Later`).

    ``trusted``: names the prompt's own code defines (helpers the tests mean; they cannot run here).
    """

    def __init__(self, entry_point: str | None, trusted: frozenset[str] = frozenset()):
        self.entry_point, self.trusted = entry_point, trusted
        self.calls: list[dict] = []
        self.steps = 0

    # ----- statements -----
    def script(self, source: str) -> list[Any]:
        checks: list[Any] = []
        env: dict[str, Any] = {}
        body = ast.parse(source).body
        functions = {node.name: node for node in body if isinstance(node, ast.FunctionDef)}
        for node in body:
            if isinstance(node, ast.FunctionDef):
                continue
            call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
            if call is not None and isinstance(call.func, ast.Name) and call.func.id in functions \
                    and call.func.id not in env:
                if not self._check_function(functions.pop(call.func.id), call, dict(env), checks):
                    break
            elif not self._statements([node], env, checks, functions):
                break
        if functions:
            raise NotConvertible(f"helper functions {sorted(functions)}")
        return checks

    def _check_function(self, function: ast.FunctionDef, call: ast.Call, env: dict, checks: list) -> bool:
        params = function.args
        if len(params.args) != 1 or params.vararg or params.kwarg or params.kwonlyargs or params.posonlyargs \
                or len(call.args) != 1 or call.keywords or function.decorator_list:
            raise NotConvertible("a check function other than check(candidate)")
        argument = call.args[0]
        if not isinstance(argument, ast.Name) or argument.id != self.entry_point or argument.id in env:
            raise NotConvertible("check() is called on something other than the entry point")
        env[params.args[0].arg] = Solution(argument.id)
        return self._statements(function.body, env, checks, {})

    def _statements(self, nodes: list[ast.stmt], env: dict, checks: list, functions: dict) -> bool:
        """Plan ``nodes``; ``False`` once one of them raises for every solution (the script stops there)."""
        for node in nodes:
            self._step()
            try:
                if not self._statement(node, env, checks, functions):
                    return False
            except (NotConvertible, Refused, RecursionError) as exc:
                raise NotConvertible(str(exc)) from None
            except Exception as exc:  # the test itself raises here, whatever the solution does
                checks.append(_fails(exc))
                return False
        return True

    def _statement(self, node: ast.stmt, env: dict, checks: list, functions: dict) -> bool:
        if isinstance(node, ast.Assert):
            checks.append(self.expr(node.test, env))
        elif isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant):
                return True
            value = self.expr(node.value, env)  # a call for its effect: it must not raise
            checks.append(Later(lambda values, v=value: (resolve(v, values), True)[1]))
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value, env)
            for target in node.targets:
                self._bind(target, value, env)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            current = self._name(node.target.id, env)
            env[node.target.id] = self._lift(BINARY[type(node.op)], current, self.expr(node.value, env)) \
                if type(node.op) in BINARY else self._refuse("this operator")
        elif isinstance(node, ast.For) and not node.orelse and not _jumps(node.body):
            for item in self._iterate(self.expr(node.iter, env)):
                self._bind(node.target, item, env)
                if not self._statements(node.body, env, checks, functions):
                    return False
        elif isinstance(node, ast.If):
            condition = self.expr(node.test, env)
            if isinstance(condition, Later):
                raise NotConvertible("a branch on a value of the solution")
            return self._statements(node.body if condition else node.orelse, env, checks, functions)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            self._import(node, env)
        elif not isinstance(node, ast.Pass):
            raise NotConvertible(f"a {type(node).__name__} statement")
        return True

    def _import(self, node: ast.Import | ast.ImportFrom, env: dict) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name != "math":
                    raise NotConvertible(f"import {alias.name}")
                env[alias.asname or "math"] = Module()
            return
        if node.module != "math" or node.level:
            raise NotConvertible(f"from {node.module} import")
        for alias in node.names:
            if alias.name not in MATH:
                raise NotConvertible(f"from math import {alias.name}")
            env[alias.asname or alias.name] = MATH[alias.name]

    def _bind(self, target: ast.expr, value: Any, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List) and not isinstance(value, Later):
            items = list(self._iterate(value))
            if len(items) != len(target.elts):
                raise ValueError("cannot unpack")
            for element, item in zip(target.elts, items, strict=True):
                self._bind(element, item, env)
        else:
            raise NotConvertible("this assignment")

    def _iterate(self, value: Any) -> list:
        if isinstance(value, Later) or isinstance(value, Module | Solution):
            raise NotConvertible("a loop over a value of the solution")
        if isinstance(value, range) and len(value) > MAX_STEPS:
            raise NotConvertible("a loop too long")
        items = list(value)
        if any(isinstance(item, Later) for item in items):
            raise NotConvertible("a loop over values of the solution")
        return items

    def _step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise NotConvertible("a test too long to plan")

    @staticmethod
    def _refuse(what: str) -> Any:
        raise NotConvertible(what)

    # ----- expressions -----
    def expr(self, node: ast.expr, env: dict) -> Any:
        self._step()
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise NotConvertible(f"a {type(node).__name__} expression")
        return method(node, env)

    def _lift(self, function: Callable, *operands: Any) -> Any:
        """``function(*operands)`` now, or later when an operand is known only then."""
        if not any(isinstance(x, Later) for x in operands):
            return function(*operands)
        return Later(lambda values: function(*(resolve(x, values) for x in operands)))

    def _Constant(self, node: ast.Constant, env: dict) -> Any:
        return node.value

    def _Name(self, node: ast.Name, env: dict) -> Any:
        value = self._name(node.id, env)
        if isinstance(value, Solution):
            raise NotConvertible("a function of the solution used as a value")
        return value

    def _name(self, name: str, env: dict) -> Any:
        if name in env:
            if env[name] is POISONED:
                raise NotConvertible(f"{name} after a call that may have changed it")
            return env[name]
        if name == self.entry_point:  # the solution's, even named like a builtin (MBPP's ``sum``)
            return Solution(name)
        if name in TYPES:
            return TYPES[name]
        if name in FUNCTIONS:
            return FUNCTIONS[name]
        if name in self.trusted or hasattr(builtins, name):
            raise NotConvertible(f"{name} cannot be computed here")
        return Solution(name)

    def _Tuple(self, node: ast.Tuple, env: dict) -> Any:
        return self._lift(lambda *items: tuple(items), *self._elements(node.elts, env))

    def _List(self, node: ast.List, env: dict) -> Any:
        return self._lift(lambda *items: list(items), *self._elements(node.elts, env))

    def _Set(self, node: ast.Set, env: dict) -> Any:
        return self._lift(lambda *items: CONSTRUCTORS[set](items), *self._elements(node.elts, env))

    def _Dict(self, node: ast.Dict, env: dict) -> Any:
        if None in node.keys:
            raise NotConvertible("** in a dict display")
        keys, values = self._elements(node.keys, env), self._elements(node.values, env)
        half = len(keys)
        return self._lift(lambda *items: CONSTRUCTORS[dict](list(zip(items[:half], items[half:], strict=True))),
                          *keys, *values)

    def _elements(self, nodes: list, env: dict) -> list:
        if any(isinstance(node, ast.Starred) for node in nodes):
            raise NotConvertible("* in a display")
        return [self.expr(node, env) for node in nodes]

    def _UnaryOp(self, node: ast.UnaryOp, env: dict) -> Any:
        return self._lift(UNARY[type(node.op)], self.expr(node.operand, env))

    def _BinOp(self, node: ast.BinOp, env: dict) -> Any:
        if type(node.op) not in BINARY:
            raise NotConvertible("this operator")
        return self._lift(BINARY[type(node.op)], self.expr(node.left, env), self.expr(node.right, env))

    def _BoolOp(self, node: ast.BoolOp, env: dict) -> Any:
        is_and = isinstance(node.op, ast.And)
        operands = []
        for value in node.values:
            operand = self._maybe(value, env) if operands else self.expr(value, env)
            if not isinstance(operand, Later) and not operands and bool(operand) != is_and:
                return operand  # decided before any value of the solution is needed
            operands.append(operand)

        def compute(values: dict) -> Any:
            result = None
            for operand in operands:  # Python's short circuit: later operands are not looked at
                result = resolve(operand, values)
                if bool(result) != is_and:
                    return result
            return result

        return Later(compute) if any(isinstance(x, Later) for x in operands) else compute({})

    def _Compare(self, node: ast.Compare, env: dict) -> Any:
        operands = [self.expr(node.left, env), *(self.expr(c, env) for c in node.comparators)]
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.Is | ast.IsNot) and not (isinstance(right, ast.Constant)
                                                             and right.value in (None, True, False)):
                raise NotConvertible("'is' with something other than None, True or False")
        ops = [COMPARE[type(op)] for op in node.ops]

        def compare(*values: Any) -> bool:
            for op, a, b in zip(ops, values, values[1:], strict=False):
                if not op(a, b):  # a chain stops at its first false link, as in Python
                    return False
            return True

        return self._lift(compare, *operands)

    def _IfExp(self, node: ast.IfExp, env: dict) -> Any:
        test = self.expr(node.test, env)
        if not isinstance(test, Later):
            return self.expr(node.body if test else node.orelse, env)
        body, orelse = self._maybe(node.body, env), self._maybe(node.orelse, env)
        return Later(lambda values: resolve(body if resolve(test, values) else orelse, values))

    def _maybe(self, node: ast.expr, env: dict) -> Any:
        """An operand Python may never evaluate: an error in it counts only if it is looked at."""
        try:
            return self.expr(node, env)
        except (NotConvertible, Refused, RecursionError):
            raise
        except Exception as exc:
            return _fails(exc)

    def _Subscript(self, node: ast.Subscript, env: dict) -> Any:
        return self._lift(operator.getitem, self.expr(node.value, env), self.expr(node.slice, env))

    def _Slice(self, node: ast.Slice, env: dict) -> Any:
        parts = [self.expr(p, env) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return self._lift(slice, *parts)

    def _Attribute(self, node: ast.Attribute, env: dict) -> Any:
        owner = self.expr(node.value, env)
        if isinstance(owner, Module):
            if node.attr not in MATH:
                raise NotConvertible(f"math.{node.attr}")
            return MATH[node.attr]
        raise NotConvertible("an attribute")

    def _Call(self, node: ast.Call, env: dict) -> Any:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise NotConvertible("* or ** in a call")
        method = isinstance(node.func, ast.Attribute) and not isinstance(self._peek(node.func.value, env), Module)
        if isinstance(node.func, ast.Name):
            function = self._name(node.func.id, env)
        elif method:
            owner = self.expr(node.func.value, env)
            if isinstance(owner, Later):  # an object's method runs in the solution: the test process calls it
                raise NotConvertible("a method of a value of the solution")
            function = self._lift(_method, owner, node.func.attr)
        else:
            function = self.expr(node.func, env)
        args = [self.expr(a, env) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, env) for k in node.keywords}
        if isinstance(function, Solution):
            return self._probe(function.name, node, args, kwargs, env)
        if isinstance(function, type):
            if function not in CONSTRUCTORS:
                raise NotConvertible(f"{function.__name__}()")
            function = CONSTRUCTORS[function]
        elif not method and function not in FUNCTIONS.values() and function not in MATH.values():
            raise NotConvertible("a call of something the checks cannot compute")
        names = list(kwargs)
        return self._lift(lambda f, *a: _bounded_call(f, a[:len(args)], dict(zip(names, a[len(args):], strict=True))),
                          function, *args, *kwargs.values())

    def _peek(self, node: ast.expr, env: dict) -> Any:
        return env.get(node.id) if isinstance(node, ast.Name) else None

    def _probe(self, name: str, node: ast.Call, args: list, kwargs: dict, env: dict) -> Later:
        if any(isinstance(x, Later) for x in (*args, *kwargs.values())):
            raise NotConvertible("a call whose arguments come from the solution")
        if len(self.calls) >= MAX_PROBES:
            raise NotConvertible("too many calls")
        try:
            call = {"name": name, "args": [plain(a) for a in args], "kwargs": {k: plain(v) for k, v in kwargs.items()}}
        except NotPlainData as exc:
            raise NotConvertible(f"an argument that is not plain data ({exc})") from None
        passed = {id(x) for x in (*args, *kwargs.values()) if _mutable(x)}
        for key, value in env.items():  # the solution may change what it was given
            if id(value) in passed:
                env[key] = POISONED
        self.calls.append(call)
        index = len(self.calls) - 1

        def compute(values: dict) -> Any:
            kind, payload = values.get(index, ("error", "not run"))
            if kind != "value":
                raise ProbeFailed(kind, str(payload))
            return payload

        return Later(compute)

    def _ListComp(self, node: ast.ListComp, env: dict) -> Any:
        return self._lift(lambda *items: list(items), *self._comprehension(node, env, lambda e: self.expr(node.elt, e)))

    def _SetComp(self, node: ast.SetComp, env: dict) -> Any:
        items = self._comprehension(node, env, lambda e: self.expr(node.elt, e))
        return self._lift(lambda *x: CONSTRUCTORS[set](x), *items)

    def _GeneratorExp(self, node: ast.GeneratorExp, env: dict) -> Any:
        return self._ListComp(node, env)  # consumed at once by what takes it (all, any, sum, sorted, ...)

    def _DictComp(self, node: ast.DictComp, env: dict) -> Any:
        pairs = self._comprehension(node, env, lambda e: (self.expr(node.key, e), self.expr(node.value, e)))
        flat = [x for pair in pairs for x in pair]
        return self._lift(lambda *x: CONSTRUCTORS[dict](list(zip(x[::2], x[1::2], strict=True))), *flat)

    def _comprehension(self, node: Any, env: dict, element: Callable[[dict], Any]) -> list:
        results: list = []

        def walk(generators: list, scope: dict) -> None:
            if not generators:
                results.append(element(scope))
                if len(results) > MAX_STEPS:
                    raise NotConvertible("a comprehension too long")
                return
            generator = generators[0]
            if generator.is_async:
                raise NotConvertible("async comprehension")
            for item in self._iterate(self.expr(generator.iter, scope)):
                inner = dict(scope)
                self._bind(generator.target, item, inner)
                conditions = [self.expr(condition, inner) for condition in generator.ifs]
                if any(isinstance(c, Later) for c in conditions):
                    raise NotConvertible("a filter on a value of the solution")
                if all(conditions):
                    walk(generators[1:], inner)

        walk(node.generators, dict(env))
        return results


def _bounded_call(function: Callable, args: tuple, kwargs: dict) -> Any:
    """A safe function on these arguments, refused where it would walk a huge range or build huge bytes."""
    for arg in (*args, *kwargs.values()):
        try:
            too_long = isinstance(arg, range) and len(arg) > MAX_ITEMS
        except OverflowError:
            too_long = True
        if too_long:
            raise Refused("a sequence too long")
    if function is CONSTRUCTORS[bytes] and args and type(args[0]) is int and args[0] > MAX_ITEMS:
        raise Refused("a sequence too long")
    return function(*args, **kwargs)


def _jumps(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Break | ast.Continue | ast.Return) for stmt in body for n in ast.walk(stmt))


def _mutable(value: Any) -> bool:
    if isinstance(value, list | dict | set):
        return True
    return isinstance(value, tuple) and any(_mutable(item) for item in value)


def holds(check: Any, values: dict) -> str | None:
    """``None`` when the check holds on the reported values, else why not (the probe's error, or the error
    the check raised: never ``False`` for an error)."""
    try:
        return None if bool(resolve(check, values)) else "AssertionError"
    except ProbeFailed as exc:
        raise exc
    except ObjectUsed as exc:
        if exc.standard:  # a standard-library value the checks cannot verify: the row abstains, never 0
            raise ProbeFailed("unusable", str(exc)) from None
        return OBJECT_USED
    except Refused as exc:
        return f"refused to check: {exc}"
    except Exception as exc:
        return type(exc).__name__
