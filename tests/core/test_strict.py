"""``rewardhub score --strict`` (issue 35): the run stops (exit 2, the output left as it was) at the first
reward that is not scoring; and what works instead of ``python -W error::rewardhub.RewardNotScoringWarning``,
which CPython cannot honour (the class is not importable when it parses its options)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = """
import warnings, rewardhub
warnings.simplefilter("error", rewardhub.RewardNotScoringWarning)
rewardhub.load({"rewards": [{"name": "exact_match"}]}).score([{"prompt": "q", "completion": "4"}])
print("went on")
"""


@pytest.fixture
def unscorable(tmp_path):
    """A config whose exact_match needs 'solution', and rows without it."""
    config = tmp_path / "em.yaml"
    config.write_text("rewards:\n  - name: exact_match\n  - name: format_regex\n    params: {pattern: '\\d'}\n")
    rows = tmp_path / "in.jsonl"
    rows.write_text("".join(json.dumps({"prompt": "q", "completion": str(i)}) + "\n" for i in range(20)))
    return config, rows


def score(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rewardhub.cli", "score", *args], capture_output=True, text=True,
                          timeout=300)


def test_strict_stops_the_run_and_keeps_the_previous_output(unscorable, tmp_path):
    config, rows = unscorable
    out = tmp_path / "out.jsonl"
    out.write_text("previous\n")
    done = score("-c", str(config), str(rows), "-o", str(out), "--strict")
    assert done.returncode == 2
    assert "stopped at a reward that is not scoring" in done.stderr and "'solution'" in done.stderr
    assert out.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_without_strict_the_run_warns_and_goes_on(unscorable, tmp_path):
    config, rows = unscorable
    done = score("-c", str(config), str(rows), "-o", str(tmp_path / "out.jsonl"), "-q")
    assert done.returncode == 0 and "RewardNotScoringWarning" in done.stderr
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 20


def test_the_documented_ways_to_stop_at_the_warning(tmp_path):
    in_code = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert in_code.returncode == 1 and "RewardNotScoringWarning" in in_code.stderr and "went on" not in in_code.stdout
    # The command-line form the docs used to give: CPython cannot import the class while parsing -W, so it goes on.
    flag = subprocess.run([sys.executable, "-W", "error::rewardhub.RewardNotScoringWarning", "-c", SCRIPT.replace(
        'warnings.simplefilter("error", rewardhub.RewardNotScoringWarning)\n', "")], capture_output=True, text=True,
        timeout=120)
    assert "went on" in flag.stdout
