"""The docker backend: warm, locked-down containers reused across runs, through the ``docker`` SDK.

Each worker is one long-lived container (no network, read-only root, ``/work`` and ``/tmp`` tmpfs,
CPU and pids limits, no swap, ``no-new-privileges``, core dumps off, only the runner's capabilities)
whose pid 1 is a small reaper, so processes a run leaves behind never pile up as zombies.
In each container one resident runner (``_docker_runner.py``, one ``docker exec`` for many runs)
takes run requests over the exec's stdin and answers on its stdout; it runs as root holding only
the capabilities it needs to fork each program as the sandbox user, so no run can signal, trace or
read it. Python runs are forked from its warm interpreter, which imported the common modules
before any request arrived, so a run costs a fork, not an interpreter's start-up. Before each run
the container's memory limit becomes what the container holds without it (the runner's baseline)
plus the run's own ``memory_mb`` (no swap), so ``memory_mb`` bounds the run itself. Works against a
remote engine through ``base_url`` or ``DOCKER_HOST``.

A run that fails (wrong answer, crash, timeout, memory) keeps its container. A runner that ended
is started again in the same container (it first kills and wipes whatever was left); a container
the backend cannot trust any more (the engine failed, a runner that does not answer, leftovers it
could not remove) is replaced. Either way that run is a sandbox error, never a verdict.
"""

from __future__ import annotations

import base64
import json
import math
import os
import queue
import struct
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from .build import Build
from .errors import MemoryLimitWarning, SandboxUnavailableError
from .languages.cache import BuildCache
from .local import DEFAULT_PRELOAD
from .outcome import run_result
from .precompiled import PRECOMPILED
from .program import Program, SandboxResult

__all__ = [
    "BASELINE_STEP_MB",
    "CONTAINER_USER",
    "DockerBackend",
    "FRAME",
    "GRACE",
    "LABEL",
    "MESSAGE",
    "PYTHON_MAIN",
    "REAPER",
    "RUNNER",
    "RUNNER_CAPABILITIES",
    "RUNNER_ENV",
    "RUNNER_MB",
    "RunnerChannel",
    "RunnerGone",
    "STARTUP_TIMEOUT",
    "Slot",
    "result_of",
    "runner_request",
    "runner_share_mb",
    "runner_script",
]

