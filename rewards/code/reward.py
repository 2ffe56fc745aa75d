"""``code``: run the completion's program in the sandbox against the row's tests; score = cases passed.

The program is the last fenced block of the requested language (else the last unlabelled block,
else the whole text). Tests (column ``tests``, see ``suites.py`` for every form) are checked so
that the verdict does not depend on anything the solution can reach:

- stdin/stdout cases: each case is its own run; its output is compared here, line for line
  (whitespace-tolerant, optional float tolerance); truncated or extra output fails.
- call-based cases (``fn_name``): each case is its own run that calls the function; the returned
  value comes back as plain data and is compared here.
- asserts (HumanEval / MBPP) of the form ``<expression> <op> <constant>``: the expressions are
  evaluated in one run after the solution and their values compared here (the constants never
  enter the sandbox). Other Python tests run after the solution in its own interpreter, where a
  determined solution can tamper with them: the reason says so, and ``strict=True`` abstains on
  such rows instead.

A solution that fails to load, exits or raises before the tests run passes nothing. When the
sandbox cannot run, the sample abstains (``None``), it is never scored 0.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl

from .harness import ASSERTS, VALUES, Outcome, read_values
from .suites import Suite, UnusableTestsError, parse_tests

FENCE_LANGUAGES = {
    "python": ("python", "py", "python3"),
    "c": ("c",),
    "cpp": ("cpp", "c++", "cc", "cxx"),
}
MODES = ("fraction", "all")
BUILD_LIMIT = 64 * 1024 * 1024  # bytes a compile_only run may return (its build)
IN_INTERPRETER = "asserts checked in the solution's interpreter"
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)  # no "1_000", "inf", "١٠"
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)

def extract_program(text: str, language: str) -> str:
    """The last fenced block labelled ``language``, else the last unlabelled block, else the text."""
    labelled, unlabelled = None, None
    for match in _FENCE.finditer(text):
        tag = match.group(1).lower()
        if tag in FENCE_LANGUAGES[language]:
            labelled = match.group(2)
        elif not tag:
            unlabelled = match.group(2)
    found = labelled if labelled is not None else unlabelled
    return (found if found is not None else text).strip("\n")


def outputs_match(got: str, expected: str, float_tolerance: float | None = None) -> bool:
    """Line-for-line equality of whitespace-separated tokens; blank lines at either end are ignored.

    Truncated or extra lines fail. With ``float_tolerance``, decimal tokens may differ by that much
    (absolute or relative); where the expected token is an integer, only its exact value matches.
    """
    got_lines, expected_lines = _token_lines(got), _token_lines(expected)
    if len(got_lines) != len(expected_lines):
        return False
    for got_tokens, expected_tokens in zip(got_lines, expected_lines, strict=True):
        if len(got_tokens) != len(expected_tokens):
            return False
        for a, b in zip(got_tokens, expected_tokens, strict=True):
            if a != b and not _close(a, b, float_tolerance):
                return False
    return True


def _token_lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


def _close(got: str, expected: str, tolerance: float | None) -> bool:
    """Numbers within ``tolerance``; an integer ``expected`` must be met exactly (``3.0`` is 3, ``1000001`` is not 10^6)."""
    if tolerance is None or not (_DECIMAL.fullmatch(got) and _DECIMAL.fullmatch(expected)):
        return False
    if _INTEGER.fullmatch(expected):
        return Decimal(got) == Decimal(expected)
    x, y = float(got), float(expected)
    return math.isfinite(x) and math.isfinite(y) and math.isclose(x, y, rel_tol=tolerance, abs_tol=tolerance)


@dataclass
class Row:
    """One completion being scored: its program, its tests, and the verdict of each case so far.

    ``verdicts[k]`` is ``None`` when case k passed, else why it failed; ``early`` is set when the
    program passed nothing (it did not load); ``broken`` when the sandbox failed (the row abstains).
    Only these short strings stay once a run's result has been read.
    """

    code: str
    suite: Suite
    build: Any = None
    verdicts: list[str | None] = field(default_factory=list)
    early: str = ""
    broken: str | None = None
    nonce: str = ""  # what the in-interpreter harness tags its markers with

    def __post_init__(self) -> None:
        self.verdicts = ["not run"] * len(self.suite)


class CodeReward(Reward):
    """Fraction (or all-or-nothing) of the row's tests the completion's program passes in the sandbox."""

    name = "code"
    description = ("run the completion's code in the sandbox against the tests column "
                   "(stdin/stdout, call-based or assert tests)")

    def __init__(
        self,
        *,
        tests_column: str = "tests",
        entry_point_column: str = "entry_point",
        language: str = "python",
        mode: str = "fraction",
        timeout: float = 5.0,
        memory_mb: int = 512,
        float_tolerance: float | None = None,
        backend: str = "auto",
        backend_options: dict[str, Any] | None = None,
        prepend_prompt: bool = False,
        strict: bool = False,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if language not in FENCE_LANGUAGES:
            raise ConfigError(f"code: language must be one of {', '.join(FENCE_LANGUAGES)}; got {language!r}")
        if mode not in MODES:
            raise ConfigError(f"code: mode must be one of {', '.join(MODES)}; got {mode!r}")
        if not timeout > 0 or not memory_mb > 0:
            raise ConfigError("code: timeout and memory_mb must be positive")
        if backend_options is not None and not isinstance(backend_options, dict):
            raise ConfigError(f"code: backend_options must be a mapping (e.g. {{'image': ...}}); got {backend_options!r}")
        self.tests_column, self.entry_point_column = tests_column, entry_point_column
        self.language, self.mode, self.timeout, self.memory_mb = language, mode, timeout, memory_mb
        self.float_tolerance, self.backend, self.prepend_prompt = float_tolerance, backend, prepend_prompt
        self.backend_options, self.strict = dict(backend_options or {}), strict
        from rewardhub import sandbox

        for harness in (VALUES, ASSERTS):  # compiled once per zygote, not once per run
            sandbox.precompile(harness)

    def required_columns(self) -> tuple[str, ...]:
        return (self.tests_column,)

    def score_batch(self, batch: Batch) -> list[Score]:
        from rewardhub import sandbox

        scores, rows, entry_points = self._plan(batch)
        try:
            if self.language != "python":
                self._build(rows, scores)
            parts: dict[int, tuple[int, int]] = {}
            runs = self._runs(rows, entry_points, parts)
            for index, result in sandbox.run_each(runs, backend=self.backend, **self.backend_options):
                i, part = parts.pop(index)
                self._record(rows[i], part, result)  # the result (its output) is dropped right after
        except sandbox.SandboxUnavailableError as exc:
            return [s if s is not None else Score(None, f"sandbox unavailable: {exc}", outcome="error") for s in scores]
        for i, row in rows.items():
            if scores[i] is None:
                scores[i] = self._score(row)
        return scores  # type: ignore[return-value]

    def _plan(self, batch: Batch) -> tuple[list[Score | None], dict[int, Row], list[Any]]:
        """Rows that need running, and the scores of those that do not (no code, unusable tests)."""
        tests = batch.column(self.tests_column)
        entry_points = batch.columns.get(self.entry_point_column, [None] * len(batch))
        scores: list[Score | None] = [None] * len(batch)
        rows: dict[int, Row] = {}
        for i, text in enumerate(batch.texts):
            if text is None:
                scores[i] = Score(None, batch.text_errors[i], outcome="abstain")
                continue
            try:
                suite = parse_tests(tests[i], entry_points[i])
            except UnusableTestsError as exc:
                scores[i] = Score(None, f"unusable tests: {exc}", outcome="error")
                continue
            code = extract_program(text, self.language)
            if self.prepend_prompt and isinstance(batch.prompts[i], str) and code.strip():
                code = batch.prompts[i] + code  # HumanEval-style: the prompt holds the signature
            if not code.strip():
                scores[i] = Score(0.0, "no code block", False, outcome="ok")
            elif suite.kind != "io" and self.language != "python":
                scores[i] = Score(None, f"{suite.kind} tests need language='python'; give stdin/stdout cases",
                                  outcome="abstain")
            elif suite.kind == "asserts" and self.strict:
                scores[i] = Score(None, "unusable tests: they cannot be checked outside the solution's interpreter "
                                        "(loops, helpers or computed expected values) and strict=True", outcome="abstain")
            else:
                rows[i] = Row(code, suite)
        return scores, rows, entry_points

    def _build(self, rows: dict[int, Row], scores: list[Score | None]) -> None:
        """Compile each row's program once (its cases then run the build); failures are scored here."""
        from rewardhub import sandbox

        order = list(rows)
        programs = (sandbox.Program(rows[i].code, language=self.language, compile_only=True,
                                    memory_mb=self.memory_mb, output_limit=BUILD_LIMIT) for i in order)
        for index, build in sandbox.run_each(programs, backend=self.backend, **self.backend_options):
            i = order[index]
            if build.error is not None:
                scores[i] = Score(None, f"sandbox failed: {build.error}", outcome="error")
            elif build.executable is None:
                scores[i] = Score(0.0, build.reason or "compile error", False, outcome="ok")
            else:
                rows[i].build = build.executable
        for i in order:
            if scores[i] is not None:
                del rows[i]

    def _runs(self, rows: dict[int, Row], entry_points: list[Any], parts: dict[int, tuple[int, int]]) -> Iterator[Any]:
        """Each row's runs, made as the sandbox asks for them; ``parts`` maps a run to (row, case or -1)."""
        from rewardhub.sandbox import Program

        limits = {"timeout": self.timeout, "memory_mb": self.memory_mb}
        numbers = itertools.count()
        for i, row in rows.items():
            suite = row.suite
            if suite.kind == "io":
                for case, (stdin, _) in enumerate(suite.io):
                    parts[next(numbers)] = (i, case)
                    yield Program(row.code, stdin=stdin, language=self.language, executable=row.build, **limits)
            elif suite.kind == "call":
                for case, call in enumerate(suite.calls):
                    parts[next(numbers)] = (i, case)
                    probes = [{"call": suite.fn_name, "args": call.args}]
                    yield Program(VALUES, stdin=_values_request(row.code, probes, [0]), **limits)
            elif suite.kind == "probe":
                parts[next(numbers)] = (i, -1)
                probes = [{"expr": expression} for expression in suite.probes]
                request = _values_request(row.code, probes, suite.case_ends, suite.setup, suite.bind, entry_points[i])
                yield Program(VALUES, stdin=request, **limits)
            else:
                parts[next(numbers)] = (i, -1)
                row.nonce = secrets.token_hex(12)
                request = json.dumps({"solution": row.code, "tests": suite.scripts})
                yield Program(ASSERTS, stdin=f"{row.nonce}\n{request}", **limits)

    def _record(self, row: Row, part: int, result: Any) -> None:
        """Reduce one run's result to verdicts (nothing of its output is kept)."""
        if result.error is not None:
            row.broken = result.error
            return
        kind = row.suite.kind
        if kind == "io":
            row.verdicts[part] = self._io_verdict(result, row.suite.io[part][1])
        elif kind == "call":
            outcome = read_values(result.stdout, 1)
            ok, value = outcome.probe(0)
            row.verdicts[part] = _not_loaded(outcome, result) or (
                _probe_failure(value, result) if not ok else
                None if row.suite.calls[part].matches(value, self.float_tolerance) else "wrong answer")
        elif kind == "probe":
            outcome = read_values(result.stdout, len(row.suite.probes))
            row.early = _not_loaded(outcome, result)
            if not row.early:
                row.verdicts = [_case_verdict(case.checks, outcome, result) for case in row.suite.cases]
        else:
            row.verdicts, row.early = _assert_verdicts(result, row.nonce, len(row.suite))

    def _score(self, row: Row) -> Score:
        if row.broken is not None:
            return Score(None, f"sandbox failed: {row.broken}", outcome="error")
        note = f" ({IN_INTERPRETER})" if row.suite.kind == "asserts" else ""
        if row.early:
            return Score(0.0, row.early + note, False, outcome="ok")
        passed = row.verdicts.count(None)
        total = len(row.verdicts)
        value = passed / total if self.mode == "fraction" else float(passed == total)
        reason = f"{passed}/{total} {'cases' if row.suite.kind in ('io', 'call') else 'tests'} passed"
        failure = next(((n, why) for n, why in enumerate(row.verdicts, 1) if why is not None), None)
        if failure:
            reason += f"; {failure[1]} on case {failure[0]}"
        return Score(value, reason + note, passed == total, outcome="ok")

    def _io_verdict(self, result: Any, expected: str) -> str | None:
        """``None`` when the case passed, else why it failed."""
        if result.timed_out or result.exit_code != 0 or result.stdout_truncated:
            return result.reason or "output limit exceeded"
        if not outputs_match(result.stdout, expected, self.float_tolerance):
            return "wrong output"
        return None


