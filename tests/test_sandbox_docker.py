"""The docker backend: its in-container runner (tested here as a plain process) and, where an engine
answers, the backend itself (skipped with the reason otherwise)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys

import pytest

from rewardhub import sandbox
from rewardhub.sandbox import Program
from rewardhub.sandbox.docker_backend import RUNNER, runner_request


def run_runner(program: Program, root) -> dict:
    """Run _docker_runner.py the way the backend does, minus the container and the reaping."""
    done = subprocess.run([sys.executable, "-c", RUNNER.read_text(), json.dumps(runner_request(program)), f"--root={root}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_runner_reports_output_exit_code_and_files(tmp_path):
    result = run_runner(Program("import sys, helper\nprint(helper.X, input())\nsys.exit(4)", stdin="in",
                                files={"helper.py": "X = 7"}), tmp_path)
    assert (result["stdout"], result["exit_code"], result["reason"]) == ("7 in\n", 4, "exit code 4")
    assert list(tmp_path.iterdir()) == []  # the run's directory is removed


def test_runner_enforces_deadline_output_cap_and_memory(tmp_path):
    assert run_runner(Program("while True: pass", timeout=0.5), tmp_path)["reason"] == "timeout after 0.5 s"
    flood = run_runner(Program("while True: print('x' * 1000)", timeout=1, output_limit=5000), tmp_path)
    assert flood["stdout_truncated"] and len(flood["stdout"]) == 5000
    assert run_runner(Program("x = bytearray(8 * 1024**3)", memory_mb=128), tmp_path)["reason"] == "memory limit exceeded"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_runner_compiles_c(tmp_path):
    result = run_runner(Program('#include <stdio.h>\nint main(){puts("ok");return 0;}', language="c"), tmp_path)
    assert (result["stdout"], result["exit_code"]) == ("ok\n", 0)
    assert run_runner(Program("int main( {", language="c"), tmp_path)["reason"] == "compile error"
    build = run_runner(Program('#include <stdio.h>\nint main(){puts("built");}', language="c", compile_only=True), tmp_path)
    executable = base64.b64decode(build["build"])
    assert run_runner(Program("", language="c", executable=executable), tmp_path)["stdout"] == "built\n"


def _engine_problem() -> str | None:
    try:
        sandbox.get_backend("docker")
    except sandbox.SandboxUnavailableError as exc:
        return str(exc)
    return None


ENGINE_PROBLEM = _engine_problem()
needs_engine = pytest.mark.skipif(ENGINE_PROBLEM is not None, reason=f"docker backend unavailable: {ENGINE_PROBLEM}")


@pytest.mark.docker
@needs_engine
def test_docker_backend_runs_and_contains():
    backend = sandbox.get_backend("docker")
    results = backend.run_many([
        Program("print(input()[::-1])", stdin="abc"),
        Program("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)"),
        Program("open('/usr/pwned', 'w')"),
        Program("while True: pass", timeout=1),
    ])
    assert results[0].stdout == "cba\n" and results[0].ok
    assert results[1].exit_code == 1 and "Error" in results[1].stderr
    assert results[2].exit_code == 1
    assert results[3].timed_out
    assert backend.run_many([Program("print(6 * 7)")])[0].stdout == "42\n"


def test_docker_unavailable_says_why():
    if ENGINE_PROBLEM is None:
        pytest.skip("a docker engine answers here")
    assert ENGINE_PROBLEM.startswith("no docker engine answers at ")
