"""How a run's facts (exit status, limits hit, who killed it) become a :class:`SandboxResult`: the same
words and the same abstentions for every isolated backend (local zygotes, docker runners)."""

from __future__ import annotations

import signal
from dataclasses import replace

from .program import COMPILE_ERROR, Program, SandboxResult

__all__ = ["EXTERNAL_KILL", "run_reason", "run_result", "signal_name"]

EXTERNAL_KILL = ("killed from outside the run (the host's OOM killer, not the run's own memory, time or cpu "
                 "limit): the program's behaviour is unknown")


def signal_name(number: int) -> str:
    """``SIGKILL``, or ``signal 40`` for a number with no name (real-time signals)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_result(program: Program, facts: dict, stdout: bytes | bytearray, stderr: bytes | bytearray) -> SandboxResult:
    """The result of a run the backend carried out, from its facts and its output (up to one byte past the cap)."""
    limit = program.output_limit
    if facts.get("killed_externally"):  # not the program's doing: its behaviour is unknown, never a verdict
        return replace(SandboxResult.failed(EXTERNAL_KILL), killed_externally=True, duration=facts["duration"])
    return SandboxResult(  # decoded straight from the buffers: no further copy of up to output_limit bytes
        stdout=str(memoryview(stdout)[:limit], "utf-8", "replace"),
        stderr=str(memoryview(stderr)[:limit], "utf-8", "replace"),
        exit_code=facts["exit_code"],
        timed_out=facts["timed_out"],
        duration=facts["duration"],
        reason=run_reason(program, facts, stderr[-2000:]),
        stdout_truncated=len(stdout) > limit,
        stderr_truncated=len(stderr) > limit,
        compile_duration=facts.get("compile_duration", 0.0),
        cpu_seconds=facts.get("cpu_seconds"),
    )


def run_reason(program: Program, facts: dict, stderr_tail: bytes) -> str:
    """Why the program did not finish cleanly ("" when it exited 0 within its limits)."""
    code = facts["exit_code"]
    if facts["memory_killed"]:
        return "memory limit exceeded (all the run's processes together; killed by the OOM killer)"
    if facts.get("compile_timed_out"):
        return f"compile timeout after {program.compile_timeout:g} s"
    if facts["timed_out"]:
        return f"timeout after {program.timeout:g} s"
    if facts["over_limit"]:
        return f"output limit exceeded ({program.output_limit} bytes)"
    if facts["compile_failed"]:
        return COMPILE_ERROR
    if code is None:
        return "killed before it reported an exit status"
    if code == -signal.SIGXCPU or facts.get("cpu_killed"):
        return "cpu time limit exceeded"
    if code == -signal.SIGXFSZ:
        return "file size limit exceeded"
    if code != 0 and (b"MemoryError" in stderr_tail or b"std::bad_alloc" in stderr_tail):
        return "memory limit exceeded"
    if code < 0:
        return f"killed by {signal_name(-code)}"
    if code > 0:
        return f"exit code {code}"
    return ""
