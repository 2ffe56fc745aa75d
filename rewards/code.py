"""``code``: run the completion's program in the sandbox against the row's tests; score = cases passed.

The program is the last fenced block of the requested language (else the last unlabelled block,
else the whole text). Tests (column ``tests``) come in two forms:

- Python test code run after the solution in one program (HumanEval / MBPP): a string, with
  ``check(<entry_point>)`` appended when it defines ``check`` and the row has an ``entry_point``;
  or a list of assert strings, each one case.
- stdin/stdout cases (APPS / CodeContests): ``[{"input": ..., "output": ...}]``,
  ``{"inputs": [...], "outputs": [...]}`` or the same as a JSON string; each case is its own run
  with its own timeout, and the output must match line for line (whitespace-tolerant, optional
  float tolerance) -- truncated or extra output fails.

A program that exits non-zero, exits early, or raises before the tests run passes nothing. When
the sandbox cannot run, the sample abstains (``None``), it is never scored 0.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rewardhub import Batch, ConfigError, Reward, RewardhubError, Score, hookimpl

FENCE_LANGUAGES = {
    "python": ("python", "py", "python3"),
    "c": ("c",),
    "cpp": ("cpp", "c++", "cc", "cxx"),
}
MODES = ("fraction", "all")
BUILD_LIMIT = 64 * 1024 * 1024  # bytes of base64 a compile_only run may return (its build)
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
_CHECK_CALL = re.compile(r"^check\s*\(", re.M)
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)  # no "1_000", "inf", "١٠"
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)
# Runs the solution, then each test, writing markers tagged with a nonce. The nonce arrives on
# stdin, which is closed before the solution runs, so a solution cannot read it from a file to
# print a forged "done" and exit early (it would have to dig it out of the harness's memory).
# The harness binds the builtins it uses before the solution runs and writes its markers to its own
# copy of the output fd, so a solution that patches compile/open/exec/print or replaces sys.stdout
# cannot skip the tests or rewrite a "fail" into a "pass".
_HARNESS = '''\
import io, os, sys, traceback


def main(open=open, compile=compile, exec=exec, str=str, type=type, range=range, write=os.write,
         print_exc=traceback.print_exc):
    out = os.dup(1)
    nonce = sys.stdin.readline().strip()
    os.close(0)
    sys.stdin = io.StringIO()

    def mark(*words):
        write(out, ("\\n" + " ".join([nonce, *[str(word) for word in words]]) + "\\n").encode())

    namespace = {{"__name__": "__main__", "__builtins__": __builtins__}}
    try:
        with open("solution.py") as f:
            solution = compile(f.read(), "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        mark("syntax", type(exc).__name__)
        raise SystemExit(3)
    exec(solution, namespace)
    mark("ready")
    for i in range({cases}):
        try:
            with open(f"test_{{i}}.py") as f:
                exec(compile(f.read(), f"test_{{i}}.py", "exec"), namespace)
        except Exception as exc:
            print_exc()
            mark("fail", i, type(exc).__name__)
        else:
            mark("pass", i)
    mark("done")


main()
'''


@dataclass(frozen=True)
class Cases:
    """A row's tests: Python test scripts (``scripts``) or stdin/stdout pairs (``io``)."""

    scripts: list[str] | None = None
    io: list[tuple[str, str]] | None = None

    def __len__(self) -> int:
        return len(self.scripts if self.scripts is not None else self.io or [])


class UnusableTestsError(RewardhubError, ValueError):
    """A row's tests column is in no form the code reward understands."""


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


