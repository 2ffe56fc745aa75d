"""The 0.2 layout: every moved module is importable under its old name, as the same module object."""

import ast
import importlib
import subprocess
import sys

import pytest
from paths import ROOT

from rewardhub._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_import_path_gives_the_moved_module_with_a_deprecation_warning(old):
    # A fresh interpreter: in this one the old name may already sit in sys.modules.
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        f"new = importlib.import_module({MOVED[old]!r})\n"
        "assert old is new, (old, new)\n"
        "assert any(issubclass(w.category, DeprecationWarning) and 'moved to' in str(w.message) for w in caught)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_new_home_exists():
    for new in MOVED.values():
        importlib.import_module(new)


def test_an_unknown_old_name_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("rewardhub.rewards.no_such_module")


def test_version_comes_from_the_installed_metadata():
    import importlib.metadata

    import rewardhub

    assert rewardhub.__version__ == importlib.metadata.version("rewardhub")


# ----- who may import whom (DESIGN.md): checked on the source, so that a lazy import inside a function counts too
FOLDERS = {"rewardhub": "plugins", "rewardhub.rewards": "rewards", "rewardhub.sandbox": "sandbox",
           "rewardhub.trainers": "trainers"}
FORBIDDEN = {
    "rewardhub.sandbox": ("rewardhub.rewards", "rewardhub.trainers"),  # isolation knows nothing of rewards
    "rewardhub.rewards": ("rewardhub.trainers",),  # a reward does not know which trainer calls it
    "rewardhub": ("rewardhub.trainers",),  # the core loads families by name, never trainers
}


def _imports(package: str) -> list[tuple[str, str]]:
    """(file, absolute module name) for every import in the folder of ``package``."""
    folder = ROOT / FOLDERS[package]
    found = []
    for path in sorted(folder.rglob("*.py")):
        parts = [package, *path.relative_to(folder).with_suffix("").parts]
        module_package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found += [(str(path.relative_to(ROOT)), alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package.split(".") + module_package[len(package.split(".")):])
                if node.level:
                    base = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1])
                    name = f"{base}.{node.module}" if node.module else base
                else:
                    name = node.module or ""
                found += [(str(path.relative_to(ROOT)), f"{name}.{alias.name}") for alias in node.names]
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_rules_of_the_design(package):
    bad = [(path, module) for path, module in _imports(package)
           for target in FORBIDDEN[package] if _within(module, target)]
    assert not bad, bad


@pytest.mark.parametrize("package", ["rewardhub.rewards", "rewardhub.sandbox", "rewardhub.trainers"])
def test_families_use_only_the_public_core(package):
    """Private core modules (``rewardhub._set.config``, ``_manager``, ``_aio``...) may change at will: the
    families outside the core use what ``rewardhub`` exports (``read_config``, ``plugin_manager``,
    ``background_loop``...)."""
    private = [(path, module) for path, module in _imports(package)
               if module.startswith("rewardhub._") or module.startswith("rewardhub.workers._")]
    assert not private, private


def test_the_public_accessors_are_the_core_objects():
    import rewardhub
    from rewardhub import _aio, _manager
    from rewardhub._set import config as _config

    assert rewardhub.plugin_manager() is _manager.pm
    assert rewardhub.read_config is _config.read_config and rewardhub.RewardEntry is _config.RewardEntry
    assert rewardhub.background_loop() is _aio.background_loop()
    assert rewardhub.plugin_manager().is_registered(importlib.import_module("rewardhub.sandbox.backends"))