RUNNER = Path(__file__).with_name("_docker_runner.py")
PYTHON_MAIN = Path(__file__).with_name("_python_main.py")  # the runner imports it: sent along, as a module
LABEL = "rewardhub.sandbox"
CONTAINER_USER = "0:0"  # the engine gives an exec capabilities only where the container's user is root
# the runner's: fork as the sandbox uid, kill what runs leave, give them their folders and remove them
RUNNER_CAPABILITIES = ["SETUID", "SETGID", "KILL", "CHOWN", "FOWNER", "DAC_OVERRIDE"]
RUNNER_MB = 64  # the runner's own memory where its baseline is unknown (the container's first limit, the fallback)
BASELINE_STEP_MB = 4  # the runner's baseline is rounded up to this: a container's limit changes when it drifts
# a fixed mmap threshold: glibc's dynamic one kept a large request's freed buffers in the runner's heap (its
# RSS grew 22 -> 55 MB over runs of 16 MB stdin), which the baseline would then count as the runner's
RUNNER_ENV = {"MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}
GRACE = 15.0  # seconds past a run's own deadline (and cleanup) before the host gives up on the container
STARTUP_TIMEOUT = 60.0
FRAME = struct.Struct(">BxxxI")  # docker's multiplexed stream: kind (1 stdout, 2 stderr), length
MESSAGE = struct.Struct(">I")  # the runner's messages: length, then JSON
# pid 1 of each container: reap every orphan as soon as it exits (nothing else in the container does),
# and end on SIGTERM. Signals are blocked here, never in the runs (they are not its children).
REAPER = """\
import os, signal
wanted = {signal.SIGCHLD, signal.SIGTERM}
signal.pthread_sigmask(signal.SIG_BLOCK, wanted)
while signal.sigwait(wanted) == signal.SIGCHLD:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
"""


class RunnerGone(Exception):
    """The runner's channel ended: the runner exited or was killed."""


class RunnerChannel:
    """The resident runner of one container, spoken to over its ``docker exec``'s attach socket."""

    def __init__(self, api, container_id: str, command: list[str]):
        self.exec_id = api.exec_create(container_id, command, stdin=True, user="0", environment=RUNNER_ENV)["Id"]
        self.stream = api.exec_start(self.exec_id, socket=True)
        self.sock = getattr(self.stream, "_sock", self.stream)
        self.frames = bytearray()  # what the engine sent and is not parsed yet
        self.stdout = bytearray()  # the runner's stdout, not yet read as messages
        self.stderr = bytearray()  # the runner's last words (a traceback), for the error

    def send(self, message: dict, timeout: float) -> None:
        body = json.dumps(message).encode()
        self.sock.settimeout(timeout)
        self.sock.sendall(MESSAGE.pack(len(body)) + body)

    def receive(self, timeout: float) -> dict:
        """The runner's next message; ``RunnerGone`` if its stream ends, ``TimeoutError`` past ``timeout``."""
        self.sock.settimeout(timeout)
        while True:
            if len(self.stdout) >= MESSAGE.size:
                length = MESSAGE.unpack_from(self.stdout)[0] + MESSAGE.size
                if len(self.stdout) >= length:
                    message = json.loads(bytes(self.stdout[MESSAGE.size:length]))
                    del self.stdout[:length]
                    return message
            chunk = self.stream.read(1 << 20) if hasattr(self.stream, "read") else self.sock.recv(1 << 20)
            if not chunk:
                raise RunnerGone(self.stderr[-500:].decode(errors="replace").strip())
            self.frames += chunk
            self._split_frames()

    def _split_frames(self) -> None:
        while len(self.frames) >= FRAME.size:
            kind, length = FRAME.unpack_from(self.frames)
            if len(self.frames) < FRAME.size + length:
                return
            payload = self.frames[FRAME.size:FRAME.size + length]
            del self.frames[:FRAME.size + length]
            if kind == 1:
                self.stdout += payload
            else:
                self.stderr = (self.stderr + payload)[-4000:]

    def close(self) -> None:
        try:
            self.stream.close()
        except OSError:
            pass


class Slot:
    """One warm container, its runner (``None`` until started, or after it ended), its memory limit now
    and the runner's last memory baseline (bytes the container holds between runs; ``None``: unknown)."""

    def __init__(self, container, memory_mb: int):
        self.container, self.memory_mb = container, memory_mb
        self.runner: RunnerChannel | None = None
        self.baseline: int | None = None
        self.precompiled = 0  # how many of ``sandbox.precompile``'s sources its runner compiled


class DockerBackend:
    """Runs programs in warm containers of ``image`` (one per worker) on the engine at ``base_url``.

    Each run gets its program's ``memory_mb`` (its processes and the files it writes; at most
    ``memory_mb`` here when given) on top of what the container holds without it; ``memory_limit``
    says how memory is limited (or why only loosely). ``cpus``, ``pids`` and ``disk_mb`` (each tmpfs)
    are per container.
    Python runs are forked from a warm interpreter in each container that imported ``preload`` once
    (as the local backend's zygotes do); ``preload=None`` starts a fresh interpreter for every run.
    """

    name = "docker"

    def __init__(self, *, image: str = "python:3.11-slim", workers: int | None = None, base_url: str | None = None,
                 memory_mb: int | None = None, cpus: float = 1.0, pids: int = 128, disk_mb: int = 256,
                 preload: Sequence[str] | None = DEFAULT_PRELOAD):
        try:
            import docker
        except ImportError:
            raise SandboxUnavailableError("the docker backend needs the docker SDK: pip install 'rewardhub[code]'") from None
        where = base_url or os.environ.get("DOCKER_HOST", "the default socket")
        try:
            self.client = docker.DockerClient(base_url=base_url, timeout=60) if base_url else docker.from_env(timeout=60)
            self.client.ping()
        except Exception as exc:
            raise SandboxUnavailableError(f"no docker engine answers at {where}: {exc}") from None
        try:
            self.client.images.get(image)
        except docker.errors.ImageNotFound:
            try:
                self.client.images.pull(image)
            except Exception as exc:
                raise SandboxUnavailableError(
                    f"docker image {image!r} is not on the engine at {where} and could not be pulled "
                    f"({type(exc).__name__}: {str(exc)[:300]}); build or load it there, or choose another image"
                ) from None
        except Exception as exc:
            raise SandboxUnavailableError(f"the docker engine at {where} failed: {exc}") from None
        self.image = image
        self.workers = workers or os.cpu_count() or 1
        self.memory_cap_mb = memory_mb
        start_mb = (memory_mb or 1024) + RUNNER_MB
        self.container_options = {
            "network_mode": "none", "read_only": True, "user": CONTAINER_USER, "cap_drop": ["ALL"],
            "cap_add": RUNNER_CAPABILITIES, "security_opt": ["no-new-privileges"],
            "mem_limit": f"{start_mb}m", "memswap_limit": f"{start_mb}m",  # no swap: memory is memory
            "nano_cpus": int(cpus * 1e9), "pids_limit": pids, "shm_size": f"{disk_mb}m",
            # no working_dir: docker would create it root-owned over the tmpfs; "exec" so builds can run
            "tmpfs": {"/work": f"size={disk_mb}m,mode=1777,exec", "/tmp": f"size={disk_mb}m,mode=1777"},
            "ulimits": [docker.types.Ulimit(name="core", soft=1, hard=1)],
            "labels": {LABEL: "1"}, "environment": {}, "detach": True,
        }
        self._start_mb = start_mb
        self.memory_limit = "not started yet"  # how runs' memory is limited here, once a runner reported
        warm = [] if preload is None else [f"--preload={','.join(preload)}"]
        self._runner_command = ["python3", "-c", runner_script(), *warm]
        self._idle: queue.SimpleQueue = queue.SimpleQueue()  # a Slot, or None: room for a new container
        for _ in range(self.workers):
            self._idle.put(None)
        self._slots: list[Slot] = []
        self._lock = threading.Lock()
        self.build_cache = BuildCache()  # not `builds`: that says whether the backend takes builds
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="rewardhub-docker")

    def memory_limit_mb(self, program: Program, baseline: int | None) -> int:
        """The container's memory limit while ``program`` runs: the runner's ``baseline`` (rounded up to
        ``BASELINE_STEP_MB``) + the program's memory (capped) + what the runner holds for the run. Where
        the baseline is unknown: the program's memory and files + ``RUNNER_MB``, as a whole."""
        own = program.process_memory_mb
        own = min(own, self.memory_cap_mb) if self.memory_cap_mb else own
        if baseline is None:
            return own + program.disk_mb + RUNNER_MB
        step = BASELINE_STEP_MB << 20
        return own + math.ceil(baseline / step) * BASELINE_STEP_MB + runner_share_mb(program)

    def _slot(self) -> Slot:
        slot = self._idle.get()
        if slot is not None:
            return slot
        try:
            container = self.client.containers.run(self.image, ["python3", "-c", REAPER], **self.container_options)
        except Exception:
            self._idle.put(None)
            raise
        slot = Slot(container, self._start_mb)
        with self._lock:
            self._slots.append(slot)
        return slot

    def run(self, program: Program) -> SandboxResult:
        """Run one program in a container; a source to compile is built once (``BuildCache``)."""
        return self.build_cache.run(program, self._run_in_container)

    def _run_in_container(self, program: Program) -> SandboxResult:
        try:
            slot = self._slot()
        except Exception as exc:
            return SandboxResult.failed(f"could not start a container of {self.image}: {exc}")
        try:
            self._prepare(slot, program)
        except Exception as exc:  # the engine or the container failed: replace the container
            self._discard(slot)
            return SandboxResult.failed(f"the container could not take the run: {type(exc).__name__}: {exc}")
        deadline = program.timeout + program.compile_budget + GRACE
        try:
            slot.runner.send(runner_request(program), deadline)
            facts = slot.runner.receive(deadline)
        except RunnerGone as gone:  # it ended mid-run: the next run starts a new one, which cleans first
            slot.runner.close()
            slot.runner = None
            self._idle.put(slot)
            return SandboxResult.failed(f"the container's runner ended during the run{': ' + str(gone) if str(gone) else ''}")
        except Exception as exc:  # no answer in time, or the engine failed: the container is not to be trusted
            self._discard(slot)
            return SandboxResult.failed(f"the container's runner did not answer: {type(exc).__name__}: {exc}")
        if facts.pop("leftover", False):  # processes or files it could not remove: not for the next run
            self._discard(slot)
        else:
            slot.baseline = facts.pop("baseline", None)
            if facts.pop("retire", False):  # its warm interpreter is gone: the next run starts a new runner
                slot.runner.close()
                slot.runner = None
            self._idle.put(slot)
        return result_of(program, facts)

    def _prepare(self, slot: Slot, program: Program) -> None:
        """A runner that answers (started if there is none) and ``program``'s memory limit, without swap."""
        if slot.runner is not None and slot.precompiled != len(PRECOMPILED):
            slot.runner.close()  # code registered since it started: a new runner compiles it too
            slot.runner = None
        if slot.runner is None:
            runner = RunnerChannel(self.client.api, slot.container.id, self._runner_command)
            sources = list(PRECOMPILED)
            runner.send({"precompile": sources}, STARTUP_TIMEOUT)  # public code many runs share
            hello = runner.receive(STARTUP_TIMEOUT)
            if not hello.get("clean"):
                runner.close()
                raise RuntimeError("the runner could not remove what an earlier run left")
            slot.runner, slot.precompiled, slot.baseline = runner, len(sources), hello.get("baseline")
            self._describe_memory(slot.baseline)
        memory_mb = self.memory_limit_mb(program, slot.baseline)
        if memory_mb != slot.memory_mb:
            slot.container.update(mem_limit=f"{memory_mb}m", memswap_limit=f"{memory_mb}m")
            slot.memory_mb = memory_mb

    def _describe_memory(self, baseline: int | None) -> None:
        """Say how runs' memory is limited, from a new runner's first report; warn once where only loosely."""
        if baseline is not None:
            self.memory_limit = (f"the run's own memory_mb (its processes and the files it writes), on top of "
                                 f"the {baseline / 2**20:.0f} MB the container holds without it (the runner's baseline)")
        elif not self.memory_limit.startswith("loose"):
            self.memory_limit = (f"loose: memory_mb + disk_mb + {RUNNER_MB} MB for the run and the runner together (the "
                                 "containers of this engine do not show their memory counters)")
            warnings.warn(f"docker backend on {self.image}: {self.memory_limit}; a run may use up to that much",
                          MemoryLimitWarning, stacklevel=2)

    def _discard(self, slot: Slot) -> None:
        with self._lock:
            if slot in self._slots:
                self._slots.remove(slot)
        if slot.runner is not None:
            slot.runner.close()
        try:
            slot.container.remove(force=True)
        except Exception:
            pass
        self._idle.put(None)

    def run_many(self, programs: Sequence[Program]) -> list[SandboxResult]:
        return list(self._executor.map(self.run, programs))

    def submit(self, program: Program) -> Future:
        return self._executor.submit(self.run, program)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        with self._lock:
            slots, self._slots = self._slots, []
        for slot in slots:
            if slot.runner is not None:
                slot.runner.close()
            try:
                slot.container.remove(force=True)
            except Exception:
                pass


