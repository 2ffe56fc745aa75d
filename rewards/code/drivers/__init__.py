"""Call-based tests in Java, Go, Rust and JavaScript: the solution with a generated driver, built once per
row, runs once per case with the case's arguments as a JSON array on stdin; the driver prints the
returned value as JSON on the last line of stdout.

Nothing in the run can forge a pass: the expected values never enter the sandbox, the run reports a
value and nothing else (no marker means "passed", "skipped" or "unusable"), and the value is compared
here. A program that prints a value and exits early, or prints over the driver, has only chosen its
answer; one that exits non-zero, or whose last line is not JSON, fails the case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .go import go_program
from .java import java_program
from .javascript import javascript_program
from .rust import rust_program

__all__ = ["CallProgram", "NoValue", "call_program", "read_value"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}", re.ASCII)


@dataclass(frozen=True)
class CallProgram:
    """What to build for a row's call-based cases: the source, and files beside it."""

    code: str
    files: dict[str, str] = field(default_factory=dict)


class NoValue(Exception):
    """The run's stdout does not end with a JSON value (the case fails)."""


def call_program(language: str, code: str, fn_name: str) -> CallProgram | str:
    """The program that calls ``fn_name`` of ``code``, or why the tests cannot be run (a bad name: unusable
    tests; a function the solution lacks: the solution's failure, said in a string starting "no function")."""
    if not _IDENTIFIER.fullmatch(fn_name):
        raise ValueError(f"fn_name {fn_name!r} is not an identifier")
    if language == "java":
        return CallProgram(java_program(code, fn_name))
    if language == "go":
        source, files = go_program(code, fn_name)
        return CallProgram(source, files)
    if language == "rust":
        source = rust_program(code, fn_name)
        return CallProgram(source) if source is not None else f"no function {fn_name} in the program"
    if language == "javascript":
        return CallProgram(javascript_program(code, fn_name))
    raise ValueError(f"no call-based driver for {language!r}")


def read_value(stdout: str) -> Any:
    """The value on the run's last non-empty line of stdout; raises ``NoValue``."""
    lines = stdout.rstrip().rsplit("\n", 1)
    try:
        return json.loads(lines[-1]) if lines[-1].strip() else _missing()
    except (ValueError, RecursionError):
        raise NoValue("the last line is not a JSON value") from None


def _missing() -> Any:
    raise NoValue("no value printed")
