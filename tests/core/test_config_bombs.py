"""Hostile configs fail fast with a clear error: a YAML alias bomb ("billion laughs") in a weight, a
timeout, a param or a gate threshold; a shared or self-referencing value built in Python; a file too
large to be a config. Each load runs in a child process with a memory limit and a timeout, so that
a regression fails the test instead of hanging the machine."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from rewardhub import ConfigError, load
from rewardhub.errors import shown

LOAD = "import sys, rewardhub; rewardhub.load(sys.argv[1])"
MEMORY_LIMIT = 2 * 1024**3


def bomb(levels: int = 9, width: int = 9) -> str:
    """A YAML flow sequence whose last item expands to ``width ** levels`` strings: each level's anchor
    lists the one below ``width`` times."""
    parts = [f"&l0 [{', '.join(['lol'] * width)}]"]
    parts += [f"&l{k} [{', '.join([f'*l{k - 1}'] * width)}]" for k in range(1, levels)]
    return f"[{', '.join(parts)}]"


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def load_in_child(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LOAD, str(path)], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited)


POSITIONS = {
    "weight": f"rewards:\n  - name: exact_match\n    weight: {bomb()}\n",
    "timeout": f"rewards:\n  - name: exact_match\n    timeout: {bomb()}\n",
    "param": f"rewards:\n  - name: format_regex\n    params: {{pattern: {bomb()}}}\n",
    "gate threshold": (f"rewards:\n  - name: exact_match\n    alias: em\n  - name: format_regex\n"
                       f"    params: {{pattern: 'x'}}\n    gate: {{reward: em, threshold: {bomb()}}}\n"),
}


@pytest.mark.parametrize("position", POSITIONS)
def test_an_alias_bomb_fails_fast_with_a_clear_error(tmp_path, position):
    path = tmp_path / "bomb.yaml"
    path.write_text(POSITIONS[position])
    done = load_in_child(path)
    assert done.returncode == 1
    assert "ConfigError: config would expand to more than 1,000,000 values (YAML aliases" in done.stderr
    assert len(done.stderr) < 5000


def test_the_cli_says_what_is_wrong_with_a_bomb(tmp_path):
    path, rows = tmp_path / "bomb.yaml", tmp_path / "rows.jsonl"
    path.write_text(POSITIONS["weight"])
    rows.write_text(json.dumps({"prompt": "p", "completion": "c", "solution": "c"}) + "\n")
    done = subprocess.run([sys.executable, "-m", "rewardhub.cli", "score", "--config", str(path), str(rows)],
                          capture_output=True, text=True, timeout=120, preexec_fn=_limited)
    assert done.returncode == 2 and "alias bomb" in done.stderr and len(done.stderr) < 2000


def test_aliases_of_ordinary_size_still_load(tmp_path):
    path = tmp_path / "shared.yaml"
    path.write_text("rewards:\n  - name: format_regex\n    params: &p {pattern: 'a.*'}\n"
                    "  - name: format_regex\n    alias: again\n    params: *p\n")
    assert load(path).score([{"prompt": "p", "completion": "abc"}])[0]["rewards"] == {"format_regex": 1.0,
                                                                                      "again": 1.0}


def test_shared_and_self_referencing_values_built_in_python():
    level: list = ["lol"] * 10
    for _ in range(8):
        level = [level] * 10  # 10**9 values written out, ten objects in memory
    with pytest.raises(ConfigError, match="would expand to more than"):
        load({"rewards": [{"name": "exact_match", "weight": level}]})
    itself: list = []
    itself.append(itself)
    with pytest.raises(ConfigError, match="contains itself"):
        load({"rewards": [{"name": "exact_match", "params": {"x": itself}}]})


def test_a_file_too_large_to_be_a_config(tmp_path):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"rewards": ["exact_match"], "pad": "x" * (17 * 1024 * 1024)}))
    with pytest.raises(ConfigError, match="above the limit of 16777216 bytes"):
        load(path)


def test_error_messages_show_bounded_values():
    level: list = [1.5] * 10
    for _ in range(8):
        level = [level] * 10
    assert len(shown(level)) < 200
    assert shown(10**5000) == "<an integer of 16610 bits>"
    assert len(shown("x" * 10**6)) < 100 and shown("two") == "'two'"
    with pytest.raises(ConfigError, match=r"'weight' must be a finite number, got '1e-3'"):
        load({"rewards": [{"name": "exact_match", "weight": "1e-3"}]})