def runner_script() -> str:
    """The runner as one ``python3 -c`` script: ``_python_main`` made a module first, then the runner."""
    prelude = (
        "import sys, types\n"
        "_python_main = types.ModuleType('_python_main')\n"
        f"exec(compile({PYTHON_MAIN.read_text()!r}, '_python_main.py', 'exec'), _python_main.__dict__)\n"
        "sys.modules['_python_main'] = _python_main\n"
        "del sys, types, _python_main\n"
    )
    return prelude + RUNNER.read_text()


def runner_request(program: Program) -> dict:
    """What ``_docker_runner.py`` takes: the program's request, with its build (if any) in base64."""
    request = program.request()
    if program.executable is not None:
        request["build"] = base64.b64encode(program.executable.read()).decode()
    return request


def runner_share_mb(program: Program) -> int:
    """What the runner holds in memory for ``program`` while it runs, in MB (rounded up, + 1): its
    input about three times (the request's text, the bytes, the memory file or work folder copy), its
    build twice and up to ``output_limit`` of each output stream."""
    given = sum(len(text.encode(errors="surrogatepass")) for text in (program.stdin, program.code, *program.files.values()))
    build = len(program.executable) if program.executable is not None else 0
    return 1 + math.ceil((3 * given + 2 * build + 2 * program.output_limit) / 2**20)


def result_of(program: Program, facts: dict) -> SandboxResult:
    """The runner's facts about a run as a result (output and build arrive base64-encoded)."""
    if facts.get("error"):
        return SandboxResult.failed(facts["error"])
    result = run_result(program, facts, base64.b64decode(facts["stdout"]), base64.b64decode(facts["stderr"]))
    return replace(result, executable=Build.from_bytes(base64.b64decode(facts["build"]))) if facts.get("build") else result
