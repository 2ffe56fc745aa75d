"""The local backend: a pool of warm zygotes (see ``_zygote.py``), one per slot, each with its own uid.

The host side only frames requests (a unix socket, so a build's descriptor can go along) and results
(a pipe), and gives each slot a memory and a cpu cgroup where it can (``_cgroups.py``); all isolation
happens in the zygote. A slot that misbehaves (no answer by the deadline, a run that died unread,
unix sockets left in flight that the kernel would not collect) is killed and restarted; a run it
could not carry out comes back with ``error`` set rather than a verdict.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import marshal
import os
import queue
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from . import _cgroups as cgroups
from .build import BuildWriter
from .errors import SandboxUnavailableError
from .languages import host_paths, toolchain_problem
from .languages.cache import BuildCache
from .outcome import run_result
from .precompiled import PRECOMPILED
from .program import Program, SandboxResult

__all__ = [
    "DEFAULT_PRELOAD",
    "EXTRA_ROOT",
    "FRAME",
    "GRACE",
    "LocalBackend",
    "MAX_SLOTS",
    "PROGRAM_ENV",
    "REQUEST",
    "STARTUP_TIMEOUT",
    "SYSTEM_DIRS",
    "SYSTEM_FILES",
    "Slot",
    "UID_BASE",
    "UID_BLOCKS",
    "UID_CLAIMS",
    "ZYGOTE",
    "claim_uids",
    "filesystem_view",
    "isolation_problem",
    "slot_cgroups",
]

FRAME = struct.Struct("<II")
READY, STDOUT, STDERR, DONE, FAILED = 0, 1, 2, 3, 4
REQUEST = struct.Struct("<QddqQ")  # payload length, timeout, compile budget, output limit, memory budget
ZYGOTE = Path(__file__).with_name("_zygote.py")
# The zygote's whole environment, which every program inherits: nothing of the host's. One malloc
# arena: each further one (glibc makes one per thread, up to 8 per core) reserves 64 MB of address
# space, so a few threads would use up memory_mb without using any memory.
PROGRAM_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/work", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
               "MALLOC_ARENA_MAX": "1"}
STARTUP_TIMEOUT = 30.0
GRACE = 5.0  # seconds past a run's own deadline before the host gives up on the slot
UID_BASE = 1_500_000
MAX_SLOTS = 64
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives")
# What test programs (HumanEval, MBPP, LiveCodeBench) import, and what the code reward's harnesses
# use. Every module here makes each run's fork dearer (a copy of its page tables, then copy-on-write
# faults), so the heavy and rare ones (multiprocessing, unittest, dataclasses) are imported by the
# programs that want them.
DEFAULT_PRELOAD = (
    "abc", "array", "bisect", "collections", "copy", "datetime", "decimal", "enum", "fractions",
    "functools", "heapq", "io", "itertools", "json", "math", "operator", "random", "re", "statistics",
    "string", "sys", "time", "traceback", "typing", "threading", "atexit", "types", "builtins",
)


def isolation_problem() -> str | None:
    """Why the local backend cannot isolate here, or ``None`` when it can (the zygote checks the rest)."""
    if not sys.platform.startswith("linux"):
        return f"the local sandbox needs Linux namespaces; this is {sys.platform}"
    if os.geteuid() != 0:
        return (
            f"the local sandbox needs root (to create mount/pid/net namespaces and switch each slot to "
            f"its own unprivileged uid); running as uid {os.geteuid()}"
        )
    return None


EXTRA_ROOT = "/opt/rewardhub"  # where extra paths appear inside (their host place may be hidden, e.g. /work)


def filesystem_view(python: str, extra_paths: Sequence[str]) -> tuple[list[list[str]], dict[str, str], list[str]]:
    """Read-only binds (host path, sandbox path), top-level symlinks, and the extra paths' sandbox names."""
    readonly: list[list[str]] = []
    symlinks: dict[str, str] = {}
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            symlinks[path] = os.readlink(path)
        elif os.path.isdir(path):
            readonly.append([path, path])
    readonly += [[path, path] for path in SYSTEM_FILES if os.path.exists(path)]
    for path in (os.path.realpath(sys.base_prefix), os.path.dirname(python)):
        if not any(path == seen or path.startswith(seen + "/") for seen, _ in readonly):
            readonly.append([path, path])
    readonly += [[path, path] for path in host_paths()]  # toolchains' own files outside /usr (the JDK's /etc/java-*)
    inside = [f"{EXTRA_ROOT}/{i}" for i in range(len(extra_paths))]
    readonly += [[os.path.realpath(path), target] for path, target in zip(extra_paths, inside, strict=True)]
    return readonly, symlinks, inside


