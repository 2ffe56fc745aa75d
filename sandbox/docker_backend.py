"""The docker backend: warm, locked-down containers reused across runs, through the ``docker`` SDK.

Each worker is one long-lived container (no network, read-only root, ``/work`` and ``/tmp`` tmpfs,
memory, CPU and pids limits, no capabilities, ``no-new-privileges``, an unprivileged user, core
dumps off) whose pid 1 is a small reaper, so processes a run leaves behind never pile up as zombies.
A run is one ``docker exec`` of ``_docker_runner.py`` with the request on its stdin (no size limit
of a command line); the runner enforces the run's own limits and deadline, then kills whatever the
run left, waits until pid 1 has reaped it and wipes ``/work``, ``/tmp`` and ``/dev/shm``, so the
next run in the container starts clean. Works against a remote engine through ``base_url`` or
``DOCKER_HOST``.

A run that fails (wrong answer, crash, timeout) keeps its container; only a container the backend
cannot trust any more (an exec that failed, a runner that was killed, leftovers it could not
remove) is replaced, and that run comes back as a sandbox error or, when the program killed the
runner, as a failed run.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import socket
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from .build import Build
from .errors import SandboxUnavailableError
from .program import Program, SandboxResult

RUNNER = Path(__file__).with_name("_docker_runner.py")
LABEL = "rewardhub.sandbox"
SANDBOX_USER = "65534:65534"
GRACE = 15.0  # seconds past a run's own deadline (and cleanup) before the host gives up on the container
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


class DockerBackend:
    """Runs programs in warm containers of ``image`` (one per worker) on the engine at ``base_url``."""

    name = "docker"

    def __init__(self, *, image: str = "python:3.11-slim", workers: int | None = None, base_url: str | None = None,
                 memory_mb: int = 1024, cpus: float = 1.0, pids: int = 128, disk_mb: int = 256):
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
        self.container_options = {
            "network_mode": "none", "read_only": True, "user": SANDBOX_USER, "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"], "mem_limit": f"{memory_mb}m", "memswap_limit": f"{memory_mb}m",
            "nano_cpus": int(cpus * 1e9), "pids_limit": pids, "shm_size": f"{disk_mb}m",
            # no working_dir: docker would create it root-owned over the tmpfs; "exec" so builds can run
            "tmpfs": {"/work": f"size={disk_mb}m,mode=1777,exec", "/tmp": f"size={disk_mb}m,mode=1777"},
            "ulimits": [docker.types.Ulimit(name="core", soft=1, hard=1)],
            "labels": {LABEL: "1"}, "environment": {}, "detach": True,
        }
        self._runner = RUNNER.read_text()
        self._idle: queue.SimpleQueue = queue.SimpleQueue()
        self._containers: list = []
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="rewardhub-docker")

    def _container(self):
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if len(self._containers) < self.workers:
                container = self.client.containers.run(self.image, ["python3", "-c", REAPER], **self.container_options)
                self._containers.append(container)
                return container
        return self._idle.get()

    def run(self, program: Program) -> SandboxResult:
        try:
            container = self._container()
        except Exception as exc:
            return SandboxResult.failed(f"could not start a container of {self.image}: {exc}")
        deadline = program.timeout + program.compile_budget + GRACE
        try:
            code, stdout, stderr = self._exec(container, json.dumps(runner_request(program)).encode(), deadline)
        except Exception as exc:  # the engine or the container failed: the program's behaviour is unknown
            self._discard(container)
            return SandboxResult.failed(f"docker exec failed: {type(exc).__name__}: {exc}")
        try:
            fields = json.loads(stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            self._discard(container)
            if code is not None and code > 128:  # the run killed its own runner (same uid): a failed run
                return SandboxResult(exit_code=None, reason=f"the program killed the sandbox's runner (signal {code - 128})")
            return SandboxResult.failed(f"the runner exited {code}: {stderr.decode(errors='replace')[-500:]}")
        if fields.pop("leftover", False):  # processes or files it could not remove: not for the next run
            self._discard(container)
        else:
            self._idle.put(container)
        build = fields.pop("build", None)
        return SandboxResult(**fields, executable=Build.from_bytes(base64.b64decode(build)) if build else None)

    def _exec(self, container, payload: bytes, timeout: float) -> tuple[int | None, bytes, bytes]:
        """Run the runner with ``payload`` on its stdin; its exit code, stdout and stderr."""
        from docker.utils.socket import frames_iter

        api = self.client.api
        command = ["python3", "-c", self._runner, "--reap"]
        exec_id = api.exec_create(container.id, command, stdin=True, user=SANDBOX_USER)["Id"]
        stream = api.exec_start(exec_id, socket=True)
        raw = getattr(stream, "_sock", stream)
        try:
            raw.settimeout(timeout)
            raw.sendall(payload)
            raw.shutdown(socket.SHUT_WR)
            output: dict[int, list[bytes]] = {1: [], 2: []}
            for kind, data in frames_iter(stream, tty=False):
                output.setdefault(kind, []).append(data)
        finally:
            stream.close()
        return api.exec_inspect(exec_id)["ExitCode"], b"".join(output[1]), b"".join(output[2])

    def _discard(self, container) -> None:
        with self._lock:
            if container in self._containers:
                self._containers.remove(container)
        try:
            container.remove(force=True)
        except Exception:
            pass

    def run_many(self, programs: Sequence[Program]) -> list[SandboxResult]:
        return list(self._executor.map(self.run, programs))

    def submit(self, program: Program) -> Future:
        return self._executor.submit(self.run, program)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        with self._lock:
            containers, self._containers = self._containers, []
        for container in containers:
            try:
                container.remove(force=True)
            except Exception:
                pass


def runner_request(program: Program) -> dict:
    """What ``_docker_runner.py`` takes: the program's request, with its build (if any) in base64."""
    request = program.request()
    if program.executable is not None:
        request["build"] = base64.b64encode(program.executable.read()).decode()
    return request
