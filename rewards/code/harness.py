"""The programs the ``code`` reward runs around a solution, and how to read what they report.

Two harnesses, both given everything on stdin (nothing on disk for a solution to overwrite) and
reporting on a private copy of stdout (the solution's own prints go to stderr):

- ``VALUES`` (strict): loads the solution, then evaluates each *probe* -- an expression from a test
  (``candidate(1, 2)``) or a call with JSON arguments (``fn_name`` tests) -- and reports the value as
  plain data: ``None``, bools, ints, floats, strings, bytes, lists, tuples, dicts, sets, each checked
  by exact type. Expected values never enter the sandbox; the reward compares outside it. A
  solution can report any value it likes, but only a right one matches.
- ``ASSERTS`` (in-interpreter): for tests that cannot be split that way (loops, helpers, custom
  objects), runs each test after the solution in the same interpreter and reports pass/fail
  markers tagged with a nonce. A solution that digs into the interpreter can forge those; the
  reward says when this mode ran.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

# Runs in the sandbox's interpreter (stdlib only). Records: one JSON list per line, [index, kind, payload];
# index -1 is about the solution itself ("syntax", "failed", "exited", "ready").
VALUES = '''\
import json, os, sys, traceback


def plain(value, depth=0):
    """The value as JSON data with tags for what JSON lacks; exact types only (no subclass, no __eq__)."""
    kind = type(value)
    if depth > 100:
        raise TypeError("nested too deeply")
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -10 ** 15 < value < 10 ** 15 else {"int": format(value, "x")}
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"float": repr(value)}
    if kind is list:
        return [plain(item, depth + 1) for item in value]
    if kind in (tuple, set, frozenset):
        return {kind.__name__: [plain(item, depth + 1) for item in value]}
    if kind is dict:
        return {"dict": [[plain(k, depth + 1), plain(v, depth + 1)] for k, v in value.items()]}
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is complex:
        return {"complex": [plain(value.real), plain(value.imag)]}
    raise TypeError("not plain data: " + kind.__name__)


def function(namespace, name):
    """A call-based test's function: a method of class Solution (LeetCode style) or a plain function."""
    solution = namespace.get("Solution")
    if isinstance(solution, type) and hasattr(solution, name):
        return getattr(solution(), name)
    if name in namespace:
        return namespace[name]
    raise NameError("the solution defines no " + name)