UID_CLAIMS = "/run/rewardhub-sandbox-uids"
UID_BLOCKS = (2**31 - UID_BASE) // MAX_SLOTS


def claim_uids() -> tuple[int, int]:
    """A block of ``MAX_SLOTS`` uids no other pool on this host uses, and the descriptor that holds it.

    Each block is a lock file (``flock``): held while the pool lives, released by the kernel when its
    process ends, so two pools (in one process or in two) never share uids, and so never share the
    per-uid ``RLIMIT_NPROC``.
    """
    directory = UID_CLAIMS if os.access("/run", os.W_OK) else os.path.join(tempfile.gettempdir(), "rewardhub-sandbox-uids")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    start = (os.getpid() * 16) % UID_BLOCKS
    for step in range(UID_BLOCKS):
        block = (start + step) % UID_BLOCKS
        fd = os.open(f"{directory}/{block}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UID_BASE + block * MAX_SLOTS, fd
    raise SandboxUnavailableError("local sandbox: no free block of slot uids")


def slot_cgroups(controller: str, count: int) -> tuple[list[dict | None], str]:
    """One ``controller`` cgroup per slot (``path``, ``version``), or none, and why not."""
    try:
        paths, version = cgroups.create_slots(controller, count)
    except OSError as exc:
        return [None] * count, str(exc)
    return [{"path": path, "version": version} for path in paths], f"cgroup v{version}"


class Slot:
    """One zygote process, its request socket and response pipe; used by one thread at a time."""

    def __init__(self, config: dict):
        self.config = config
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        for controller in ("memory", "cpu"):
            cgroup = self.config[controller]
            if cgroup:
                try:
                    cgroups.make(cgroup["path"], controller, cgroup["version"])
                except OSError as exc:
                    raise SandboxUnavailableError(
                        f"local sandbox: cannot create the slot's {controller} cgroup: {exc}") from None
        self.requests, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.resp_r, resp_w = os.pipe()
        self.log = tempfile.TemporaryFile()  # the zygote's stderr: a file, so it can never block on it
        try:
            self.process = subprocess.Popen(
                [self.config["python"], "-I", "-S", "-B", str(ZYGOTE), json.dumps(self.config),
                 str(zygote_end.fileno()), str(resp_w)],
                pass_fds=(zygote_end.fileno(), resp_w), env=PROGRAM_ENV, start_new_session=True,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log,
            )
        finally:
            zygote_end.close()
            os.close(resp_w)
        try:
            kind, body = self._frame(time.monotonic() + STARTUP_TIMEOUT)
        except (TimeoutError, EOFError) as exc:
            stderr = self._stop()
            raise SandboxUnavailableError(f"local sandbox: the zygote did not start ({exc}): {stderr}") from None
        if kind != READY:
            self._stop()
            raise SandboxUnavailableError(
                f"local sandbox: isolation could not be set up here: {body.decode(errors='replace')} "
                "(needs mount, pid, net, uts and ipc namespaces and tmpfs/bind/proc mounts)"
            )

    def run(self, program: Program) -> SandboxResult:
        result = self._attempt(program)
        if result is None:  # the zygote had died before taking the run: start a new one, try once more
            result = self._attempt(program) or SandboxResult.failed("the sandbox slot died twice in a row")
        return result

    def _attempt(self, program: Program) -> SandboxResult | None:
        """One try; ``None`` when the zygote was found dead before it answered anything."""
        if len(self.config["precompile"]) != len(PRECOMPILED) and self.process is not None:
            self._stop()  # code registered since it started: a new zygote compiles it too
        if self.process is None or self.process.poll() is not None:
            if self.process is not None:
                self._stop()
            self.config["precompile"] = list(PRECOMPILED)
            self.start()
        answered = False
        request = program.request()
        stdin = _memfd(request.pop("stdin").encode())  # never read into the zygote's or the program's heap
        payload = marshal.dumps(request)  # the zygote runs this same interpreter
        compile_budget = program.compile_budget
        deadline = time.monotonic() + program.timeout + compile_budget + GRACE
        stdout = BuildWriter() if program.compile_only else bytearray()
        stderr = bytearray()
        try:
            header = REQUEST.pack(len(payload), program.timeout, compile_budget, program.output_limit,
                                  program.memory_budget_mb * 1024 * 1024)
            build = [program.executable.fileno()] if program.executable is not None else []
            try:
                socket.send_fds(self.requests, [header], [stdin, *build])
            finally:
                os.close(stdin)
            self.requests.sendall(payload)
            while True:
                kind, body = self._frame(deadline)
                answered = True
                if kind == STDOUT:
                    stdout.write(body) if isinstance(stdout, BuildWriter) else stdout.extend(body)
                elif kind == STDERR:
                    stderr += body
                elif kind == DONE:
                    return self._finish(program, json.loads(body), stdout, stderr)
        except (TimeoutError, EOFError, OSError) as exc:
            self._stop()
            if not answered and not isinstance(exc, TimeoutError):
                return None
            return SandboxResult.failed(f"the sandbox slot stopped answering ({type(exc).__name__}); restarted it")
        except BaseException:  # interrupted mid-run (Ctrl-C): the rest of this run must not reach the next one
            self._stop()
            raise
        finally:
            if isinstance(stdout, BuildWriter):
                stdout.discard()

    def _finish(self, program: Program, facts: dict, stdout: bytearray | BuildWriter, stderr: bytearray) -> SandboxResult:
        if not facts["consumed"]:
            self._stop()
            return SandboxResult.failed("the run died before reading its program; slot restarted")
        if facts["cgroup_failed"]:  # e.g. the slot's cgroup was removed under us: a restart recreates it
            self._stop()
            return SandboxResult.failed(
                f"the run could not get a memory cgroup under {self.config['memory']['path']}; "
                "the program did not run; slot restarted"
            )
        if facts["leftover"]:  # unix sockets the kernel did not collect: the next run gets a fresh slot
            self._stop()
        if isinstance(stdout, BuildWriter):
            built = facts["exit_code"] == 0 and not facts["over_limit"] and stdout.size > 0
            result = run_result(program, facts, b"", stderr)
            return replace(result, executable=stdout.finish()) if built else result
        return run_result(program, facts, stdout, stderr)

    def _frame(self, deadline: float) -> tuple[int, bytes]:
        kind, length = FRAME.unpack(self._read(FRAME.size, deadline))
        return kind, self._read(length, deadline)

    def _read(self, n: int, deadline: float) -> bytes:
        chunks, left = [], n
        while left:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.resp_r], [], [], remaining)[0]:
                raise TimeoutError("no answer before the deadline")
            chunk = os.read(self.resp_r, min(left, 1 << 20))
            if not chunk:
                raise EOFError("the zygote exited")
            chunks.append(chunk)
            left -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _stop(self) -> str:
        """Kill the zygote's process group; a running program dies with it (parent-death signal)."""
        stderr = ""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
            self.log.seek(0)
            stderr = self.log.read().decode(errors="replace")[-2000:]
            self.log.close()
            self.process = None
            self.requests.close()
            os.close(self.resp_r)
        return stderr

    def close(self) -> None:
        self._stop()


