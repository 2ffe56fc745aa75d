"""SandboxFusion's ``/run_code`` shapes, both ways: a request into a :class:`Program`, a
:class:`SandboxResult` into a response, and back (for the ``remote`` backend).

Checked against the ``sandbox-fusion`` 0.3.7 client models (``RunCodeRequest``, ``RunCodeResponse``,
``CommandRunResult``) and verl 0.9.1's ``call_sandbox_api``, which also sends ``memory_limit_MB``.
A response's ``status`` is ``Success`` (compiled if needed, ran, exited 0 in time), ``Failed`` (the
program's own failure: compile error, non-zero exit, time limit) or ``SandboxError`` (the service
could not run it; clients must not score that). ``run_result.status`` is ``Finished``,
``TimeLimitExceeded`` or ``Error``.
"""

from __future__ import annotations

import base64
import binascii
import signal
from typing import Any

from .errors import ProgramError
from .program import COMPILE_ERROR, Program, SandboxResult

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TIMEOUT",
    "FUSION_NAMES",
    "LANGUAGES",
    "MalformedResponse",
    "RequestError",
    "Unsupported",
    "from_response",
    "to_program",
    "to_request",
    "to_response",
]

# SandboxFusion language -> rewardhub's; 'c' is a rewardhub extension (SandboxFusion compiles C as cpp).
LANGUAGES = {"python": "python", "cpp": "cpp", "c": "c", "java": "java", "go": "go", "rust": "rust",
             "nodejs": "javascript", "javascript": "javascript"}
FUSION_NAMES = {"javascript": "nodejs"}  # rewardhub's name -> SandboxFusion's, where they differ
DEFAULT_TIMEOUT = 10.0  # SandboxFusion's default compile and run timeouts
DEFAULT_MEMORY_MB = 1024  # what verl sends when its config names none


class RequestError(ValueError):
    """A ``/run_code`` body that is malformed (answered 422, as SandboxFusion's validation does)."""


class Unsupported(Exception):
    """A well-formed request this service cannot carry out (answered ``SandboxError``)."""


def to_program(body: Any, *, max_timeout: float = 300.0) -> Program:
    """The :class:`Program` a ``/run_code`` body asks for. Raises RequestError or Unsupported."""
    if not isinstance(body, dict):
        raise RequestError(f"the body must be a JSON object, got {type(body).__name__}")
    code, language = body.get("code"), body.get("language")
    if not isinstance(code, str):
        raise RequestError("'code' must be a string: the program to run")
    if not isinstance(language, str):
        raise RequestError("'language' must be a string, e.g. 'python'")
    if language not in LANGUAGES:
        raise Unsupported(f"language {language!r} is not supported by this rewardhub sandbox service; "
                          f"it runs {', '.join(LANGUAGES)}")
    stdin = body.get("stdin") or ""
    if not isinstance(stdin, str):
        raise RequestError("'stdin' must be a string or null")
    timeouts = {}
    for name in ("run_timeout", "compile_timeout"):
        value = body.get(name, DEFAULT_TIMEOUT)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise RequestError(f"'{name}' must be a positive number of seconds; got {value!r}")
        timeouts[name] = min(float(value), max_timeout)
    memory = body.get("memory_limit_MB", DEFAULT_MEMORY_MB)
    if isinstance(memory, bool) or not isinstance(memory, int | float) or not memory > 0:
        raise RequestError(f"'memory_limit_MB' must be a positive number; got {memory!r}")
    if body.get("fetch_files"):
        raise Unsupported("fetch_files is not supported by this rewardhub sandbox service (runs leave no files)")
    try:
        return Program(code, stdin=stdin, files=_files(body.get("files") or {}), language=LANGUAGES[language],
                       timeout=timeouts["run_timeout"], compile_timeout=timeouts["compile_timeout"],
                       memory_mb=int(memory))
    except ProgramError as exc:
        raise Unsupported(str(exc)) from None


def _files(files: Any) -> dict[str, str]:
    if not isinstance(files, dict):
        raise RequestError("'files' must be an object: file path -> base64 content")
    decoded = {}
    for name, content in files.items():
        if content is None:
            continue
        try:
            decoded[name] = base64.b64decode(content, validate=True).decode("utf-8")
        except (binascii.Error, ValueError, TypeError):
            raise Unsupported(f"file {name!r}: only base64 of UTF-8 text is supported here") from None
    return decoded


def to_response(program: Program, result: SandboxResult) -> dict[str, Any]:
    """The ``RunCodeResponse`` for ``result``; ``message`` carries rewardhub's reason."""
    if result.error is not None:
        return _response("SandboxError", result.error)
    compiled = program.compile_command is not None
    if compiled and result.reason == COMPILE_ERROR:
        compile_result = _command("Finished", result.exit_code if result.exit_code else 1, result.stdout,
                                  result.stderr, result.compile_duration or result.duration)
        return _response("Failed", result.reason, compile_result=compile_result)
    status = "TimeLimitExceeded" if result.timed_out else "Finished"
    run = _command(status, None if result.timed_out else result.exit_code, result.stdout, result.stderr,
                   result.duration)
    ok = result.ok
    return _response("Success" if ok else "Failed", result.reason, run_result=run,
                     compile_result=_command("Finished", 0, "", "", result.compile_duration) if compiled else None)


