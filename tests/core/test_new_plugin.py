"""``rewardhub new-plugin``: the package it writes installs with pip and passes its own tests at once."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from rewardhub.scaffold import ScaffoldError, plugin_files, write_plugin


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rewardhub.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_the_scaffolded_plugin_passes_its_own_tests(tmp_path):
    made = run_cli("new-plugin", "citation-check", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    folder = tmp_path / "rewardhub-citation-check"
    assert f"wrote {folder}" in made.stdout
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                    str(site), str(folder)], check=True, capture_output=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k != "REWARDHUB_LOAD_PLUGINS"}
    env["PYTHONPATH"] = str(site)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "8 passed" in result.stdout  # 3 tests + 5 cases from the case file
    listed = subprocess.run([sys.executable, "-m", "rewardhub.cli", "list", "--json"], env=env, capture_output=True,
                            text=True, timeout=120, cwd=tmp_path)
    assert '"citation_check"' in listed.stdout and "rewardhub-citation-check" in listed.stdout


def test_the_package_declares_what_pip_and_ci_need():
    files = plugin_files("tone")
    project = tomllib.loads(files["pyproject.toml"])
    assert project["project"]["entry-points"]["rewardhub"] == {"tone": "rewardhub_tone"}
    assert project["project"]["name"] == "rewardhub-tone" and "rewardhub" in project["project"]["dependencies"][0]
    workflow = yaml.safe_load(files[".github/workflows/tests.yml"])
    steps = workflow["jobs"]["test"]["steps"]
    assert steps[1]["with"]["python-version"] == "${{ matrix.python-version }}"
    assert [s.get("run") for s in steps[2:]] == ['python -m pip install -e ".[test]"', "python -m pytest -q"]
    assert "register(tone)" in files["rewardhub_tone/__init__.py"]
    assert set(files) >= {"tests/tone.cases.yaml", "tests/test_tone.py", "README.md", "rewardhub_tone/reward.py"}


def test_bad_names_taken_names_and_existing_folders_are_refused(tmp_path):
    with pytest.raises(ScaffoldError, match="lowercase letters"):
        write_plugin("My Reward", tmp_path / "a")
    with pytest.raises(ScaffoldError, match="already installed"):
        write_plugin("exact_match", tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "keep.txt").write_text("mine")
    with pytest.raises(ScaffoldError, match="not empty"):
        write_plugin("tone", tmp_path / "c")
    refused = run_cli("new-plugin", "Bad Name", cwd=tmp_path)
    assert refused.returncode == 2 and "rewardhub new-plugin: plugin name 'Bad Name'" in refused.stderr
    assert (tmp_path / "c" / "keep.txt").read_text() == "mine"