def parse_tests(value: Any, entry_point: Any = None) -> Cases:
    """Normalise a tests column value; raises ``UnusableTestsError`` saying what was wrong."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                return parse_tests(json.loads(stripped), entry_point)
            except json.JSONDecodeError:
                pass
        if not stripped:
            raise UnusableTestsError("the tests column is empty")
        if "def check" in value and entry_point and not _CHECK_CALL.search(value):
            value = f"{value}\n\ncheck({entry_point})\n"
        return Cases(scripts=[value])
    if isinstance(value, dict):
        if "fn_name" in value:
            raise UnusableTestsError("call-based tests (fn_name) are not supported; give stdin/stdout cases")
        inputs, outputs = value.get("inputs", value.get("input")), value.get("outputs", value.get("output"))
        if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
            raise UnusableTestsError("a tests dict needs equally long 'inputs' and 'outputs' lists")
        return _io_cases(list(zip(inputs, outputs, strict=True)))
    if isinstance(value, Sequence) and value:
        if all(isinstance(item, str) for item in value):
            return Cases(scripts=list(value))
        if all(isinstance(item, dict) and "input" in item and "output" in item for item in value):
            return _io_cases([(item["input"], item["output"]) for item in value])
    raise UnusableTestsError(
        "tests must be Python test code, a list of asserts, or stdin/stdout cases "
        f"([{{'input': ..., 'output': ...}}] or {{'inputs': [...], 'outputs': [...]}}); got {type(value).__name__}"
    )


def _io_cases(pairs: list[tuple[Any, Any]]) -> Cases:
    if not pairs:
        raise UnusableTestsError("no test cases")
    return Cases(io=[(_text(i), _text(o)) for i, o in pairs])


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(map(str, value)) + "\n"
    return str(value)


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


class CodeReward(Reward):
    """Fraction (or all-or-nothing) of the row's tests the completion's program passes in the sandbox."""

    name = "code"
    description = "run the completion's code in the sandbox against the tests column (asserts or stdin/stdout cases)"

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
        prepend_prompt: bool = False,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if language not in FENCE_LANGUAGES:
            raise ConfigError(f"code: language must be one of {', '.join(FENCE_LANGUAGES)}; got {language!r}")
        if mode not in MODES:
            raise ConfigError(f"code: mode must be one of {', '.join(MODES)}; got {mode!r}")
        if not timeout > 0 or not memory_mb > 0:
            raise ConfigError("code: timeout and memory_mb must be positive")
        self.tests_column, self.entry_point_column = tests_column, entry_point_column
        self.language, self.mode, self.timeout, self.memory_mb = language, mode, timeout, memory_mb
        self.float_tolerance, self.backend, self.prepend_prompt = float_tolerance, backend, prepend_prompt

    def score_batch(self, batch: Batch) -> list[Score]:
        from rewardhub import sandbox

        tests = batch.column(self.tests_column)
        entry_points = batch.columns.get(self.entry_point_column, [None] * len(batch))
        scores: list[Score | None] = [None] * len(batch)
        plans: dict[int, tuple[str, Cases]] = {}
        for i, text in enumerate(batch.texts):
            if text is None:
                scores[i] = Score(None, batch.text_errors[i])
                continue
            try:
                cases = parse_tests(tests[i], entry_points[i])
            except UnusableTestsError as exc:
                scores[i] = Score(None, f"unusable tests: {exc}")
                continue
            code = extract_program(text, self.language)
            if self.prepend_prompt and isinstance(batch.prompts[i], str) and code.strip():
                code = batch.prompts[i] + code  # HumanEval-style: the prompt holds the signature
            if not code.strip():
                scores[i] = Score(0.0, "no code block", False)
            elif cases.scripts is not None and self.language != "python":
                scores[i] = Score(None, "Python test code needs language='python'; give stdin/stdout cases")
            else:
                plans[i] = (code, cases)
        try:
            executables = self._build(plans, scores) if self.language != "python" else {}
            runs = {i: self._programs(code, cases, executables.get(i)) for i, (code, cases) in plans.items()
                    if scores[i] is None}
            results = sandbox.run_many([p for _, programs in runs.values() for p in programs], backend=self.backend)
        except sandbox.SandboxUnavailableError as exc:
            return [s if s is not None else Score(None, f"sandbox unavailable: {exc}") for s in scores]
        offset = 0
        for i, (nonce, programs) in runs.items():
            scores[i] = self._score(plans[i][1], nonce, results[offset:offset + len(programs)])
            offset += len(programs)
        return scores  # type: ignore[return-value]

    def _build(self, plans: dict[int, tuple[str, Cases]], scores: list[Score | None]) -> dict[int, bytes]:
        """Compile each row's program once (its cases then run the build); failures are scored here."""
        from rewardhub import sandbox

        rows = list(plans)
        builds = sandbox.run_many(
            [sandbox.Program(plans[i][0], language=self.language, compile_only=True, memory_mb=self.memory_mb,
                             output_limit=BUILD_LIMIT) for i in rows],
            backend=self.backend,
        )
        executables = {}
        for i, build in zip(rows, builds, strict=True):
            if build.error is not None:
                scores[i] = Score(None, f"sandbox failed: {build.error}")
            elif build.executable is None:
                scores[i] = Score(0.0, build.reason or "compile error", False)
            else:
                executables[i] = build.executable
        return executables

    def _programs(self, code: str, cases: Cases, executable: bytes | None) -> tuple[str, list[Any]]:
        """The row's runs and the nonce its harness reports with (stdin cases need none)."""
        from rewardhub.sandbox import Program

        limits = {"timeout": self.timeout, "memory_mb": self.memory_mb, "language": self.language}
        if cases.io is not None:
            return "", [Program(code, stdin=stdin, executable=executable, **limits) for stdin, _ in cases.io]
        nonce = secrets.token_hex(12)
        files = {"solution.py": code, **{f"test_{i}.py": script for i, script in enumerate(cases.scripts or [])}}
        return nonce, [Program(_HARNESS.format(cases=len(cases)), stdin=nonce + "\n", files=files, **limits)]

    def _score(self, cases: Cases, nonce: str, results: list[Any]) -> Score:
        broken = next((r for r in results if r.error is not None), None)
        if broken is not None:
            return Score(None, f"sandbox failed: {broken.error}")
        if cases.io is not None:
            verdicts = [self._io_verdict(r, expected) for r, (_, expected) in zip(results, cases.io, strict=True)]
        else:
            verdicts, early = _script_verdicts(results[0], nonce, len(cases))
            if early:
                return Score(0.0, early, False)
        passed = sum(1 for v in verdicts if v is None)
        total = len(verdicts)
        value = passed / total if self.mode == "fraction" else float(passed == total)
        reason = f"{passed}/{total} {'cases' if cases.io is not None else 'tests'} passed"
        failure = next(((n, why) for n, why in enumerate(verdicts, 1) if why is not None), None)
        if failure:
            reason += f"; {failure[1]} on case {failure[0]}"
        return Score(value, reason, passed == total)

    def _io_verdict(self, result: Any, expected: str) -> str | None:
        """``None`` when the case passed, else why it failed."""
        if result.timed_out or result.exit_code != 0 or result.stdout_truncated:
            return result.reason or "output limit exceeded"
        if not outputs_match(result.stdout, expected, self.float_tolerance):
            return "wrong output"
        return None


def _script_verdicts(result: Any, nonce: str, cases: int) -> tuple[list[str | None], str]:
    """Per-test verdicts from the harness markers, or a reason why the run passes nothing."""
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
        if event[0] == "pass":
            verdicts[int(event[1])] = None
        elif event[0] == "fail":
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
