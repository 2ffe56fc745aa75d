"""Hostile programs against the local sandbox: each is contained, the host is unharmed, nothing lingers.

After every test, no process of the sandbox's uids is left on the host, the zygotes that served the
test are the same processes as before (nothing killed them), and a fresh run still works.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import threading

import pytest

from rewardhub.sandbox import Program
from rewardhub.sandbox.local import LocalBackend, isolation_problem

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")


def host_processes_of(uids: list[int]) -> list[int]:
    """Host pids whose real uid is one of ``uids``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                uid = next(int(line.split()[1]) for line in f if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if uid in uids:
            found.append(int(entry))
    return found


def assert_contained(backend: LocalBackend, zygotes: list[int]) -> None:
    assert host_processes_of(backend.uids) == []
    assert backend.pids == zygotes, "a zygote was killed or restarted"
    after = backend.run(Program("print(6 * 7)"))
    assert (after.stdout, after.exit_code) == ("42\n", 0)


@pytest.fixture
def sandbox(pool):
    zygotes = list(pool.pids)
    yield pool
    assert_contained(pool, zygotes)


def run(backend: LocalBackend, code: str, **limits) -> tuple[str, object]:
    result = backend.run(Program(code, **limits))
    assert result.error is None, result.error
    return result.stdout, result


def test_no_network_at_all(sandbox):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted = []
    server.settimeout(0.2)

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    watcher = threading.Thread(target=accept)
    watcher.start()
    stdout, _ = run(sandbox, f"""
import socket
for target in [("127.0.0.1", {port}), ("1.1.1.1", 53), ("10.0.0.1", 80)]:
    try:
        socket.create_connection(target, timeout=2)
        print("CONNECTED", target)
    except OSError as exc:
        print("blocked", exc.errno)
try:
    socket.getaddrinfo("pypi.org", 443)
    print("RESOLVED")
except OSError:
    print("blocked dns")
""")
    watcher.join()
    server.close()
    assert accepted == []
    assert "CONNECTED" not in stdout and "RESOLVED" not in stdout
    assert stdout.count("blocked") == 4


def test_cannot_write_outside_its_work_dir(sandbox, tmp_path):
    targets = ["/usr/pwned", "/etc/pwned", "/pwned", "/root/pwned", "/proc/sys/kernel/hostname",
               str(tmp_path / "pwned"), "/dev/pwned"]
    stdout, _ = run(sandbox, f"""
for path in {targets!r}:
    try:
        with open(path, "w") as f:
            f.write("x")
        print("WROTE", path)
    except OSError as exc:
        print("denied", path)
with open("/work/mine.txt", "w") as f:
    f.write("ok")
print(open("/work/mine.txt").read())
""")
    assert "WROTE" not in stdout
    assert stdout.count("denied") == len(targets)
    assert stdout.endswith("ok\n")
    assert not (tmp_path / "pwned").exists() and not os.path.exists("/pwned") and not os.path.exists("/usr/pwned")


def test_cannot_read_host_files(sandbox, tmp_path):
    secret = secrets.token_hex(16)
    (tmp_path / "secret.txt").write_text(secret)
    stdout, result = run(sandbox, f"""
import os
for path in ["/etc/shadow", "/etc/hostname", {str(tmp_path / "secret.txt")!r}, "/proc/1/environ",
             "/work/main/pyproject.toml", os.path.expanduser("~/.bash_history")]:
    try:
        print(open(path).read())
    except OSError as exc:
        print("unreadable", path)
print(sorted(os.listdir("/")))
print(sorted(os.listdir("/root")) if os.path.isdir("/root") else [])
print(os.getuid(), os.geteuid())
""")
    lines = stdout.splitlines()
    assert secret not in stdout
    assert not any(line.startswith("root:") for line in lines)
    assert sum(line.startswith("unreadable") for line in lines) >= 5
    top = eval(lines[-3])
    assert "home" not in top and "var" not in top and "sys" not in top
    # /root shows at most the directories leading to the interpreter, nothing else of the host's
    for entry in eval(lines[-2]):
        assert os.path.realpath(os.sys.base_prefix).startswith(f"/root/{entry}")
    uid = int(lines[-1].split()[0])
    assert uid in sandbox.uids and uid != 0


def test_environment_does_not_leak(monkeypatch):
    secret = secrets.token_hex(16)
    monkeypatch.setenv("REWARDHUB_TEST_API_KEY", secret)
    backend = LocalBackend(workers=1)
    try:
        result = backend.run(Program("""
import os
print(dict(os.environ))
for path in ["/proc/self/environ", "/proc/1/environ"]:
    try:
        print(open(path, "rb").read())
    except OSError:
        print("unreadable", path)  # the run's init is hidden (hidepid) and not dumpable
"""))
        assert result.exit_code == 0
        assert secret not in result.stdout and "REWARDHUB_TEST_API_KEY" not in result.stdout
        assert eval(result.stdout.splitlines()[0]).keys() == {"PATH", "HOME", "LANG", "TMPDIR", "MALLOC_ARENA_MAX"}
        assert host_processes_of(backend.uids) == []
    finally:
        backend.close()


def test_fork_bomb_is_capped_and_reaped(sandbox):
    stdout, result = run(sandbox, """
import os, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
except OSError as exc:
    print("fork refused after", children)
""", max_processes=20)
    assert "fork refused after" in stdout
    assert int(stdout.split()[-1]) < 20
    _, result = run(sandbox, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
                    timeout=1.5, max_processes=20)
    assert result.timed_out


def test_memory_bomb_hits_the_limit(sandbox):
    _, result = run(sandbox, "x = bytearray(8 * 1024**3)", memory_mb=128)
    assert result.exit_code == 1 and result.reason == "memory limit exceeded"
    _, result = run(sandbox, "chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))", memory_mb=128)
    assert result.reason.startswith("memory limit exceeded") and result.exit_code != 0  # MemoryError or OOM kill
    stdout, result = run(sandbox, "print(len(bytearray(64 * 1024**2)))", memory_mb=128)
    assert stdout == f"{64 * 1024**2}\n"


FORKED_EATERS = """
import os, sys, time
children = []
for _ in range(8):
    pid = os.fork()
    if pid == 0:
        chunk = b"x" * (40 * 1024**2)  # written, so resident: 40 MB, well under memory_mb on its own
        time.sleep(1)
        os._exit(0)
    children.append(pid)
failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
print("children failed", failed)
sys.exit(1 if failed else 0)
"""


@pytest.fixture
def memory_cgroups(sandbox):
    if not sandbox.cgroups:
        pytest.skip(f"no writable cgroup memory controller here: {sandbox.memory_limit}")
    return sandbox


def test_many_processes_share_one_memory_limit(memory_cgroups):
    """8 x 40 MB is under each process's own limit but over the run's 64 + 64 (disk) MB together."""
    stdout, result = run(memory_cgroups, FORKED_EATERS, memory_mb=64, timeout=20)
    assert result.exit_code != 0 and not result.ok
    assert result.reason.startswith("memory limit exceeded") and "together" in result.reason
    assert "children failed 0" not in stdout
    squeezed, roomy = memory_cgroups.run_many([Program(FORKED_EATERS, memory_mb=64, timeout=20),
                                               Program(FORKED_EATERS, memory_mb=512, timeout=20)])
    assert squeezed.reason.startswith("memory limit exceeded")
    assert (roomy.stdout, roomy.exit_code, roomy.reason) == ("children failed 0\n", 0, "")  # per run, per slot


def test_one_process_still_gets_a_memory_error_at_its_own_limit(memory_cgroups):
    _, result = run(memory_cgroups, "x = b'x' * (512 * 1024**2)", memory_mb=128)
    assert result.exit_code == 1 and result.reason == "memory limit exceeded"
    assert "MemoryError" in result.stderr


def test_a_slot_whose_memory_cgroup_was_removed_never_runs_unlimited():
    """Removed under a running pool, the cgroup either still takes the run (some kernels bring it back)
    or the run is a sandbox error (not a verdict) and the restarted slot recreates it."""
    backend = LocalBackend(workers=1)
    try:
        backend.run(Program("pass"))
        if not backend.cgroups:
            pytest.skip(f"no writable cgroup memory controller here: {backend.memory_limit}")
        os.rmdir(backend.cgroups[0])  # between runs the slot's cgroup is empty, so this succeeds
        first = backend.run(Program("print('ran')"))
        if first.error is None:
            assert first.stdout == "ran\n"
        else:
            assert "memory cgroup" in first.error and first.stdout == "" and first.exit_code is None
            assert backend.run(Program("print('again')")).stdout == "again\n"
        assert os.path.isdir(backend.cgroups[0])
        stdout, result = run(backend, FORKED_EATERS, memory_mb=64, timeout=20)
        assert result.reason.startswith("memory limit exceeded")
    finally:
        backend.close()


@pytest.mark.parametrize("code", [67, 80, 82, 88, 71])
def test_exit_codes_whose_status_bytes_look_like_markers_are_reported_as_they_are(sandbox, code):
    """The wait status travels as 4 raw bytes: exit code 67 is 0x4300, whose bytes hold the marker 'C'."""
    _, result = run(sandbox, f"import sys\nsys.exit({code})")
    assert (result.exit_code, result.reason) == (code, f"exit code {code}")


def test_memory_cgroups_are_nested_in_our_own_and_removed_with_the_pool():
    import subprocess

    from rewardhub.sandbox import _cgroups

    try:
        parent, _ = _cgroups.own_cgroup("memory")
    except OSError as exc:
        pytest.skip(f"no cgroup memory controller here: {exc}")
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = f"{parent}/{_cgroups.PREFIX}{gone.pid}-0-0"  # as a crashed earlier pool would leave it
    try:
        os.makedirs(f"{stale}/run-{gone.pid}-0")  # with a run's cgroup in it
    except OSError as exc:
        pytest.skip(f"the memory cgroup {parent} is not writable: {exc}")
    backend = LocalBackend(workers=2)
    try:
        assert backend.run(Program("print('up')")).stdout == "up\n"
        paths, uids = backend.cgroups + backend.cpu_cgroups, backend.uids
        assert len(backend.cgroups) == 2 and all(os.path.dirname(path) == parent for path in backend.cgroups)
        assert all(os.path.isdir(path) for path in paths)
        assert [os.listdir(path) for path in backend.cgroups if "run-" in "".join(os.listdir(path))] == []
        assert not os.path.exists(stale)
        assert "whole run" in backend.memory_limit
    finally:
        backend.close()
        _cgroups.remove([stale], wait=0)
    assert [path for path in paths if os.path.exists(path)] == []
    assert host_processes_of(uids) == []


NO_CGROUP_RUN = """
import json
from rewardhub.sandbox import Program
from rewardhub.sandbox.local import LocalBackend
backend = LocalBackend(workers=1)
result = backend.run(Program(EATERS, memory_mb=64, timeout=20))
print(json.dumps([backend.memory_limit, backend.cgroups, result.stdout, result.exit_code, result.error]))
backend.close()
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux's unshare to hide the cgroup fs")
def test_without_a_writable_memory_controller_runs_keep_the_per_process_limit_and_say_so():
    """The memory cgroup mounted read-only (in a private mount namespace): runs go on, and the gap is reported."""
    import json
    import subprocess
    import sys

    def hidden(*command: str) -> subprocess.CompletedProcess:
        script = "mount -o remount,bind,ro /sys/fs/cgroup/memory 2>/dev/null; exec \"$@\""
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command],
                              capture_output=True, text=True, timeout=120)

    done = hidden(sys.executable, "-c", NO_CGROUP_RUN.replace("EATERS", repr(FORKED_EATERS)))
    assert done.returncode == 0, done.stderr
    memory_limit, cgroups, stdout, exit_code, error = json.loads(done.stdout.splitlines()[-1])
    if "whole run" in memory_limit:
        pytest.skip("the memory cgroup stayed writable (no cgroup v1 memory hierarchy to make read-only)")
    assert memory_limit.startswith("per process only") and "no writable cgroup memory controller" in memory_limit
    assert cgroups == [] and error is None
    assert (stdout, exit_code) == ("children failed 0\n", 0)  # the gap the cgroup closes, still open here
    check = hidden(os.path.join(os.path.dirname(sys.executable), "rewardhub"), "sandbox", "--backend", "local")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "local: memory limit: per process only" in check.stdout


def test_filling_the_disk_stops_at_the_quota(sandbox):
    stdout, _ = run(sandbox, """
written = 0
for path in ["/work/big", "/tmp/big", "/dev/shm/big"]:
    try:
        with open(path, "wb") as f:
            while True:
                f.write(b"x" * 2**20)
                f.flush()
                written += 1
    except OSError as exc:
        print("stopped", path, exc.errno)
print(written)
""", disk_mb=16)
    lines = stdout.splitlines()
    assert [line.split()[1] for line in lines[:-1]] == ["/work/big", "/tmp/big", "/dev/shm/big"]
    assert int(lines[-1]) <= 16


def test_unbounded_output_is_cut_and_killed(sandbox):
    _, result = run(sandbox, "while True:\n    print('x' * 1000)", output_limit=100_000, timeout=60)
    assert not result.timed_out
    assert result.stdout_truncated and len(result.stdout) == 100_000
    assert result.reason == "output limit exceeded (100000 bytes)"


def test_infinite_loop_is_killed_at_the_deadline(sandbox):
    _, result = run(sandbox, "while True:\n    pass", timeout=1)
    assert result.timed_out and result.exit_code is None and result.reason == "timeout after 1 s"


def test_sleeping_tree_is_killed_at_the_deadline(sandbox):
    _, result = run(sandbox, """
import subprocess, time, multiprocessing
subprocess.Popen(["sleep", "60"])
multiprocessing.Process(target=time.sleep, args=(60,)).start()
print("started", flush=True)
time.sleep(60)
""", timeout=1.5)
    assert result.timed_out and result.stdout == "started\n"


def test_closing_its_output_does_not_dodge_the_deadline(sandbox):
    _, result = run(sandbox, "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(60)", timeout=1)
    assert result.timed_out and result.error is None and result.reason == "timeout after 1 s"


def test_daemon_does_not_outlive_its_run(sandbox, tmp_path):
    stdout, result = run(sandbox, """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(30)
        os._exit(0)
    os._exit(0)
print("parent done")
""")
    assert (stdout, result.exit_code) == ("parent done\n", 0)


def test_cannot_kill_the_host_the_zygote_or_other_runs(sandbox):
    killer = Program("""
import os, signal
try:
    os.kill(-1, signal.SIGTERM)  # everything it may signal: nothing but itself, which kill(-1) skips
except ProcessLookupError:
    pass
try:
    os.kill(os.getpid(), signal.SIGKILL)
except PermissionError:
    print("no SIGKILL")  # refused: a SIGKILL death of a run is then always a kill from outside
signalled = []
for pid in range(1, 40000):
    try:
        if pid != os.getpid():
            os.kill(pid, signal.SIGTERM)
            signalled.append(pid)
    except OSError:
        pass
print("signalled", signalled)
""")
    sleeper = Program("import time\ntime.sleep(1)\nprint('alive')")
    results = sandbox.run_many([killer, sleeper, sleeper])
    # nothing but itself is in its pid namespace, except pid 1, which is root's: the killer lives on
    assert results[0].stdout == "no SIGKILL\nsignalled []\n" and results[0].exit_code == 0
    assert [r.stdout for r in results[1:]] == ["alive\n", "alive\n"]
    assert os.getpid() > 0  # still here to assert


def test_cannot_raise_its_limits_or_privileges(sandbox):
    stdout, _ = run(sandbox, """
import os, resource
for which in (resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_CPU, resource.RLIMIT_FSIZE):
    soft, hard = resource.getrlimit(which)
    try:
        resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print("RAISED", which)
    except (ValueError, OSError):
        print("kept", which)
for attempt in (lambda: os.setuid(0), lambda: os.setgid(0), lambda: os.chroot("/tmp")):
    try:
        attempt()
        print("ESCALATED")
    except PermissionError:
        print("refused")
""")
    assert "RAISED" not in stdout and "ESCALATED" not in stdout
    assert stdout.count("kept") == 4 and stdout.count("refused") == 3


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp layer is x86_64 only")
def test_cannot_reach_namespace_mount_or_ptrace_syscalls(sandbox):
    stdout, _ = run(sandbox, """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
attempts = {
    "user namespace": lambda: libc.unshare(0x10000000),
    "mount namespace": lambda: libc.unshare(0x00020000),
    "mount": lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
    "ptrace": lambda: libc.ptrace(16, os.getppid(), None, None),
    "bpf": lambda: libc.syscall(321, 0, None, 0),
}
for name, attempt in attempts.items():
    print(name, attempt(), ctypes.get_errno())
child = os.fork()
if child == 0:
    os._exit(5)
print("fork still works", os.waitpid(child, 0)[1] >> 8)
""")
    lines = stdout.splitlines()
    assert lines[:-1] == [f"{name} -1 1" for name in ("user namespace", "mount namespace", "mount", "ptrace", "bpf")]
    assert lines[-1] == "fork still works 5"


def test_no_trace_of_an_earlier_run():
    """One slot, so both runs come from the same zygote: files, /proc and memory hold nothing of A."""
    secret = secrets.token_hex(16)
    backend = LocalBackend(workers=1)
    try:
        first = backend.run(Program(f"""
from multiprocessing import shared_memory
token = "LEAKMARK" + {secret!r}
for path in ["/work/a.txt", "/tmp/a.txt", "/dev/shm/a.txt"]:
    open(path, "w").write(token)
block = shared_memory.SharedMemory(name="leak", create=True, size=64)
block.buf[:len(token)] = token.encode()
print(token)
""", stdin=f"LEAKMARK{secret}\n"))
        assert secret in first.stdout
        second = backend.run(Program("""
import ctypes, os, re
prefix = ("LEAK" + "MARK").encode()
mine = prefix + b"selfcheck" + os.urandom(4).hex().encode()
print("files", sorted(os.listdir("/work")), os.listdir("/tmp"), os.listdir("/dev/shm"))
print("pids", [p for p in os.listdir("/proc") if p.isdigit()])
found = set()
with open("/proc/self/maps") as maps:  # the run is not dumpable, so /proc/self/mem is closed: read in place
    for line in maps:
        span, perms, _, _, inode, *name = line.split()
        if perms[:2] != "rw" or inode != "0" or (name and name[0] not in ("[heap]", "[stack]")):
            continue  # writable anonymous memory only: where the zygote's heap and this run's data live
        start, end = (int(x, 16) for x in span.split("-"))
        data = ctypes.string_at(start, end - start)
        found.update(m.group(1) for m in re.finditer(re.escape(prefix) + rb"([0-9a-z]{16,32})", data))
print("found", sorted(x.decode() for x in found))
print("mine", mine[len(prefix):].decode())
"""))
        lines = second.stdout.splitlines()
        assert lines[0] == "files ['main.py'] [] []"
        assert lines[1] == "pids ['2']"  # only itself: its pid 1 is root's, so hidden (hidepid)
        assert lines[-1].split()[1] in lines[2], "the memory scan must at least find the run's own marker"
        assert secret not in second.stdout and secret[:16] not in second.stdout
        assert host_processes_of(backend.uids) == []
    finally:
        backend.close()


def test_a_dead_or_stuck_zygote_is_replaced_and_the_run_reported_as_a_sandbox_error():
    import signal

    backend = LocalBackend(workers=1)
    try:
        backend.run(Program("pass"))
        os.kill(backend.pids[0], signal.SIGKILL)
        after_crash = backend.run(Program("print('fresh')"))
        assert after_crash.stdout == "fresh\n" and after_crash.error is None  # restarted before the run
        stuck = backend.pids[0]
        os.kill(stuck, signal.SIGSTOP)
        lost = backend.run(Program("print('never')", timeout=0.5))
        assert lost.error is not None and "stopped answering" in lost.error and lost.exit_code is None
        assert not os.path.exists(f"/proc/{stuck}") or open(f"/proc/{stuck}/stat").read().split()[2] == "Z"
        assert backend.run(Program("print('again')")).stdout == "again\n"
        assert host_processes_of(backend.uids) == []
    finally:
        backend.close()