def main(eval=eval, exec=exec, dumps=json.dumps, write=os.write, exit=os._exit):
    """What the solution may patch later (builtins, json, os) is bound here first, and the tests are
    compiled before it loads: an honest solution that patches them for its own use breaks nothing."""
    records = os.dup(1)
    os.dup2(2, 1)
    request = json.loads(sys.stdin.read())
    os.close(0)
    sys.stdin = open(os.devnull)
    probes = [compile(probe["expr"], "test", "eval") if "expr" in probe else probe for probe in request["probes"]]
    setup = [compile(statement, "test", "exec") for statement in request["setup"]]

    pending = []

    def report(index, kind, payload, flush=True):
        pending.append(dumps([index, kind, payload]) + "\\n")
        if flush:
            write(records, "".join(pending).encode())
            pending.clear()

    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        solution = compile(request["solution"], "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        report(-1, "syntax", type(exc).__name__)
        exit(3)
    try:
        exec(solution, namespace)
    except SystemExit as exc:
        report(-1, "exited", str(exc.code))
        exit(4)
    except BaseException as exc:
        traceback.print_exception(exc)
        report(-1, "failed", (type(exc).__name__ + ": " + str(exc))[:200])
        exit(4)
    report(-1, "ready", "")
    scope = dict(namespace)
    for statement in setup:
        exec(statement, scope)
    for name in request["bind"]:
        if request["entry_point"] in namespace:
            scope[name] = namespace[request["entry_point"]]
    ends = set(request["case_ends"])  # a case's records go out together, once its last probe is done
    for index, probe in enumerate(probes):
        try:
            if isinstance(probe, dict):
                value = function(namespace, probe["call"])(*probe["args"])
            else:
                value = eval(probe, scope)
            payload = plain(value)
        except BaseException as exc:
            report(index, "error", type(exc).__name__, index in ends)
        else:
            report(index, "value", payload, index in ends)
    exit(0)


main()
'''

# Runs in the sandbox's interpreter: the nonce comes first on stdin, then the request.
ASSERTS = '''\
import json, os, sys, traceback


def main(compile=compile, exec=exec, str=str, type=type, write=os.write, fstat=os.fstat,
         print_exc=traceback.print_exc):
    records = os.dup(1)
    identity = fstat(records)[1:3]
    os.dup2(2, 1)
    nonce = sys.stdin.readline().strip()
    request = json.loads(sys.stdin.read())
    os.close(0)
    sys.stdin = open(os.devnull)

    def mark(*words):
        if fstat(records)[1:3] != identity:  # something was dup2'ed over the markers' descriptor
            raise SystemExit(5)
        write(records, ("\\n" + " ".join([nonce, *[str(word) for word in words]]) + "\\n").encode())

    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        solution = compile(request["solution"], "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        mark("syntax", type(exc).__name__)
        raise SystemExit(3)
    exec(solution, namespace)
    mark("ready")
    for i, test in enumerate(request["tests"]):
        try:
            exec(compile(test, "test_" + str(i), "exec"), namespace)
        except Exception as exc:
            print_exc()
            mark("fail", i, type(exc).__name__)
        else:
            mark("pass", i)
    mark("done")


main()
'''


class NotPlainData(ValueError):
    """A reported value that is not in the plain-data form the VALUES harness writes."""


def decode(data: Any) -> Any:
    """Python values from what ``plain`` wrote (only built-in types, so comparing them runs no solution code)."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    if len(data) != 1:
        raise NotPlainData(f"unknown value form {sorted(data)[:3]}")
    (tag, body), = data.items()
    if tag == "int" and isinstance(body, str):
        return int(body, 16)
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag in ("tuple", "set", "frozenset") and isinstance(body, list):
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](decode(item) for item in body)
    if tag == "dict" and isinstance(body, list) and all(isinstance(p, list) and len(p) == 2 for p in body):
        return {decode(k): decode(v) for k, v in body}
    if tag == "bytes" and isinstance(body, str):
        return bytes.fromhex(body)
    if tag == "complex" and isinstance(body, list) and len(body) == 2:
        return complex(decode(body[0]), decode(body[1]))
    raise NotPlainData(f"unknown value form {tag!r}")


@dataclass
class Outcome:
    """What a VALUES run reported: how the solution loaded, and per probe a value or an error name.

    A probe reported twice with different results (the solution can write to the records too) counts
    as an error, so no race between its records and the harness's can decide a verdict.
    """

    solution: tuple[str, str] = ("missing", "")
    values: dict[int, Any] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)

    def probe(self, index: int) -> tuple[bool, Any]:
        """``(True, value)``, or ``(False, why)`` when the probe raised, was not run or is unreadable."""
        if index in self.errors:
            return False, self.errors[index]
        if index in self.values:
            return True, self.values[index]
        return False, "not run"


def read_values(stdout: str, probes: int) -> Outcome:
    """Parse a VALUES run's records (lines that are not well-formed records are ignored)."""
    outcome = Outcome()
    seen: dict[int, str] = {}
    for line in stdout.splitlines():
        try:
            index, kind, payload = json.loads(line)
        except (ValueError, TypeError, RecursionError):
            continue
        if not isinstance(index, int) or not -1 <= index < probes or not isinstance(kind, str):
            continue
        if index == -1:
            if outcome.solution[0] == "missing":
                outcome.solution = (kind, str(payload))
            continue
        if seen.setdefault(index, line) != line:
            outcome.values.pop(index, None)
            outcome.errors[index] = "conflicting results"
            continue
        if index in outcome.errors or index in outcome.values:
            continue
        if kind == "value":
            try:
                outcome.values[index] = decode(payload)
            except (NotPlainData, ValueError, TypeError, RecursionError) as exc:
                outcome.errors[index] = f"unreadable value ({exc})"
        else:
            outcome.errors[index] = str(payload)[:80] if kind == "error" else "unreadable value"
    return outcome


def same_value(got: Any, expected: Any, tolerance: float | None = None) -> bool:
    """``got == expected`` on built-in values; with ``tolerance``, floats may differ by that much
    (absolute or relative) wherever they stand."""
    if tolerance is not None and isinstance(got, float | int) and isinstance(expected, float) \
            and not isinstance(got, bool):
        return math.isclose(got, expected, rel_tol=tolerance, abs_tol=tolerance)
    if tolerance is not None and type(got) is type(expected) and isinstance(got, list | tuple) \
            and len(got) == len(expected):
        return all(same_value(a, b, tolerance) for a, b in zip(got, expected, strict=True))
    try:
        return bool(got == expected)
    except (TypeError, ValueError, RecursionError):
        return False
