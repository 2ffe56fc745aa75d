"""A real Ray cluster on loopback for tests: ``ray start --head --block`` in its own temp dir, stopped by pid.

Every port Ray would otherwise take by default (dashboard agent 52365, metrics, workers, ...) is
picked free at run time, so several test runs on one machine never meet. Token authentication is
off for these clusters (``RAY_AUTH_MODE=disabled``): the tests never read or write ``~/.ray``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_IMPORT_WARNING": "1"}


def free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def ray_binary() -> str:
    path = Path(sys.executable).with_name("ray")
    if not path.exists():
        pytest.skip("the `ray` command is not installed (pip install 'rewardhub[ray]')")
    return str(path)


@contextlib.contextmanager
def ray_head(num_cpus: int = 2, startup_timeout: float = 240.0):
    """Start a head node on 127.0.0.1; yields its ``HOST:PORT`` address; stops it by its pid.

    Its temp dir is a short one of its own under /tmp (Ray's socket paths must stay under 108 bytes),
    removed afterwards.
    """
    temp_dir = Path(tempfile.mkdtemp(prefix="rh-ray-", dir="/tmp"))
    gcs, agent, agent_grpc, runtime_env, metrics, node_manager, object_manager = free_ports(7)
    # below the kernel's ephemeral range (32768+ here), where free_ports' ports come from: no component's
    # port can fall among the workers'; a range holding one of them anyway is moved on
    worker_low = 10000 + (os.getpid() % 100) * 200
    while any(worker_low <= port < worker_low + 200 for port in (gcs, agent, agent_grpc, runtime_env, metrics,
                                                                  node_manager, object_manager)):
        worker_low = 10000 + (worker_low - 10000 + 200) % 20000
    args = [ray_binary(), "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(gcs),
            "--temp-dir", str(temp_dir), "--num-cpus", str(num_cpus), "--include-dashboard", "false",
            "--disable-usage-stats",
            "--dashboard-agent-listen-port", str(agent), "--dashboard-agent-grpc-port", str(agent_grpc),
            "--runtime-env-agent-port", str(runtime_env), "--metrics-export-port", str(metrics),
            "--node-manager-port", str(node_manager), "--object-manager-port", str(object_manager),
            "--min-worker-port", str(worker_low), "--max-worker-port", str(worker_low + 199)]
    log = open(temp_dir / "ray-start.log", "wb")  # noqa: SIM115  (closed below)
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **RAY_ENV},
                               start_new_session=True)
    address = f"127.0.0.1:{gcs}"
    try:
        deadline = time.monotonic() + startup_timeout
        while not _accepts(gcs):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start failed:\n{(temp_dir / 'ray-start.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield address
    finally:
        stop(process)
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def stop(process: subprocess.Popen, timeout: float = 60.0) -> None:
    """SIGTERM to the ``ray start --block`` process, which stops the processes it started; then its
    whole session (the group it leads) by pid, in case one lingers."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(10)


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def local_ray(num_cpus: int = 2):
    """``ray.init(num_cpus=...)`` in this process with a short temp dir of its own; shut down after."""
    import ray

    from rewardhub.ray import connect

    os.environ.update(RAY_ENV)
    if ray.is_initialized():
        ray.shutdown()
    temp_dir = tempfile.mkdtemp(prefix="rh-ray-", dir="/tmp")
    connect(None, num_cpus=num_cpus, _temp_dir=temp_dir)
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)
