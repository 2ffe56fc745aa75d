"""The docker backend: warm, locked-down containers reused across runs, through the ``docker`` SDK.

Each worker is one long-lived container (no network, read-only root, tmpfs work dir, memory, CPU
and pids limits, no capabilities, ``no-new-privileges``, an unprivileged user). A run is one
``docker exec`` of ``_docker_runner.py``, which enforces the run's own limits and deadline and kills
whatever the run left behind. Works against a remote engine through ``DOCKER_HOST``.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .build import Build
from .errors import SandboxUnavailableError
from .program import Program, SandboxResult

RUNNER = Path(__file__).with_name("_docker_runner.py")
LABEL = "rewardhub.sandbox"
MAX_ARGUMENT = 120_000  # bytes: Linux caps one exec argument at 128 KiB
SANDBOX_USER = "65534:65534"


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
            self.client = docker.DockerClient(base_url=base_url, timeout=30) if base_url else docker.from_env(timeout=30)
            self.client.ping()
        except Exception as exc:
            raise SandboxUnavailableError(f"no docker engine answers at {where}: {exc}") from None
        try:
            self.client.images.get(image)
        except docker.errors.ImageNotFound:
            try:
                self.client.images.pull(image)
            except Exception as exc:
                raise SandboxUnavailableError(f"docker image {image!r} is not available: {exc}") from None
        self.image = image
        self.workers = workers or os.cpu_count() or 1
        self.container_options = {
            "network_mode": "none", "read_only": True, "user": SANDBOX_USER, "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"], "mem_limit": f"{memory_mb}m", "memswap_limit": f"{memory_mb}m",
            "nano_cpus": int(cpus * 1e9), "pids_limit": pids, "working_dir": "/work",
            "tmpfs": {"/work": f"size={disk_mb}m,mode=1777", "/tmp": f"size={disk_mb}m,mode=1777"},
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
                container = self.client.containers.run(self.image, ["sleep", "infinity"], **self.container_options)
                self._containers.append(container)
                return container
        return self._idle.get()

    def run(self, program: Program) -> SandboxResult:
        payload = json.dumps(runner_request(program))
        if len(payload.encode()) > MAX_ARGUMENT:
            return SandboxResult.failed(f"program and input exceed {MAX_ARGUMENT} bytes, the docker backend's limit")
        try:
            container = self._container()
        except Exception as exc:
            return SandboxResult.failed(f"could not start a container: {exc}")
        try:
            exit_code, output = container.exec_run(["python3", "-c", self._runner, payload, "--reap-user"],
                                                   user=SANDBOX_USER, workdir="/work", demux=True)
            stdout = (output[0] or b"").decode(errors="replace")
            if exit_code != 0:
                raise RuntimeError(f"runner exited {exit_code}: {(output[1] or b'').decode(errors='replace')[-500:]}")
            fields = json.loads(stdout.strip().splitlines()[-1])
            build = fields.pop("build", None)
            result = SandboxResult(**fields, executable=Build.from_bytes(base64.b64decode(build)) if build else None)
        except Exception as exc:
            self._discard(container)
            return SandboxResult.failed(f"docker run failed: {exc}")
        self._idle.put(container)
        return result

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