def _command(status: str, code: int | None, stdout: str, stderr: str, seconds: float | None) -> dict[str, Any]:
    return {"status": status, "execution_time": seconds, "cpu_time": None, "return_code": code,
            "stdout": stdout, "stderr": stderr}


def _response(status: str, message: str, *, compile_result: dict | None = None,
              run_result: dict | None = None) -> dict[str, Any]:
    return {"status": status, "message": message, "compile_result": compile_result, "run_result": run_result,
            "executor_pod_name": None, "files": {}}


def to_request(program: Program) -> dict[str, Any]:
    """The ``/run_code`` body that runs ``program`` on a SandboxFusion-compatible service."""
    if program.compile_only or program.executable is not None:
        raise ProgramError("a SandboxFusion service compiles and runs in one request: the remote backend takes "
                           "source programs, not compile_only builds or prebuilt executables")
    return {"code": program.code, "language": FUSION_NAMES.get(program.language, program.language), "stdin": program.stdin,
            "run_timeout": program.timeout, "compile_timeout": program.compile_timeout,
            "memory_limit_MB": program.memory_mb,
            "files": {name: base64.b64encode(text.encode()).decode() for name, text in program.files.items()},
            "fetch_files": []}


class MalformedResponse(ValueError):
    """A ``/run_code`` answer that is not a ``RunCodeResponse`` (a field missing or of the wrong type)."""


def from_response(program: Program, body: Any) -> SandboxResult:
    """The :class:`SandboxResult` a ``RunCodeResponse`` describes; a malformed or ``SandboxError`` answer
    is a sandbox failure (``error`` set), never a program outcome."""
    try:
        return _outcome(program, body)
    except MalformedResponse as exc:
        return SandboxResult.failed(f"the sandbox service sent no valid RunCodeResponse ({exc}): {str(body)[:200]}")


def _outcome(program: Program, body: Any) -> SandboxResult:
    if not isinstance(body, dict) or body.get("status") not in ("Success", "Failed", "SandboxError"):
        raise MalformedResponse("no status Success, Failed or SandboxError")
    message = _typed(body, "message", str) or ""
    if body["status"] == "SandboxError":
        return SandboxResult.failed(f"the sandbox service could not run the program: {message or '?'}")
    compiled, run = body.get("compile_result"), body.get("run_result")
    if compiled is not None and not isinstance(compiled, dict):
        raise MalformedResponse("compile_result is not an object")
    if compiled and (_status(compiled) != "Finished" or _typed(compiled, "return_code", int)):
        timed_out = _status(compiled) == "TimeLimitExceeded"
        return SandboxResult(stdout=_typed(compiled, "stdout", str) or "", stderr=_typed(compiled, "stderr", str) or "",
                             exit_code=_typed(compiled, "return_code", int), timed_out=timed_out,
                             duration=_typed(compiled, "execution_time", int | float) or 0.0,
                             reason="compile timeout" if timed_out else COMPILE_ERROR)
    if not isinstance(run, dict):
        raise MalformedResponse("no run_result")
    status = _status(run)
    if status == "Error":
        return SandboxResult.failed(f"the sandbox service failed running the program: "
                                    f"{message or _typed(run, 'stderr', str)}")
    timed_out = status == "TimeLimitExceeded"
    code = None if timed_out else _typed(run, "return_code", int)
    if code is None and not timed_out:
        raise MalformedResponse("a finished run without its return_code")
    stdout, stderr = _typed(run, "stdout", str) or "", _typed(run, "stderr", str) or ""
    over = len(stdout.encode()) > program.output_limit
    if over:
        stdout = stdout.encode()[:program.output_limit].decode("utf-8", "replace")
    return SandboxResult(stdout=stdout, stderr=stderr[:program.output_limit], exit_code=code, timed_out=timed_out,
                         duration=_typed(run, "execution_time", int | float) or 0.0, stdout_truncated=over,
                         reason=message or _reason(program, timed_out, code, over))


def _status(command: dict) -> str:
    status = command.get("status")
    if status not in ("Finished", "TimeLimitExceeded", "Error"):
        raise MalformedResponse(f"command status {str(status)[:40]!r} is none of Finished, TimeLimitExceeded, Error")
    return status


def _typed(command: dict, name: str, kind: Any) -> Any:
    """``command[name]``, ``None`` when absent or null; MalformedResponse when of another type."""
    value = command.get(name)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise MalformedResponse(f"{name} is a {type(value).__name__}")
    return value


def _reason(program: Program, timed_out: bool, code: int | None, over: bool) -> str:
    if timed_out:
        return f"timeout after {program.timeout:g} s"
    if over:
        return f"output limit exceeded ({program.output_limit} bytes)"
    if code is None:
        return "no exit status reported"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}" if code else ""
