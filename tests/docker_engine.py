"""A real Docker engine for the docker backend's tests, started once per test session.

Debian's ``dockerd`` (package docker.io, which scripts/test.sh installs) runs with everything of its
own in a temporary folder -- data root, exec root, pid file and a unix socket that is not the
system's -- with no bridge network and no iptables rules, on the vfs storage driver. Its images are
minimal Debians built offline from Debian's packages with ``debootstrap`` and imported: ``PYTHON``
(Python only) and ``TOOLCHAINS`` (also the Java, Go, Rust and JavaScript toolchains). Each root file
system is kept as a tarball in ``CACHE`` (outside the repository) so later sessions skip the build
(about 1 minute for ``PYTHON``, several for ``TOOLCHAINS``). Teardown stops only the engine this
module started (by its pid) and removes its folder.

``docker_engine`` is the session fixture (import it into a test module) with ``PYTHON`` imported;
``toolchain_image`` adds ``TOOLCHAINS`` to it. Both skip, saying why, where the engine or the image
cannot be had here (not root, no dockerd or debootstrap, no Debian mirror, no cgroups).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("REWARDHUB_TEST_CACHE", "/var/cache/rewardhub-tests"))
MIRROR = os.environ.get("REWARDHUB_DEBIAN_MIRROR", "http://deb.debian.org/debian")
TRIMMED = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info",
           "usr/share/locale")
START_TIMEOUT = 60.0
BUILD_TIMEOUT = 1800.0


@dataclass(frozen=True)
class TestImage:
    """An image the tests import: its name on the engine, the Debian packages debootstrap adds to minbase
    (with their dependencies), and where its root file system is cached."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    name: str
    packages: tuple[str, ...]
    tarball: Path


PYTHON = TestImage("rewardhub-test-python:bookworm", ("python3",), CACHE / "python-bookworm-rootfs.tar")
TOOLCHAINS = TestImage(  # libc6-dev: rustc depends on the virtual libc-dev, which debootstrap does not resolve
    "rewardhub-test-toolchains:bookworm",
    ("python3", "default-jdk-headless", "golang-go", "rustc", "libc6-dev", "nodejs"),
    CACHE / "toolchains-bookworm-rootfs.tar",
)
IMAGE = PYTHON.name


@dataclass
class Engine:
    """A dockerd this session started: where it listens, its pid, its folder, and the test image."""

    url: str
    pid: int
    folder: str
    image: str = IMAGE
    build_seconds: float = 0.0


def engine_problem() -> str | None:
    """Why no engine can be started here, or ``None``."""
    if os.geteuid() != 0:
        return "starting a docker engine needs root"
    if shutil.which("dockerd") is None:
        return "dockerd is not installed (apt-get install docker.io; scripts/test.sh does it)"
    if not PYTHON.tarball.exists() and shutil.which("debootstrap") is None:
        return "debootstrap is not installed to build the test image (apt-get install debootstrap)"
    return None


def start_engine() -> Engine:
    """Start dockerd on a private socket; raises RuntimeError with its log when it does not come up."""
    import docker

    folder = tempfile.mkdtemp(prefix="rewardhub-dockerd-")
    socket = f"{folder}/docker.sock"
    log = open(f"{folder}/dockerd.log", "wb")
    process = subprocess.Popen(
        ["dockerd", "--bridge=none", "--iptables=false", "--ip6tables=false", "--storage-driver=vfs",
         f"--data-root={folder}/data", f"--exec-root={folder}/exec", f"--pidfile={folder}/dockerd.pid",
         f"--host=unix://{socket}"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
    )
    log.close()
    engine = Engine(url=f"unix://{socket}", pid=process.pid, folder=folder)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        try:
            docker.DockerClient(base_url=engine.url, timeout=5).ping()
            return engine
        except Exception:
            time.sleep(0.2)
    stop_engine(engine)
    tail = Path(f"{folder}/dockerd.log").read_text(errors="replace")[-1500:] if os.path.exists(folder) else ""
    raise RuntimeError(f"dockerd did not start within {START_TIMEOUT:g} s: {tail}")


def stop_engine(engine: Engine) -> None:
    """Stop the engine by its pid (it stops its containers), then remove its folder and any mount left in it."""
    try:
        os.kill(engine.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _running(engine.pid):
            time.sleep(0.1)
        if _running(engine.pid):
            os.killpg(engine.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    with open("/proc/self/mounts") as f:
        mounts = [line.split()[1] for line in f if line.split()[1].startswith(engine.folder + "/")]
    for mountpoint in sorted(mounts, reverse=True):
        subprocess.run(["umount", "-l", mountpoint], capture_output=True)
    shutil.rmtree(engine.folder, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return os.path.exists(f"/proc/{pid}")
    return done == 0


def build_rootfs_tarball(image: TestImage) -> None:
    """debootstrap a minimal bookworm with ``image``'s packages, trim what programs never read, tar it into the cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rewardhub-rootfs-") as work:
        rootfs = f"{work}/rootfs"
        done = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(image.packages)}",
                               "bookworm", rootfs, MIRROR], capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"debootstrap failed ({MIRROR}): {(done.stdout + done.stderr)[-1500:]}")
        for path in TRIMMED:
            shutil.rmtree(f"{rootfs}/{path}", ignore_errors=True)
            os.makedirs(f"{rootfs}/{path}", exist_ok=True)
        partial = f"{image.tarball}.{os.getpid()}.partial"
        subprocess.run(["tar", "--numeric-owner", "-C", rootfs, "-cf", partial, "."], check=True)
        os.replace(partial, image.tarball)  # atomic: a concurrent session sees a whole tarball or none


def import_image(engine: Engine, image: TestImage = PYTHON) -> float:
    """Put ``image`` on the engine, building its rootfs first unless the cache has it; returns the seconds taken."""
    import docker

    start = time.monotonic()
    if not image.tarball.exists():
        build_rootfs_tarball(image)
    repository, tag = image.name.split(":")
    client = docker.DockerClient(base_url=engine.url, timeout=600)
    client.api.import_image_from_file(str(image.tarball), repository=repository, tag=tag)
    client.images.get(image.name)
    return time.monotonic() - start


@pytest.fixture(scope="session")
def docker_engine():
    """A running engine with the test image, for the whole session; skipped with the reason where impossible."""
    problem = engine_problem()
    if problem:
        pytest.skip(f"no docker engine for these tests: {problem}")
    try:
        engine = start_engine()
    except RuntimeError as exc:
        pytest.skip(f"no docker engine for these tests: {exc}")
    try:
        engine.build_seconds = import_image(engine)
    except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
        stop_engine(engine)
        pytest.skip(f"the test image could not be built: {exc}")
    try:
        yield engine
    finally:
        from rewardhub import sandbox

        sandbox.close_backends()  # their containers, before the engine goes
        stop_engine(engine)


@pytest.fixture(scope="session")
def toolchain_image(docker_engine):
    """The name of ``TOOLCHAINS`` on the session's engine, imported on first use (built unless cached);
    skipped with the reason where it cannot be built."""
    if not TOOLCHAINS.tarball.exists() and shutil.which("debootstrap") is None:
        pytest.skip("no toolchain image: debootstrap is not installed to build it (apt-get install debootstrap)")
    try:
        import_image(docker_engine, TOOLCHAINS)
    except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"the toolchain image could not be built: {exc}")
    return TOOLCHAINS.name
