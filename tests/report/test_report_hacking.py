"""``rewardhub report`` over scored files of successive steps: the reward-hacking section, its alarms and plots."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardhub.report import write_report
from rewardhub.testing.scripted_runs import scripted_run

RH = str(Path(sys.executable).with_name("rewardhub"))
pytest.importorskip("matplotlib")


def scored_files(name: str, seed: int, folder: Path, *, step_column: bool = False) -> list[Path]:
    """The scripted run written as ``rewardhub score`` would: one JSONL file per step (or one with a step column)."""
    run = scripted_run(name, seed)
    paths, lines = [], []
    for step, batch, results in run.batches():
        rows = []
        for i in range(len(batch)):
            values = {a: r.scores[i].value for a, r in results.items()}
            present = [run.weights[a] * v for a, v in values.items() if v is not None]
            row = {"prompt": batch.prompts[i], "completion": batch.completions[i], "rewards": values,
                   "reward": sum(present) if present else None,
                   "reasons": {a: r.scores[i].reason for a, r in results.items()},
                   "outcomes": {a: r.scores[i].outcome for a, r in results.items()}, "seconds": {}}
            rows.append({**row, "step": step} if step_column else row)
        if step_column:
            lines += rows
        else:
            paths.append(folder / f"step_{step:03d}.jsonl")
            paths[-1].write_text("".join(json.dumps(r) + "\n" for r in rows))
    if step_column:
        paths.append(folder / "all_steps.jsonl")
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in lines))
    return paths


def config_for(name: str, seed: int, folder: Path) -> Path:
    run = scripted_run(name, seed)
    entries = [{"name": "exact_match", "alias": alias, "weight": run.weights[alias], "role": run.roles[alias]}
               for alias in run.weights]
    path = folder / "rewards.json"
    path.write_text(json.dumps({"rewards": entries}))
    return path


def hacking_section(page: str) -> str:
    start = page.index('<section id="hacking">')
    return page[start:page.index("</section>", start)]


def test_the_cli_reports_an_audit_hack_over_step_files(tmp_path):
    files = scored_files("audit", 202, tmp_path)
    out = tmp_path / "report.html"
    done = subprocess.run([RH, "report", *map(str, files), "--config", str(config_for("audit", 202, tmp_path)),
                           "-o", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    section = hacking_section(out.read_text())
    assert "over 45 steps (told apart by the order of the files (file i = step i))" in section
    assert "<td>audit</td>" in section and "more than the audit &#x27;audit&#x27; on the same completions" in section
    assert "e.g. <code>" in section  # example completions
    assert 'src="data:image/png;base64,' in section
    assert '<a href="#hacking">Reward hacking</a>' in out.read_text()


def test_a_step_column_and_inferred_weights_find_a_length_hack(tmp_path):
    (path,) = scored_files("length", 101, tmp_path, step_column=True)
    section = hacking_section(write_report(path, tmp_path / "r.html").read_text())
    assert "the rows&#x27; step column" in section
    assert "<td>length</td>" in section and "length is being paid for" in section


def test_a_clean_run_has_no_alarm(tmp_path):
    files = scored_files("clean", 303, tmp_path)
    section = hacking_section(write_report(files, tmp_path / "r.html", config=config_for("clean", 303, tmp_path))
                              .read_text())
    assert "No alarm: no signal held over these steps." in section


def test_a_single_step_has_no_hacking_section(tmp_path):
    files = scored_files("clean", 1, tmp_path)
    assert 'id="hacking"' not in write_report(files[0], tmp_path / "r.html").read_text()
