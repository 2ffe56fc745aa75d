"""rewardhub.sandbox: the run/run_many API on the real local backend, languages, limits, backend plugins."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from interrupts import Interrupted, interrupt_after

from rewardhub import sandbox
from rewardhub._manager import pm
from rewardhub.hookspecs import hookimpl
from rewardhub.sandbox import Program, ProgramError, SandboxResult, UnknownBackendError
from rewardhub.sandbox.local import LocalBackend, isolation_problem

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")
needs_compilers = pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("g++")), reason="gcc/g++ not installed")


@needs_isolation
def test_run_returns_output_exit_code_and_duration():
    result = sandbox.run("import sys\nname = input()\nprint('hello', name)\nprint('warn', file=sys.stderr)\nsys.exit(3)",
                         stdin="ada\n", timeout=5)
    assert (result.stdout, result.stderr, result.exit_code) == ("hello ada\n", "warn\n", 3)
    assert not result.timed_out and result.reason == "exit code 3" and not result.ok
    assert 0 < result.duration < 5


@needs_isolation
def test_program_sees_its_files_and_runs_as_main():
    result = sandbox.run("import helper\nprint(helper.twice(21), __name__, open('data.txt').read())",
                         files={"helper.py": "def twice(x):\n    return 2 * x\n", "data.txt": "payload"})
    assert result.ok and result.stdout == "42 __main__ payload\n"


@needs_isolation
def test_exceptions_and_exit_codes_match_plain_python():
    results = sandbox.run_many([
        "raise ValueError('boom')",
        "raise SystemExit('bye')",
        "import sys; sys.exit(0)",
        "def broken(:\n    pass",
        "import os; os._exit(7)",
        "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
    ])
    assert [r.exit_code for r in results] == [1, 1, 0, 1, 7, -11]
    assert results[0].stderr.splitlines()[-1] == "ValueError: boom"
    assert "_zygote" not in results[0].stderr  # the traceback shows the program's frames only
    assert results[1].stderr == "bye\n"
    assert "SyntaxError" in results[3].stderr
    assert results[5].reason == "killed by SIGSEGV"


@needs_isolation
def test_run_many_keeps_order_and_runs_concurrently_safe_programs():
    programs = [Program(f"print({i} * {i})") for i in range(40)]
    results = sandbox.run_many(programs)
    assert [r.stdout for r in results] == [f"{i * i}\n" for i in range(40)]
    assert all(r.ok for r in results)


@needs_isolation
def test_an_interrupted_run_leaves_nothing_for_the_next_run_on_its_slot():
    backend = LocalBackend(workers=1)
    try:
        with pytest.raises(Interrupted), interrupt_after(0.5):
            backend.run(Program("import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('late')"))
        result = backend.run(Program("print('second')"))
        assert (result.stdout, result.exit_code, result.error) == ("second\n", 0, None)
    finally:
        backend.close()


@needs_isolation
def test_multiprocessing_threads_and_subprocess_work_inside():
    result = sandbox.run("""
import multiprocessing, subprocess, threading
with multiprocessing.Pool(2) as pool:
    print(sum(pool.map(abs, [-1, -2, -3])))
