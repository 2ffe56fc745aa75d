"""The 0.2 layout: every moved module is importable under its old name, as the same module object."""

import importlib
import subprocess
import sys

import pytest

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