def _values_request(code: str, probes: list[dict], case_ends: list[int], setup: list[str] = (),
                    bind: list[str] = (), entry_point: Any = None) -> str:
    """The VALUES harness's stdin; ``case_ends``: the last probe of each case (records go out there)."""
    return json.dumps({"solution": code, "probes": probes, "case_ends": case_ends, "setup": list(setup),
                       "bind": list(bind), "entry_point": entry_point if isinstance(entry_point, str) else None})


def _not_loaded(outcome: Outcome, result: Any) -> str:
    """Why the solution never got to its tests ("" when it loaded)."""
    kind, detail = outcome.solution
    if kind == "ready":
        return ""
    if kind == "syntax":
        return "syntax error"
    if result.timed_out:
        return result.reason
    if kind == "failed":
        return f"the solution failed before the tests ran ({detail})"
    if kind == "exited" or result.exit_code == 0:
        return "the solution exited before the tests ran"
    return f"the solution failed before the tests ran ({_last_error(result)})"


def _probe_failure(why: str, result: Any) -> str:
    """A probe without a value: the exception it raised, or why the run stopped before it."""
    if why != "not run":
        return why
    if result.timed_out or result.stdout_truncated or result.stderr_truncated:
        return result.reason
    return f"the program exited before the tests finished ({result.reason or 'exit code 0'})"