out = []
t = threading.Thread(target=out.append, args=(5,)); t.start(); t.join()
print(out[0], subprocess.run(["echo", "hi"], capture_output=True, text=True).stdout.strip())
""", timeout=20)
    assert result.ok, result.stderr
    assert result.stdout == "6\n5 hi\n"


@needs_isolation
@needs_compilers
@pytest.mark.parametrize(("language", "code"), [
    ("c", '#include <stdio.h>\nint main(){int a,b; scanf("%d %d",&a,&b); printf("%d\\n",a+b); return 0;}'),
    ("cpp", "#include <iostream>\nint main(){int a,b; std::cin>>a>>b; std::cout<<a+b<<std::endl;}"),
])
def test_c_and_cpp_compile_and_run(language, code):
    result = sandbox.run(code, stdin="40 2\n", language=language)
    assert result.ok and result.stdout == "42\n"
    broken = sandbox.run("int main( {", language=language)
    assert broken.reason == "compile error" and broken.exit_code == 1 and "error" in broken.stderr


@needs_isolation
@needs_compilers
def test_compile_once_then_run_the_build_per_input():
    build = sandbox.run_many([Program('#include <stdio.h>\nint main(){int a; scanf("%d",&a); printf("%d\\n",a*a);}',
                                      language="c", compile_only=True)])[0]
    assert build.ok and build.stdout == "" and build.executable.read().startswith(b"\x7fELF")
    runs = sandbox.run_many([Program("", language="c", executable=build.executable, stdin=f"{i}\n") for i in range(4)])
    assert [r.stdout for r in runs] == ["0\n", "1\n", "4\n", "9\n"]
    broken = sandbox.run_many([Program("int main( {", language="c", compile_only=True)])[0]
    assert broken.executable is None and broken.reason == "compile error"
    with pytest.raises(ProgramError, match="compiled languages"):
        Program("print(1)", compile_only=True)


@needs_isolation
@needs_compilers
def test_a_compiled_infinite_loop_times_out():
    result = sandbox.run("int main(){ for(;;); }", language="c", timeout=1)
    assert result.timed_out and result.exit_code is None


def test_bad_programs_are_refused_with_a_clear_error():
    with pytest.raises(ProgramError, match="unknown language .cobol.; supported: python, c, cpp, java, go, rust"):
        Program("DISPLAY 1.", language="cobol")
    with pytest.raises(ProgramError, match="bad file name '../escape'"):
        Program("", files={"../escape": "x"})
    with pytest.raises(ProgramError, match="timeout must be positive"):
        Program("", timeout=0)
    with pytest.raises(UnknownBackendError, match="unknown sandbox backend 'nope'; installed: .*local"):
        sandbox.get_backend("nope")


def test_auto_refuses_without_isolation_and_never_falls_back_to_unsafe():
    """In a user namespace we are not root: the local backend must refuse, naming why and the way out."""
    code = ("from rewardhub import sandbox\n"
            "print(sandbox.run('print(1)', backend='unsafe').stdout.strip())\n"
            "sandbox.run('print(1)')\n")
    done = subprocess.run(["unshare", "--user", sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if "unshare failed" in done.stderr:
        pytest.skip("user namespaces are not available to build a non-root environment")
    assert done.returncode == 1
    assert done.stdout == "1\n"  # the explicit unsafe mode still works
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("rewardhub.sandbox.errors.SandboxUnavailableError: no isolated sandbox backend works here")
    assert "needs root" in last and "docker" in last and "backend='unsafe'" in last


class EchoBackend:
    """A third-party backend: echoes the program instead of running it."""

    name = "echo"

    def run_many(self, programs):
        return [SandboxResult(stdout=p.code, exit_code=0) for p in programs]

    def close(self):
        pass


class EchoPlugin:
    @hookimpl
    def register_sandbox_backends(self, register):
        register("echo", lambda **options: EchoBackend())


def test_backends_are_pluggable():
    plugin = EchoPlugin()
    pm.register(plugin, name="echo-backend-test")
    try:
        assert "echo" in sandbox.backend_factories()
        assert sandbox.run_many(["print(1)", "x"], backend="echo")[1].stdout == "x"
    finally:
        pm.unregister(plugin)
        sandbox.close_backends()
    assert "echo" not in sandbox.backend_factories()


@needs_isolation
def test_extra_paths_make_more_packages_importable():
    import sysconfig

    from rewardhub.sandbox.local import LocalBackend

    site_packages = sysconfig.get_paths()["purelib"]
    plain = sandbox.run("import yaml")
    assert plain.exit_code == 1 and "ModuleNotFoundError" in plain.stderr  # only the standard library
    backend = LocalBackend(workers=1, extra_paths=[site_packages])
    try:
        result = backend.run(Program("import yaml\nprint(yaml.safe_load('a: 1'))"))
        assert result.ok and result.stdout == "{'a': 1}\n", result.stderr
    finally:
        backend.close()


@needs_isolation
def test_cli_reports_which_backends_work(capsys):
    from rewardhub.cli import main

    assert main(["sandbox", "--backend", "local"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("local: ok (isolated, ") and "local: memory limit: " in out and "local: cpu share: " in out
    assert main(["sandbox", "--backend", "unsafe"]) == 1  # it runs, but isolates nothing
    assert "WITHOUT isolation" in capsys.readouterr().out


@needs_isolation
def test_run_each_yields_results_as_runs_finish_and_takes_programs_as_slots_free_up():
    backend = sandbox.get_backend("local", workers=2)
    taken = []

    def programs():
        for i in range(12):
            taken.append(i)
            yield Program(f"import time\ntime.sleep({2 if i == 0 else 0})\nprint({i})")  # 0 is the slow one, under any load

    seen = []
    for index, result in sandbox.run_each(programs(), backend="local", workers=2):
        if not seen:
            assert len(taken) <= 2 * backend.workers + 1  # not the whole batch up front
        seen.append(index)
        assert result.stdout == f"{index}\n"
    assert sorted(seen) == list(range(12)) and seen[0] != 0  # the slow first program finishes later


@needs_isolation
def test_precompiled_code_is_picked_up_by_a_running_pool():
    backend = LocalBackend(workers=1)
    source = "import sys\nprint('precompiled', sys.argv, __name__)\n"
    try:
        before = backend.run(Program(source))
        zygote = backend.pids[0]
        sandbox.precompile(source)
        after = backend.run(Program(source))
        assert before.stdout == after.stdout == "precompiled ['main.py'] __main__\n"
        restarted = backend.pids[0]
        assert restarted != zygote  # restarted once, to compile it
        backend.run(Program("pass"))
        assert backend.run(Program(source)).stdout == after.stdout and backend.pids == [restarted]  # once only
    finally:
        backend.close()
        sandbox.precompiled.PRECOMPILED.remove(source)


@needs_isolation
def test_each_run_draws_its_own_random_numbers():
    """Runs are forks of one warm interpreter: its random state must not be shared by all of them."""
    results = sandbox.run_many([Program("import random\nprint(random.random())") for _ in range(4)])
    assert len({r.stdout for r in results}) == 4
