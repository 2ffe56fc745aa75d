"""``code``: run the completion's program in the sandbox against the row's tests; score = cases passed.

The program is the last fenced block of the requested language (else the last unlabelled block,
else the whole text). Tests (column ``tests``, see ``suites.py`` for every form) are checked so
that the verdict does not depend on anything the solution can reach:

- stdin/stdout cases: each case is its own run; its output is compared here, line for line
  (whitespace-tolerant, optional float tolerance); truncated or extra output fails.
- call-based cases (``fn_name``): each case is its own run that calls the function; the returned
  value comes back as plain data and is compared here. In Java, Go, Rust and JavaScript a generated
  driver (``drivers/``), built once with the solution, makes the call with the case's arguments as
  JSON on stdin and prints the value as JSON (see ``drivers/__init__.py`` for why nothing forges a pass).
- Python tests (HumanEval / MBPP): where the planner (``checks.py``) follows them, one run makes
  the solution's calls and every check around them is computed here (the expected values never
  enter the sandbox). Other tests (random inputs, helpers, ``try``) run in the harness's test
  process, which never runs solution code and calls the solution in a process of its own
  (``harness.py``); ``strict=True`` abstains on such rows instead.

A solution that fails to load, exits or raises before the tests run passes nothing. A run's
records count only if the run ended as an honest run ends. When the sandbox cannot run, the
sample abstains (``None``), it is never scored 0; so does a test that needs a value that cannot
cross between the processes as plain data. Reasons are our own words; the program's own text
appears only quoted, escaped and cut short.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl
from rewardhub.sandbox.languages import first_compile_error
from rewardhub.sandbox.program import COMPILE_ERROR

from ._plain import ObjectUsed, plain
from .checks import ProbeFailed, holds
from .drivers import NoValue, call_program, read_value
from .harness import HARNESS, Report, harness_input, read_report
from .suites import Suite, UnusableTestsError, close_numbers, parse_tests

__all__ = [
    "BUILD_CHUNK",
    "BUILD_LIMIT",
    "CodeReward",
    "FENCE_LANGUAGES",
    "IN_TEST_PROCESS",
    "MAX_TOKEN_DIGITS",
    "MODES",
    "OBJECT_USE",
    "OUR_WORDS",
    "Row",
    "extract_program",
    "outputs_match",
    "prompt_code",
    "register_rewards",
]

FENCE_LANGUAGES = {
    "python": ("python", "py", "python3"),
    "c": ("c",),
    "cpp": ("cpp", "c++", "cc", "cxx"),
    "java": ("java",),
    "go": ("go", "golang"),
    "rust": ("rust", "rs"),
    "javascript": ("javascript", "js", "node", "nodejs"),
}
MODES = ("fraction", "all")
BUILD_LIMIT = 64 * 1024 * 1024  # bytes a compile_only run may return (its build)
BUILD_CHUNK = 16  # compiled rows built, run and dropped together (their builds are held meanwhile)
IN_TEST_PROCESS = "asserts run in the sandbox's test process"
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)  # no "1_000", "inf", "١٠"
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}", re.ASCII)
MAX_TOKEN_DIGITS = 4000  # longer numbers are compared as text only (converting them is quadratic)

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


def _body_without_its_prompt(code: str, prompt: Any, entry_point: Any) -> bool:
    """A HumanEval-style completion (the function's body, the prompt holding its ``def``) scored without
    ``prepend_prompt``: every such row would fail as a syntax error, the configuration's doing."""
    if not (isinstance(prompt, str) and isinstance(entry_point, str) and entry_point.isidentifier()
            and code.strip() and code[:1] in " \t"):
        return False
    definition = re.compile(rf"^\s*def\s+{entry_point}\s*\(", re.M)
    if not definition.search(prompt) or definition.search(code):
        return False
    try:
        compile(code, "completion", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError:
        pass
    else:
        return False
    try:
        compile(prompt + code, "completion", "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        return False
    return True


def outputs_match(got: str, expected: str, float_tolerance: float | None = None,
                  float_abs_tolerance: float | None = None) -> bool:
    """Line-for-line equality of whitespace-separated tokens; blank lines at either end are ignored.

    Truncated or extra lines fail. With ``float_tolerance``, decimal tokens may differ by that much relative
    to the expected one (see :func:`close_numbers`; ``float_abs_tolerance``: an absolute error the user
    allows too); where the expected token is an integer, only its exact value matches.
    """
    got_lines, expected_lines = _token_lines(got), _token_lines(expected)
    if len(got_lines) != len(expected_lines):
        return False
    for got_tokens, expected_tokens in zip(got_lines, expected_lines, strict=True):
        if len(got_tokens) != len(expected_tokens):
            return False
        for a, b in zip(got_tokens, expected_tokens, strict=True):
            if a != b and not _close(a, b, float_tolerance, float_abs_tolerance):
                return False
    return True


def _token_lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


def _close(got: str, expected: str, tolerance: float | None, absolute: float | None = None) -> bool:
    """Numbers within ``tolerance``; an integer ``expected`` must be met exactly (``3.0`` is 3, ``1000001`` is not 10^6).

    Whatever the tokens (``10**400`` digits, ``1e99999999999999999999``), this is a comparison that
    fails, never an error.
    """
    if tolerance is None or len(got) > MAX_TOKEN_DIGITS or len(expected) > MAX_TOKEN_DIGITS \
            or not (_DECIMAL.fullmatch(got) and _DECIMAL.fullmatch(expected)):
        return False
    try:
        if _INTEGER.fullmatch(expected):
            return Decimal(got) == Decimal(expected)
        x, y = float(got), float(expected)
        return math.isfinite(x) and math.isfinite(y) and close_numbers(x, y, tolerance, absolute)
    except (ArithmeticError, ValueError):
        return False


@dataclass
class Row:
    """One completion being scored: its program, its tests, and the verdict of each case so far.

    ``verdicts[k]`` is ``None`` when case k passed, else why it failed; ``early`` is set when the
    program passed nothing (it did not load); ``broken`` when the sandbox failed (the row abstains).
    Only these short strings stay once a run's result has been read.
    """

    code: str
    suite: Suite
    files: dict[str, str] = field(default_factory=dict)  # beside the code (a call driver's own file)
    build: Any = None
    verdicts: list[str | None] = field(default_factory=list)
    early: str = ""
    broken: str | None = None
    starved: str = ""  # set when a run timed out without getting its CPU (a busy machine: the row abstains)
    unusable: str = ""  # set when a value the tests need could not cross as plain data (the row abstains)
    prompt: tuple[str, list[str]] = ("", [])  # the prompt's own code, and the names in it the solution provides

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
        float_abs_tolerance: float | None = None,
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
        for name, value in (("float_tolerance", float_tolerance), ("float_abs_tolerance", float_abs_tolerance)):
            if value is not None and not (isinstance(value, int | float) and 0 <= value < 1):
                raise ConfigError(f"code: {name} must be a number in [0, 1) or null; got {value!r}")
        if float_abs_tolerance is not None and float_tolerance is None:
            raise ConfigError("code: float_abs_tolerance widens float_tolerance: give float_tolerance too")
        self.float_tolerance, self.backend, self.prepend_prompt = float_tolerance, backend, prepend_prompt
        self.float_abs_tolerance = float_abs_tolerance
        self.backend_options, self.strict = dict(backend_options or {}), strict
        from rewardhub import sandbox

        sandbox.precompile(HARNESS)  # compiled once per zygote, not once per run

    def required_columns(self) -> tuple[str, ...]:
        return (self.tests_column,)

    def score_batch(self, batch: Batch) -> list[Score]:
        from rewardhub import sandbox

        scores, rows, entry_points = self._plan(batch)
        for i, settled in enumerate(scores):
            if settled is not None:
                self.settle(i, settled)
        try:
            # C/C++ compile once per row, then each case runs the build; a backend without builds
            # (remote: SandboxFusion compiles and runs in one request) compiles the source in each run.
            builds = self.language != "python" and getattr(
                sandbox.get_backend(self.backend, **self.backend_options), "builds", True)
            order = list(rows)
            # built rows go in chunks (build, run, drop): no batch's builds are all held at once
            step = BUILD_CHUNK if builds else max(1, len(order))
            for start in range(0, len(order), step):
                chunk = {i: rows[i] for i in order[start:start + step]}
                if builds:
                    self._build(chunk, scores, batch)
                parts: dict[int, tuple[int, int]] = {}
                left = {i: _run_count(row) for i, row in chunk.items()}
                runs = self._runs(chunk, entry_points, parts)
                for index, result in sandbox.run_each(runs, backend=self.backend, **self.backend_options):
                    i, part = parts.pop(index)
                    self._record(chunk[i], part, result)  # the result (its output) is dropped right after
                    left[i] -= 1
                    if not left[i]:
                        scores[i] = self._score(chunk[i])
                        chunk[i].build = None
                        self.settle(i, scores[i])
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
            prompt = prompt_code(batch.prompts[i], entry_points[i]) if self.language == "python" else ("", (), ())
            try:
                suite = parse_tests(tests[i], entry_points[i], frozenset(prompt[1]))
            except UnusableTestsError as exc:
                scores[i] = Score(None, f"unusable tests: {exc}", outcome="error")
                continue
            code = extract_program(text, self.language)
            if self.prepend_prompt and isinstance(batch.prompts[i], str) and code.strip():
                code = batch.prompts[i] + code  # HumanEval-style: the prompt holds the signature
            elif self.language == "python" and _body_without_its_prompt(code, batch.prompts[i], entry_points[i]):
                scores[i] = Score(None, f"not scored: the completion is the body of the prompt's def "
                                        f"{entry_points[i]}(), which only runs after the prompt: score HumanEval-style "
                                        f"rows with prepend_prompt: true", outcome="error")
                continue
            if not code.strip():
                scores[i] = Score(0.0, "no code block", False, outcome="ok")
            elif suite.kind not in ("io", "call") and self.language != "python":
                scores[i] = Score(None, f"{suite.kind} tests need language='python'; give stdin/stdout or "
                                        "call-based cases", outcome="abstain")
            elif suite.kind == "call" and self.language != "python":
                scores[i], rows_entry = self._call_row(code, suite)
                if rows_entry is not None:
                    rows[i] = rows_entry
            elif suite.kind == "asserts" and self.strict:
                scores[i] = Score(None, "unusable tests: they cannot be checked in the trainer (random inputs, "
                                        "helpers, try) and strict=True", outcome="abstain")
            else:
                rows[i] = Row(code, suite, prompt=(prompt[0], list(prompt[2])))
        return scores, rows, entry_points

    def _call_row(self, code: str, suite: Suite) -> tuple[Score | None, Row | None]:
        """A call-based row in a compiled language: the solution with its driver (``drivers``), or its score."""
        try:
            for call in suite.calls:
                json.dumps(_lists(call.args), allow_nan=False)
            program = call_program(self.language, code, suite.fn_name)
        except (ValueError, TypeError) as exc:
            return Score(None, f"unusable tests: {exc}", outcome="error"), None
        if isinstance(program, str):
            return Score(0.0, program, False, outcome="ok"), None
        return None, Row(program.code, suite, files=program.files)

    def _build(self, rows: dict[int, Row], scores: list[Score | None], batch: Batch) -> None:
        """Compile each row's program once (its cases then run the build); failures are scored here."""
        from rewardhub import sandbox

        order = list(rows)
        programs = (sandbox.Program(rows[i].code, files=rows[i].files, language=self.language, compile_only=True,
                                    memory_mb=self.memory_mb, output_limit=BUILD_LIMIT) for i in order)
        for index, build in sandbox.run_each(programs, backend=self.backend, **self.backend_options):
            i = order[index]
            if build.error is not None:
                scores[i] = Score(None, f"sandbox failed: {build.error}", outcome="error")
            elif build.executable is None:
                scores[i] = Score(0.0, self._compile_failure(build), False, outcome="ok")
            else:
                rows[i].build = build.executable
        for i in order:
            if scores[i] is not None:
                self.settle(i, scores[i])
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
            elif suite.kind == "call" and self.language != "python":
                for case, call in enumerate(suite.calls):
                    parts[next(numbers)] = (i, case)
                    yield Program(row.code, stdin=json.dumps(_lists(call.args)), files=row.files, language=self.language,
                                  executable=row.build, **limits)
            elif suite.kind == "call":
                for case, call in enumerate(suite.calls):
                    parts[next(numbers)] = (i, case)
                    calls = [{"name": suite.fn_name, "args": [plain(a) for a in call.args], "kwargs": {}, "method": True}]
                    yield Program(HARNESS, stdin=harness_input(row.code, {"calls": calls}), **limits)
            elif suite.kind == "probe":
                parts[next(numbers)] = (i, -1)
                yield Program(HARNESS, stdin=harness_input(row.code, {"calls": suite.probes}), **limits)
            else:
                parts[next(numbers)] = (i, -1)
                tests = {"scripts": suite.scripts, "prompt": row.prompt[0], "untrusted": row.prompt[1]}
                yield Program(HARNESS, stdin=harness_input(row.code, tests), **limits)

    def _record(self, row: Row, part: int, result: Any) -> None:
        """Reduce one run's result to verdicts (nothing of its output is kept)."""
        if result.error is not None:
            row.broken = result.error
            return
        if result.starved(self.timeout):
            row.starved = (f"timeout after {self.timeout:g} s with only {result.cpu_seconds:.2f} s of cpu used: "
                           "a busy machine did not give the run its time (or the program sat blocked, which "
                           "looks the same); not scored")
            return
        kind = row.suite.kind
        if kind == "io":
            row.verdicts[part] = self._io_verdict(result, row.suite.io[part][1])
            return
        if kind == "call" and self.language != "python":
            row.verdicts[part] = self._driven_verdict(result, row.suite.calls[part])
            return
        count = {"call": 1, "probe": len(row.suite.probes), "asserts": len(row.suite.scripts)}[kind]
        report = read_report(result, count)
        early = _not_loaded(report, result)
        if kind == "call":
            if early:
                row.verdicts[part] = early
                return
            entry, value = report.entry(0)
            if entry == "unusable":
                row.unusable = str(value)
            elif entry != "value":
                row.verdicts[part] = _error_name(value)
            else:
                try:
                    matched = row.suite.calls[part].matches(value, self.float_tolerance, self.float_abs_tolerance)
                except ObjectUsed as exc:  # only a standard-library value escapes: no verdict on it here
                    row.unusable = str(exc)
                    return
                row.verdicts[part] = None if matched else "wrong answer"
            return
        row.early = early
        if early:
            return
        if kind == "probe":
            values = report.entries
            row.verdicts = [self._case_verdict(row, checks, values) for checks in row.suite.cases]
        else:
            for index in range(count):
                entry, why = report.entry(index)
                if entry == "unusable":
                    row.unusable = str(why)
                row.verdicts[index] = None if entry == "pass" else _error_name(why) if entry == "fail" else str(why)

    @staticmethod
    def _case_verdict(row: Row, checks: list, values: dict) -> str | None:
        """``None`` when every check of the case holds on the reported values, else why not."""
        for check in checks:
            try:
                why = holds(check, values)
            except ProbeFailed as exc:
                if exc.kind == "unusable":
                    row.unusable = exc.why
                return _error_name(exc.why)
            if why is not None:
                return why
        return None

    def _score(self, row: Row) -> Score:
        if row.broken is not None:
            return Score(None, f"sandbox failed: {row.broken}", outcome="error")
        if row.starved:
            return Score(None, row.starved, outcome="timeout")
        if row.unusable:
            return Score(None, f"unusable tests: a value cannot cross between the solution and its tests as plain "
                               f"data ({_quoted(row.unusable)})", outcome="abstain")
        note = f" ({IN_TEST_PROCESS})" if row.suite.kind == "asserts" else ""
        passed = row.verdicts.count(None) if not row.early else 0
        total = len(row.verdicts)
        value = passed / total if self.mode == "fraction" else float(passed == total)
        reason = f"{passed}/{total} {'cases' if row.suite.kind in ('io', 'call') else 'tests'} passed"
        if row.early:
            return Score(0.0, f"{reason}; {row.early}{note}", False, outcome="ok")
        built = next((why for why in row.verdicts if why and why.startswith(COMPILE_ERROR)), None)
        if built:  # scored as a failed build is (the build and its runs in one)
            return Score(0.0, built, False, outcome="ok")
        failure = next(((n, why) for n, why in enumerate(row.verdicts, 1) if why is not None), None)
        if failure:
            reason += f"; {failure[1]} on case {failure[0]}"
        return Score(value, reason + note, passed == total, outcome="ok")

    def _compile_failure(self, result: Any) -> str:
        """Why a build failed: the compiler's first error (quoted), or the limit it hit."""
        if result.reason != COMPILE_ERROR:  # the build hit a limit ("compile timeout after 30 s")
            return result.reason if result.reason.startswith("compile") else f"build failed: {result.reason or 'no build'}"
        first = first_compile_error(self.language, result.stderr)
        return f"{COMPILE_ERROR}: {_quoted(first, 160)}" if first else COMPILE_ERROR

    def _driven_verdict(self, result: Any, call: Any) -> str | None:
        """A call-based case run by a driver: ``None`` when the value it printed matches, else why not."""
        if result.reason == COMPILE_ERROR:
            return self._compile_failure(result)
        if result.timed_out or result.exit_code != 0 or result.stdout_truncated:
            return result.reason or "output limit exceeded"
        try:
            value = read_value(result.stdout)
        except NoValue as exc:
            return str(exc)
        return None if call.matches(value, self.float_tolerance) else "wrong answer"

    def _io_verdict(self, result: Any, expected: str) -> str | None:
        """``None`` when the case passed, else why it failed."""
        if result.reason == COMPILE_ERROR:  # a source run (no separate build) that did not compile
            return self._compile_failure(result)
        if result.timed_out or result.exit_code != 0 or result.stdout_truncated:
            return result.reason or "output limit exceeded"
        if not outputs_match(result.stdout, expected, self.float_tolerance, self.float_abs_tolerance):
            return "wrong output"
        return None


def _lists(value: Any) -> Any:
    """A case's arguments as JSON has them (tuples are lists)."""
    if isinstance(value, list | tuple):
        return [_lists(item) for item in value]
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    return value


def _run_count(row: Row) -> int:
    """How many sandbox runs the row's tests take (a case each for io and call tests, else one)."""
    return len(row.suite) if row.suite.kind in ("io", "call") else 1


def _not_loaded(report: Report, result: Any) -> str:
    """Why the tests never ran or their records do not count ("" when they ran and do)."""
    if report.problem:
        if result.timed_out or result.stdout_truncated or result.stderr_truncated:
            return result.reason or "output limit exceeded"
        if result.exit_code != 0:
            return f"the run ended before the tests finished ({result.reason or 'no exit status'})"
        return f"the run's records do not count ({report.problem})"
    kind, detail = report.loaded
    if kind == "ready":
        return ""
    if kind == "syntax":
        return "syntax error"
    if kind == "exited":
        return "the solution exited before the tests ran"
    return f"the solution failed before the tests ran ({_quoted(detail)})"


OBJECT_USE = "an object of the solution used with "  # the harness's words for a use a handle refuses
OUR_WORDS = {"not run": "not run", "gone": "the solution process ended during the tests",
             "unreadable": "a value that is not plain data"}


def _error_name(text: Any) -> str:
    """A failure as reported by the run: an exception's name, one of the harness's words, or "an exception"."""
    text = str(text)
    if text in OUR_WORDS:
        return OUR_WORDS[text]
    if text.startswith("refused to check: ") or _NAME.fullmatch(text):
        return text
    if text.startswith(OBJECT_USE) and _NAME.fullmatch(text[len(OBJECT_USE):]):
        return text
    return "an exception"


def _quoted(text: str, limit: int = 80) -> str:
    """The program's own text in a reason: quoted, escaped (no control or non-ASCII characters) and cut short."""
    return ascii(text[:limit] + ("..." if len(text) > limit else ""))


def prompt_code(prompt: Any, entry_point: Any) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The prompt's own code (its imports, functions, classes and constants), the names it defines for good
    (helpers the tests mean, whatever the solution redefines), and those the solution provides (stubs that
    only have a docstring, and the entry point)."""
    if isinstance(prompt, list):
        prompt = "\n".join(m["content"] for m in prompt if isinstance(m, dict) and isinstance(m.get("content"), str))
    return _prompt_code(prompt, entry_point if isinstance(entry_point, str) else "") \
        if isinstance(prompt, str) else ("", (), ())


@functools.lru_cache(maxsize=1024)
def _prompt_code(prompt: str, entry_point: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    tree = None
    for candidate in (prompt, extract_program(prompt, "python")):
        try:
            tree = ast.parse(candidate)
            break
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    if tree is None:
        return "", (), ()
    kept = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef
                                                     | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign)]
    defined = {node.name for node in kept if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    stubs = {node.name for node in kept if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _stub(node)}
    if not defined - stubs - {entry_point}:
        return "", (), tuple(sorted(stubs | {entry_point} - {""}))
    untrusted = stubs | ({entry_point} if entry_point else set())
    return ast.unparse(ast.Module(kept, [])), tuple(sorted(defined - untrusted)), tuple(sorted(untrusted))


def _stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function the solution is to write: only a docstring, ``pass``, ``...`` or ``raise NotImplementedError``."""
    for node in function.body:
        if isinstance(node, ast.Pass) or isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Raise) and "NotImplementedError" in ast.unparse(node):
            continue
        return False
    return True


@hookimpl
def register_rewards(register):
    register(CodeReward)
