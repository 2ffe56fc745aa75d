"""scripts/setup.sh asks pip for what its TORCH_INDEX setting says (run with a recording interpreter)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from paths import ROOT

SETUP = ROOT / "scripts" / "setup.sh"


def _setup(tmp_path: Path, torch_index: str | None) -> subprocess.CompletedProcess:
    """Run a copy of setup.sh whose .venv interpreter only writes down its arguments."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(SETUP, tmp_path / "scripts" / "setup.sh")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "calls"}\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "TORCH_INDEX"}
    if torch_index is not None:
        env["TORCH_INDEX"] = torch_index
    return subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh")], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.parametrize(("setting", "torch_line"), [
    (None, "-m pip install -q torch==2.13.0"),
    ("", "-m pip install -q torch==2.13.0"),
    ("cpu", "-m pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"),
    ("cu126", "-m pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126"),
    ("https://mirror.example/torch", "-m pip install -q torch==2.13.0 --index-url https://mirror.example/torch"),
])
def test_torch_index_picks_where_torch_comes_from(tmp_path, setting, torch_line):
    proc = _setup(tmp_path, setting)
    assert proc.returncode == 0, proc.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == ["-m pip install -q --upgrade pip setuptools wheel", torch_line, "-m pip install -q -e .[dev]"]


def test_a_torch_index_that_is_no_index_is_refused_before_anything_is_installed(tmp_path):
    proc = _setup(tmp_path, "gpu")
    assert proc.returncode == 2
    assert "TORCH_INDEX=gpu is neither cpu, a PyTorch index name" in proc.stderr
    assert not (tmp_path / "calls").exists()
