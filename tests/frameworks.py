"""The released verl and OpenRLHF code the integration tests run, pinned here and nowhere else.

Both frameworks are installed with ``pip install --no-deps --target`` (their heavy dependencies,
ray, vllm, deepspeed, flash-attn, stay out) into a cache folder reused across sessions. Modules
that import only what is installed here are imported as they are. Where a module imports ray or
another heavy dependency at its top, :func:`released_definitions` compiles just the named
functions and classes from the released file (file name and line numbers kept, so tracebacks point
into their source) in a namespace given the light names they use: their code runs, unchanged.
"""

from __future__ import annotations
import __future__

import ast
import functools
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

# The releases the docs name (docs/trainers.md, examples/verl_reward.py, examples/openrlhf_reward.py).
PINNED = {"verl": "0.9.1", "openrlhf": "0.11.2"}
# Installed beside them: openrlhf/utils/__init__.py imports math_utils, which imports pylatexenc; the
# configs verl's code reads are omegaconf DictConfigs (2.4 carries its own ANTLR runtime, so it loads
# next to the antlr4 4.13 that math-verify uses).
HELPERS = ("pylatexenc==2.10", "omegaconf==2.4.0")
# verl composes its config with Hydra, whose 1.3 grammar needs the ANTLR 4.9 runtime: a clash with
# math-verify's in one process, so Hydra runs in a child process from a folder of its own.
HYDRA = {"hydra-core": "1.3.8", "omegaconf": "2.3.1", "antlr4-python3-runtime": "4.9.3"}
# pip's messages when no package index can be reached: the one case where these tests skip.
UNREACHABLE = ("NewConnectionError", "Max retries exceeded", "Temporary failure in name resolution",
               "Network is unreachable", "Connection refused", "No matching distribution found")


def release(package: str, which: str) -> Path:
    """The folder holding ``package`` at the pinned version, or at the newest one (``which == "newest"``).

    The tests run against both: when a newer release changes what rewardhub relies on, the
    ``newest`` runs fail and say where; while the pinned version is the newest, they skip.
    """
    version = PINNED[package] if which == "pinned" else newest_release(package)
    if which == "newest" and version == PINNED[package]:
        pytest.skip(f"{package} {version} is still the newest release")
    return install({package: version})


def cache_root() -> Path:
    return Path(os.environ.get("REWARDHUB_TEST_CACHE", Path.home() / ".cache" / "rewardhub-tests"))


def install(versions: dict[str, str], helpers: tuple[str, ...] = HELPERS) -> Path:
    """A folder holding the given releases and ``helpers`` (installed once, then reused); skips if PyPI
    is unreachable."""
    specs = [f"{pkg}=={version}" for pkg, version in versions.items()] + list(helpers)
    target = cache_root() / "frameworks" / "_".join(sorted(spec.replace("==", "-") for spec in specs))
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--target", str(staging),
         *specs], capture_output=True, text=True, timeout=600,
    )
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        output = result.stdout + result.stderr
        if any(marker in output for marker in UNREACHABLE):
            pytest.skip(f"cannot install {', '.join(specs)}: no package index reachable ({output.strip()[-300:]})")
        raise RuntimeError(f"pip could not install {', '.join(specs)}:\n{output}")
    shutil.rmtree(staging / "tests", ignore_errors=True)  # OpenRLHF's wheel ships a top-level `tests` package
    (staging / ".complete").write_text("\n".join(specs))
    try:
        staging.rename(target)
    except OSError:  # another session finished first
        shutil.rmtree(staging, ignore_errors=True)
    return target


@functools.cache
def newest_release(package: str) -> str:
    """The newest version of ``package`` on the package index (skips if it cannot be reached)."""
    with tempfile.TemporaryDirectory() as folder:
        result = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", folder, package],
            capture_output=True, text=True, timeout=600,
        )
        if result.returncode != 0:
            if any(marker in result.stdout + result.stderr for marker in UNREACHABLE):
                pytest.skip(f"cannot ask the package index for {package}: unreachable")
            raise RuntimeError(f"pip download {package} failed:\n{result.stderr}")
        (wheel,) = Path(folder).iterdir()
        return wheel.name.split("-")[1]


def package_without_init(name: str, folder: Path) -> ModuleType:
    """Register package ``name`` (its submodules found in ``folder``) without running its ``__init__.py``.

    For verl, whose ``verl/__init__.py`` imports ``DataProto`` and so ray; submodules then import as usual.
    """
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(folder)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    return module


COMPOSE = """
import json, sys
from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from omegaconf import OmegaConf
config_dir, name, overrides = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
try:
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        config = compose(name, overrides=overrides)
except HydraException as exc:
    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(3)
print(OmegaConf.to_yaml(config))
"""


class ComposeError(Exception):
    """Hydra refused the overrides (its message is the exception's)."""


def hydra_compose(config_dir: Path, name: str, overrides: list[str]):
    """The config Hydra composes from ``config_dir``/``name`` with ``overrides``, as an omegaconf DictConfig.

    Hydra runs in a child process with its own ANTLR 4.9 (see ``HYDRA``); the composed config comes
    back as YAML, unresolved, and is loaded here with omegaconf.
    """
    from omegaconf import OmegaConf

    hydra = install(HYDRA, helpers=())
    env = {**os.environ, "PYTHONPATH": str(hydra)}
    result = subprocess.run([sys.executable, "-c", COMPOSE, str(config_dir), name, json.dumps(overrides)],
                            capture_output=True, text=True, env=env, timeout=120)
    if result.returncode == 3:
        raise ComposeError(result.stderr.strip())
    if result.returncode != 0:
        raise RuntimeError(f"composing {name} failed:\n{result.stderr}")
    return OmegaConf.create(result.stdout)


def released_module(name: str, path: Path, *, package: bool = False) -> ModuleType:
    """Import the released file ``path`` as module ``name`` (its own imports must be installed)."""
    locations = [str(path.parent)] if package else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=locations)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def released_definitions(path: Path, names: list[str], namespace: dict[str, Any]) -> SimpleNamespace:
    """Compile the top-level functions, classes and assignments ``names`` from ``path`` in ``namespace``.

    Annotations are not evaluated (``from __future__ import annotations``), so names used only as
    type hints (``DataProto``, ``DictConfig``) need not exist. Raises AssertionError naming what a
    release no longer defines, which is how a newer release that moved things is reported.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    chosen = [node for node in tree.body if _defines(node) & set(names)]
    found = set().union(*(_defines(node) for node in chosen)) if chosen else set()
    missing = [n for n in names if n not in found]
    assert not missing, f"{path} no longer defines {missing}: the integration it pins has changed"
    flags = __future__.annotations.compiler_flag
    code = compile(ast.Module(body=chosen, type_ignores=[]), str(path), "exec", flags=flags, dont_inherit=True)
    namespace.setdefault("__name__", f"released:{path.name}")
    namespace.setdefault("__file__", str(path))
    exec(code, namespace)  # their released source, compiled from the file itself
    return SimpleNamespace(**{n: namespace[n] for n in names})


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {t.id for t in targets if isinstance(t, ast.Name)}
    return set()


def main_block(path: Path) -> ast.Module:
    """The body of the ``if __name__ == "__main__":`` block of a released script, compiled from its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return compile(ast.Module(body=node.body, type_ignores=[]), str(path), "exec", dont_inherit=True)
    raise AssertionError(f"{path} has no `if __name__ == '__main__':` block any more")