class LocalBackend:
    """Runs programs in warm, isolated zygotes on this machine (one slot per worker)."""

    name = "local"

    def __init__(self, *, workers: int | None = None, preload: Sequence[str] = DEFAULT_PRELOAD,
                 extra_paths: Sequence[str] = ()):
        problem = isolation_problem()
        if problem:
            raise SandboxUnavailableError(f"{problem}. Use the docker backend, or backend='unsafe' to run without isolation.")
        self.workers = min(workers or os.cpu_count() or 1, MAX_SLOTS)
        self.preload = tuple(preload)
        self.extra_paths = tuple(extra_paths)
        self._lock = threading.Lock()
        self._owner_pid = -1
        self._idle: queue.SimpleQueue[Slot] = queue.SimpleQueue()
        self._slots: list[Slot] = []
        self._root = ""
        self._cgroups: dict[str, list[dict | None]] = {"memory": [], "cpu": []}
        self.memory_limit = "not started yet"  # how runs' memory is limited here, once the pool is up
        self.cpu_share = "not started yet"  # how slots share the CPU here, once the pool is up
        self._executor: ThreadPoolExecutor | None = None
        self._uid_claim = -1
        self.build_cache = BuildCache()  # not `builds`: that says whether the backend takes builds
        atexit.register(self.close)

    def _ensure_started(self) -> None:
        with self._lock:
            if self._owner_pid == os.getpid():
                return
            # First use, or we are a forked copy: the parent's zygotes are not ours to drive.
            self._slots, self._idle, self._executor = [], queue.SimpleQueue(), None
            self._root = tempfile.mkdtemp(prefix="rewardhub-sandbox-")
            python = os.path.realpath(sys.executable)
            readonly, symlinks, sys_path = filesystem_view(python, self.extra_paths)
            self._release_uids()
            uid_base, self._uid_claim = claim_uids()
            memory, memory_how = slot_cgroups("memory", self.workers)
            cpu, cpu_how = slot_cgroups("cpu", self.workers)
            self._cgroups = {"memory": memory, "cpu": cpu}
            self.memory_limit = (
                f"whole run ({memory_how} memory controller, a fresh cgroup per run: memory_mb + disk_mb for "
                "all its processes and files) and per process (RLIMIT_AS)" if memory[0] else
                "per process only (RLIMIT_AS: a run of many processes may use up to max_processes x memory_mb): "
                f"no writable cgroup memory controller ({memory_how})"
            )
            self.cpu_share = (f"one equal share per slot ({cpu_how} cpu controller)" if cpu[0] else
                              f"none: a run with many busy processes slows other slots ({cpu_how})")
            configs = [
                {"root": self._root, "python": python, "readonly": readonly, "symlinks": symlinks,
                 "uid": uid_base + i, "gid": uid_base + i, "preload": list(self.preload),
                 "precompile": list(PRECOMPILED), "sys_path": sys_path, "memory": memory[i], "cpu": cpu[i]}
                for i in range(self.workers)
            ]
            slots = [Slot(config) for config in configs]
            with ThreadPoolExecutor(len(slots)) as pool:
                errors = [f.exception() for f in [pool.submit(slot.start) for slot in slots]]
            if any(errors):
                for slot, error in zip(slots, errors, strict=True):
                    if error is None:
                        slot.close()
                shutil.rmtree(self._root, ignore_errors=True)
                self._remove_cgroups()
                self._release_uids()
                raise next(e for e in errors if e is not None)
            for slot in slots:
                self._idle.put(slot)
            self._slots = slots
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="rewardhub-sandbox")
            self._owner_pid = os.getpid()

    @property
    def uids(self) -> list[int]:
        """The unprivileged uid of each running slot (what its programs run as on the host)."""
        return [slot.config["uid"] for slot in self._slots]

    @property
    def pids(self) -> list[int]:
        """Process ids of the running zygotes."""
        return [slot.process.pid for slot in self._slots if slot.process is not None]

    def run(self, program: Program) -> SandboxResult:
        """Run one program on the next free slot; a source to compile is built once (``BuildCache``)."""
        problem = toolchain_problem(program.language)
        if problem:  # the machine's fault, not the program's: never a compile error
            return SandboxResult.failed(problem)
        self._ensure_started()
        return self.build_cache.run(program, self._run_on_slot)

    def _run_on_slot(self, program: Program) -> SandboxResult:
        slot = self._idle.get()
        try:
            return slot.run(program)
        finally:
            self._idle.put(slot)

    def submit(self, program: Program) -> Future:
        """Start ``program`` on the next free slot; its result arrives in the future."""
        self._ensure_started()
        assert self._executor is not None
        return self._executor.submit(self.run, program)

    def run_many(self, programs: Sequence[Program]) -> list[SandboxResult]:
        """Run programs concurrently, one per free slot; results in input order."""
        self._ensure_started()
        if len(programs) <= 1:
            return [self.run(p) for p in programs]
        assert self._executor is not None
        return list(self._executor.map(self.run, programs))

    def close(self) -> None:
        with self._lock:
            if self._owner_pid != os.getpid():
                return
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            for slot in self._slots:
                slot.close()
            shutil.rmtree(self._root, ignore_errors=True)
            self._remove_cgroups()
            self._release_uids()
            self._slots, self._owner_pid = [], -1

    def _release_uids(self) -> None:
        if self._uid_claim >= 0:
            os.close(self._uid_claim)
            self._uid_claim = -1

    @property
    def cgroups(self) -> list[str]:
        """The memory cgroup directory of each slot (its runs' cgroups are made in it; empty without one)."""
        return [cgroup["path"] for cgroup in self._cgroups["memory"] if cgroup]

    @property
    def cpu_cgroups(self) -> list[str]:
        """The cpu cgroup of each slot (empty without a writable cpu controller)."""
        return [cgroup["path"] for cgroup in self._cgroups["cpu"] if cgroup]

    def _remove_cgroups(self) -> None:
        cgroups.remove(self.cgroups + self.cpu_cgroups)
        self._cgroups = {"memory": [], "cpu": []}


def _memfd(data: bytes) -> int:
    """A memory file holding ``data``, at offset 0 (what a run reads as its stdin)."""
    fd = os.memfd_create("stdin", os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