def _case_verdict(checks: tuple, outcome: Outcome, result: Any) -> str | None:
    """``None`` when every check of the case holds on the reported values, else why not."""
    for check in checks:
        values = {}
        for index in check.probe_indices():
            ok, value = outcome.probe(index)
            if not ok:
                return _probe_failure(value, result)
            values[index] = value
        if not check.holds(values):
            return "AssertionError"
    return None


def _assert_verdicts(result: Any, nonce: str, cases: int) -> tuple[list[str | None], str]:
    """Per-test verdicts from the in-interpreter harness's markers, or a reason why the run passes nothing."""
    events = [line.split()[1:] for line in result.stdout.splitlines() if line.startswith(nonce + " ")]
    kinds = [e[0] for e in events if e]
    if "syntax" in kinds:
        return [], "syntax error"
    if result.timed_out:
        return [], result.reason
    if "ready" not in kinds and result.exit_code == 0:
        return [], "the solution exited before the tests ran"
    if "ready" not in kinds:
        return [], f"the solution failed before the tests ran ({_last_error(result)})"
    if "done" not in kinds or result.exit_code != 0:
        return [], f"the program exited before the tests finished ({result.reason or 'exit code 0'})"
    verdicts: list[str | None] = ["not run"] * cases
    for event in events:
        if event[0] == "pass" and len(event) > 1 and event[1].isdigit() and int(event[1]) < cases:
            verdicts[int(event[1])] = None
        elif event[0] == "fail" and len(event) > 1 and event[1].isdigit() and int(event[1]) < cases:
            verdicts[int(event[1])] = event[2] if len(event) > 2 else "failed"
    return verdicts, ""


def _last_error(result: Any) -> str:
    if result.reason and result.reason.startswith(("timeout", "memory", "output")):
        return result.reason
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else (result.reason or "no output")


@hookimpl
def register_rewards(register):
    register(CodeReward)
