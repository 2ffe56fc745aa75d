"""One run cannot hurt another, nor learn what the host does (issue 16): the local backend, for real.

Each test is an attack that worked before: memory or an abstract socket name parked in a unix-socket
cycle outliving its run, a neighbour's busy processes starving another slot, socket families and
syscalls that reach the host (vsock, uevents, inotify), core dumps reaching the host's helper, host
paths in /proc/self/cmdline, and threads that could not start under memory_mb=512.
"""

from __future__ import annotations

import errno
import os
import shutil

import pytest

from rewardhub.sandbox import Program
from rewardhub.sandbox.local import LocalBackend, isolation_problem

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@pytest.fixture
def fresh_slot():
    """A pool of one slot of its own, with a memory cgroup (skipped where none can be made)."""
    backend = LocalBackend(workers=1)
    backend.run(Program("pass"))
    if not backend.cgroups:
        backend.close()
        pytest.skip(f"no writable cgroup memory controller here: {backend.memory_limit}")
    yield backend
    backend.close()


def lines_of(backend: LocalBackend, code: str, **limits) -> list[str]:
    result = backend.run(Program(code, **limits))
    assert result.error is None and result.exit_code == 0, (result.reason, result.stderr[-800:])
    return result.stdout.splitlines()


SOCKETS = """
import errno, socket
families = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_KEY": 15,
            "AF_CAN": 29, "AF_BLUETOOTH": 31, "AF_ALG": 38, "AF_VSOCK": 40, "AF_XDP": 44}
kinds = {"AF_NETLINK": (socket.SOCK_DGRAM, 15), "AF_PACKET": (socket.SOCK_RAW, 0), "AF_KEY": (socket.SOCK_RAW, 2),
         "AF_ALG": (socket.SOCK_SEQPACKET, 0), "AF_XDP": (socket.SOCK_RAW, 0)}
for name, family in families.items():
    kind, proto = kinds.get(name, (socket.SOCK_STREAM, 0))
    try:
        socket.socket(family, kind, proto).close()
        print(name, "created")
    except OSError as exc:
        print(name, errno.errorcode.get(exc.errno, exc.errno))
try:
    a, b = socket.socketpair()
    print("socketpair", "created")
except OSError as exc:
    print("socketpair", errno.errorcode.get(exc.errno, exc.errno))
"""


def test_only_unix_and_inet_socket_families_can_be_created(pool):
    """An allowlist: a run once bound a vsock port shared with the hypervisor, and netlink hears host uevents."""
    found = dict(line.split() for line in lines_of(pool, SOCKETS))
    assert {name: found.pop(name) for name in ("AF_UNIX", "AF_INET", "AF_INET6", "socketpair")} == dict.fromkeys(
        ("AF_UNIX", "AF_INET", "AF_INET6", "socketpair"), "created")
    assert found == dict.fromkeys(found, "EAFNOSUPPORT") and "AF_VSOCK" in found and "AF_NETLINK" in found


def test_no_inotify_or_fanotify_on_the_host_files_it_sees(pool):
    """/usr is the host's, bind-mounted: a watch on it would show which programs the host runs."""
    out = lines_of(pool, """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, call in [("inotify_init1", lambda: libc.inotify_init1(0)), ("inotify_init", lambda: libc.syscall(253)),
                   ("fanotify_init", lambda: libc.syscall(300, 0, 0))]:
    print(name, call(), ctypes.get_errno())
""")
    assert out == [f"{name} -1 {errno.EPERM}" for name in ("inotify_init1", "inotify_init", "fanotify_init")]


def test_runs_are_not_dumpable_and_cannot_become_so(pool):
    """A crash must never start the host's core-dump helper (a root process under a pipe core_pattern)."""
    out = lines_of(pool, """
import ctypes, os, resource, subprocess
libc = ctypes.CDLL(None, use_errno=True)
print("dumpable", libc.prctl(3, 0, 0, 0, 0))
print("set dumpable", libc.prctl(4, 1, 0, 0, 0), ctypes.get_errno(), libc.prctl(3, 0, 0, 0, 0))
print("core limit", *resource.getrlimit(resource.RLIMIT_CORE))
try:
    resource.setrlimit(resource.RLIMIT_CORE, (2, 2))
    print("raised")
except ValueError:
    print("kept")
child = os.fork()
if child == 0:
    os.kill(os.getpid(), 11)
print("child", os.waitpid(child, 0)[1] & 0x7F, "core files", [n for n in os.listdir(".") if n.startswith("core")])
print(subprocess.run(["grep", "core file", "/proc/self/limits"], capture_output=True, text=True).stdout.split()[-3:-1])
""")
    assert out[:4] == ["dumpable 0", f"set dumpable -1 {errno.EPERM} 0", "core limit 1 1", "kept"]
    # exec makes a process dumpable again: RLIMIT_CORE 1 is the value at which the kernel skips a pipe helper
    assert out[4:] == ["child 11 core files []", "['1', '1']"]


@needs_gcc
def test_a_compiled_program_keeps_the_core_limit_and_cannot_read_its_build(pool):
    code = r"""#include <stdio.h>
#include <sys/resource.h>
#include <sys/prctl.h>
int main(void) {
    struct rlimit r; getrlimit(RLIMIT_CORE, &r);
    printf("core %ld %ld dumpable %d exe %s\n", (long) r.rlim_cur, (long) r.rlim_max, prctl(PR_GET_DUMPABLE),
           fopen("/proc/self/exe", "rb") ? "readable" : "unreadable");
    return 0;
}"""
    build = pool.run(Program(code, language="c", compile_only=True))
    assert build.executable is not None, build.stderr
    result = pool.run(Program("", language="c", executable=build.executable))
    assert result.stdout == "core 1 1 dumpable 0 exe unreadable\n"  # an unreadable build stays non-dumpable
    with pytest.raises(PermissionError):  # sealed: no run, nor anyone else, can change what later runs execute
        os.pwrite(build.executable.fileno(), b"\0", 0)


def test_proc_cmdline_shows_no_host_path_or_slot_configuration(pool):
    out = lines_of(pool, """
import os
print(open("/proc/self/cmdline", "rb").read())
r, w = os.pipe()
if os.fork() == 0:
    os.write(w, open("/proc/self/cmdline", "rb").read())
    os._exit(0)
os.wait()
print(os.read(r, 4096))
print(sorted(p for p in os.listdir("/proc") if p.isdigit()))
""")
    assert out == ["b'python3\\x00main.py\\x00'"] * 2 + ["['2']"]  # init (pid 1) and the zygote stay hidden


THREADS = """
import threading, time
done = []
def work():
    chunks = [bytearray(100_000) for _ in range(5)]  # malloc'd in this thread: it gets an arena of its own
    time.sleep(0.2)
    done.append(len(chunks))
threads = [threading.Thread(target=work) for _ in range(12)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("threads", len(done))
"""


def test_threads_work_within_the_memory_limit(pool):
    """Each glibc arena reserves 64 MB of address space: only ~7 threads used to fit under memory_mb=512
    (12 threads, the program and its init use 14 of the default 16 processes)."""
    assert lines_of(pool, THREADS, memory_mb=512, timeout=20) == ["threads 12"]


POISON = r"""
import os, socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
parked = []
for _ in range(9):  # 9 x 50 MB of memfds, resident and charged to this run
    fd = os.memfd_create("parked")
    os.pwrite(fd, b"x" * (50 * 2**20), 0)
    parked.append(fd)
channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
channel.bind("\0rewardhub-test-channel")  # an abstract name: visible to the whole network namespace
channel.listen()
socket.send_fds(a, [b"m"], parked + [channel.fileno()])
socket.send_fds(b, [b"m"], [a.fileno(), b.fileno()])  # a cycle: nothing references it, yet it stays
print("parked")
"""

PROBE = r"""
import socket
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    listener.connect("\0rewardhub-test-channel")
    print("channel open")
except OSError:
    print("channel closed")
need = b"y" * (300 * 2**20)
print("allocated", len(need) // 2**20)
"""


def slot_usage_mb(path: str) -> float:
    for name in ("memory.usage_in_bytes", "memory.current"):
        if os.path.exists(f"{path}/{name}"):
            with open(f"{path}/{name}") as f:
                return int(f.read()) / 2**20
    raise FileNotFoundError(f"no memory usage file in {path}")


def test_memory_parked_in_a_unix_socket_cycle_does_not_poison_the_next_runs(fresh_slot):
    """~459 MB left charged made the next program needing 300 of its 576 MB die 8 times out of 8, and an
    abstract socket name bound in the cycle stayed reachable from the next runs."""
    assert fresh_slot.run(Program(POISON, memory_mb=512, timeout=20)).stdout == "parked\n"
    for _ in range(3):
        result = fresh_slot.run(Program(PROBE, memory_mb=512, timeout=20))
        assert (result.stdout, result.reason) == ("channel closed\nallocated 300\n", "")
    small = fresh_slot.run(Program("print('small budget')", memory_mb=32, disk_mb=8))
    assert (small.stdout, small.error) == ("small budget\n", None)
    assert slot_usage_mb(fresh_slot.cgroups[0]) < 64  # the parked memfds were freed, not just moved aside


def test_each_run_gets_a_memory_cgroup_of_its_own(fresh_slot):
    first, second = (lines_of(fresh_slot, "print(open('/proc/self/cgroup').read())") for _ in range(2))
    memory = [[line for line in out if "/run-" in line] for out in (first, second)]
    assert memory[0] != memory[1] and all(len(lines) == 1 for lines in memory)
    assert not [name for name in os.listdir(fresh_slot.cgroups[0]) if name.startswith("run-")]  # none left behind


NEIGHBOUR = """
import os, time
ends = []
for _ in range(14):
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()  # a session of its own: the kernel's autogroups would give it a share of its own
        stop = time.monotonic() + 3
        while time.monotonic() < stop:
            pass
        os.write(w, str(time.process_time()).encode())
        os._exit(0)
    os.close(w)
    ends.append(r)
print(sum(float(os.read(r, 64)) for r in ends) / len(ends))
"""

LONE = """
import time
time.sleep(0.5)  # the neighbour's processes are all running by now
stop = time.monotonic() + 2
while time.monotonic() < stop:
    pass
print(time.process_time())
"""


def test_each_slot_gets_its_share_of_the_cpu(pool):
    """14 busy processes in one slot made a correct 1 s program in the other time out, 3 times of 3.

    Each in a session of its own, so the kernel's autogroups (one per session) cannot stand in for a
    share per slot; machines here are shared, so the test compares shares, not seconds.
    """
    if getattr(pool, "cpu_cgroups", None) == []:
        pytest.skip(f"no writable cgroup cpu controller here: {pool.cpu_share}")
    neighbour, lone = pool.run_many([Program(NEIGHBOUR, timeout=20, max_processes=20), Program(LONE, timeout=20)])
    assert neighbour.exit_code == 0 and lone.exit_code == 0, (neighbour.stderr, lone.stderr)
    each_busy, alone = float(neighbour.stdout), float(lone.stdout)
    # With a share per slot the lone process gets about what all 14 get together; without, what one of them gets.
    assert alone > 4 * each_busy, (alone, each_busy)
    for path, pid in zip(pool.cpu_cgroups, pool.pids, strict=True):
        with open(f"{path}/cgroup.procs") as f:
            assert str(pid) in f.read().split()
