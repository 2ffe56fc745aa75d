"""The console script, run as a user runs it: list, score, check, exit codes and error messages."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from paths import TESTS

RH = str(Path(sys.executable).with_name("rewardhub"))

# A plugin module that registers the core tests' rewards, loaded through the entry-point-free path:
# REWARDHUB_TEST_PLUGIN is not a thing, so the CLI tests go through a tiny sitecustomize instead.
SITE = textwrap.dedent("""
    import rewardhub, core_rewards
    core_rewards.register_all(rewardhub.registry)
""")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "sitecustomize.py").write_text(SITE)
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join([str(site), str(TESTS)])
    return environ


def rh(env, *args, stdin=None):
    return subprocess.run([RH, *args], capture_output=True, text=True, env=env, input=stdin, timeout=120)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "rewards.yaml"
    path.write_text(
        "rewards:\n  - name: t_contains\n    weight: 2.0\n  - name: t_flaky\n    weight: 1.0\n"
    )
    return path


def write_jsonl(path, rows):
    path.write_bytes(b"".join(r if isinstance(r, bytes) else (json.dumps(r) + "\n").encode() for r in rows))
    return path


def test_list_human_readable(env):
    result = rh(env, "list")
    assert result.returncode == 0
    assert "t_contains  [tests]" in result.stdout
    assert "1.0 when the solution appears in the completion." in result.stdout
    assert "params: ignore_case=False, on_error='none'" in result.stdout


def test_version_is_the_installed_distribution_version(env):
    import importlib.metadata

    result = rh(env, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"rewardhub {importlib.metadata.version('rewardhub')}"


def test_score_writes_rows_and_a_summary(env, config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [
        {"prompt": "q", "completion": "42", "solution": "42", "id": "a"},
        {"prompt": "q", "completion": [{"role": "assistant", "content": "boom"}], "solution": "42", "id": "b"},
    ])
    out = tmp_path / "out.jsonl"
    result = rh(env, "score", "--config", str(config), str(data), "-o", str(out))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["id"] == "a" and rows[0]["rewards"] == {"t_contains": 1.0, "t_flaky": 1.0}
    assert rows[0]["reward"] == 3.0
    assert rows[1]["rewards"] == {"t_contains": 0.0, "t_flaky": None}
    assert rows[1]["reward"] == 0.0
    assert rows[1]["reasons"]["t_flaky"].startswith("error: RuntimeError")
    assert "scored 2 rows" in result.stderr
    assert "t_flaky" in result.stderr and "none x1: error: RuntimeError" in result.stderr


def test_bad_rows_are_reported_by_line_and_the_rest_scored(env, config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [
        {"prompt": "q", "completion": "42", "solution": "42"},
        b"{not json\n",
        b"\xff\xfe invalid utf-8\n",
        {"prompt": "q", "solution": "42"},
        b"[1, 2]\n",
        {"prompt": "q", "completion": 17, "solution": "42"},
        {"prompt": "q", "completion": "x" * 1_000_000, "solution": "42"},
        {"prompt": "q", "completion": "", "solution": "42"},
        {"prompt": "q", "completion": "42"},
    ])
    result = rh(env, "score", "--config", str(config), str(data))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 5
    assert "line 2: invalid JSON" in result.stderr
    assert "line 3: invalid UTF-8" in result.stderr
    assert "line 4: no 'completion' (fields:" in result.stderr
    assert "line 5: a row must be a JSON object" in result.stderr
    assert "skipped 4 bad row(s)" in result.stderr
    assert rows[1]["rewards"] == {"t_contains": None, "t_flaky": None}
    assert "not text" in rows[1]["reasons"]["t_contains"]
    assert rows[2]["rewards"]["t_contains"] == 0.0 and rows[3]["rewards"]["t_flaky"] == 1.0
    assert rows[4]["rewards"]["t_contains"] is None
    assert rows[4]["reasons"]["t_contains"] == "no solution for this row"  # absent key reads as None


def test_score_reads_stdin_parquet_and_datasets_folders(env, config, tmp_path):
    import datasets

    rows = [{"prompt": "q", "completion": "42", "solution": "42"}, {"prompt": "q", "completion": "7", "solution": "42"}]
    datasets.Dataset.from_list(rows).to_parquet(str(tmp_path / "in.parquet"))
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "folder"))
    for source, stdin in ((str(tmp_path / "in.parquet"), None), (str(tmp_path / "folder"), None),
                          ("-", "".join(json.dumps(r) + "\n" for r in rows))):
        result = rh(env, "score", "-c", str(config), source, "-q", stdin=stdin)
        assert result.returncode == 0, result.stderr
        assert [json.loads(line)["rewards"]["t_contains"] for line in result.stdout.splitlines()] == [1.0, 0.0]


def test_progress_bar_on_stderr(env, config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [{"prompt": str(i), "completion": "42", "solution": "42"} for i in range(300)])
    result = rh(env, "score", "-c", str(config), str(data), "-o", str(tmp_path / "o.jsonl"), "--progress",
                "--batch-size", "64")
    assert result.returncode == 0
    assert "reading [" in result.stderr and "300/300" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "-c", "{config}", "{missing}"], "input not found"),
        (["score", "-c", "{tmp}/nope.yaml", "{data}"], "config file not found"),
        (["score", "-c", "{badname}", "{data}"], "Did you mean: 't_contains'"),
        (["score", "-c", "{config}", "{data}", "--batch-size", "0"], "--batch-size must be at least 1"),
        (["score", "-c", "{config}", "{data}", "--report", "r.html"], "--report needs -o"),
        (["nonsense"], "invalid choice"),
    ],
)
def test_usage_and_config_errors_exit_2(env, config, tmp_path, args, message):
    data = write_jsonl(tmp_path / "in.jsonl", [{"completion": "x"}])
    badname = tmp_path / "bad.yaml"
    badname.write_text("rewards: [t_contain]\n")
    fill = {"config": config, "missing": tmp_path / "missing.jsonl", "tmp": tmp_path, "data": data, "badname": badname}
    result = rh(env, *[a.format(**fill) for a in args])
    assert result.returncode == 2
    assert message in result.stderr


CASES = """
reward: t_contains
cases:
  - name: found
    completion: "it is 42"
    columns: {solution: "42"}
    expect: 1.0
    reason: found
  - name: group
    completions: ["42", "41", "x 42"]
    columns: {solution: "42"}
    expect: [1.0, 0.0, {min: 0.5, max: 1}]
  - name: abstains without the column
    completion: "42"
    expect: null
  - name: approx
    completion: "nope"
    columns: {solution: "42"}
    expect: {approx: 0.0, tol: 0.1}
"""


def test_check_passes(env, tmp_path):
    cases = tmp_path / "good.cases.yaml"
    cases.write_text(CASES)
    result = rh(env, "check", str(cases))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("4 passed, 0 failed")


def test_check_failures_exit_1_with_a_table(env, tmp_path):
    cases = tmp_path / "bad.cases.yaml"
    cases.write_text(CASES.replace("expect: 1.0", "expect: 0.0").replace("reason: found", "reason: missing"))
    result = rh(env, "check", str(cases))
    assert result.returncode == 1
    assert "FAILED CASES" in result.stdout
    assert "bad.cases.yaml::found" in result.stdout
    assert "expected 0, got 1.0 (found)" in result.stdout
    assert "reason 'found' does not contain 'missing'" in result.stdout
    assert "3 passed, 1 failed" in result.stdout


def test_check_rejects_malformed_case_files(env, tmp_path):
    cases = tmp_path / "x.cases.yaml"
    cases.write_text("reward: t_contains\ncases:\n  - name: a\n    completion: x\n    expcet: 1\n")
    result = rh(env, "check", str(cases))
    assert result.returncode == 2
    assert "case 'a': unknown key(s) 'expcet'" in result.stderr


def test_check_with_a_config_file_and_aliases(env, tmp_path, config):
    (tmp_path / "cfg.yaml").write_text(config.read_text())
    cases = tmp_path / "c.cases.yaml"
    cases.write_text(
        "config: cfg.yaml\ncases:\n"
        "  - {name: total, completion: '42', columns: {solution: '42'}, expect: 3.0}\n"
        "  - {name: one, reward: t_flaky, completion: 'skip', expect: null, reason: not applicable}\n"
    )
    result = rh(env, "check", str(cases))
    assert result.returncode == 0, result.stdout + result.stderr


def test_pytest_collects_case_files(env, tmp_path):
    (tmp_path / "rewards.cases.yaml").write_text(CASES.replace("expect: 1.0", "expect: 0.5"))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "1 failed, 3 passed" in result.stdout, result.stdout
    assert "case 'found' failed" in result.stdout
    assert "expected 0.5, got 1.0" in result.stdout


def test_score_with_report(env, config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [
        {"prompt": f"q{i // 2}", "completion": "42" if i % 2 else "no", "solution": "42"} for i in range(8)
    ])
    report = tmp_path / "report.html"
    result = rh(env, "score", "-c", str(config), str(data), "-o", str(tmp_path / "out.jsonl"), "--report", str(report))
    assert result.returncode == 0, result.stderr
    html = report.read_text()
    assert "t_contains" in html and "t_flaky" in html and "<img" in html


def test_check_json_keeps_stdout_pure_json(env, tmp_path):
    cases = tmp_path / "good.cases.yaml"
    cases.write_text(CASES)
    result = rh(env, "check", "--json", str(cases))
    assert result.returncode == 0
    assert [r["passed"] for r in json.loads(result.stdout)] == [True] * 4
    assert "4 passed, 0 failed" in result.stderr


def test_score_refuses_to_overwrite_its_input(env, config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [{"completion": "x 42", "solution": "42"}])
    result = rh(env, "score", "-c", str(config), str(data), "-o", str(data))
    assert result.returncode == 2
    assert "is the input file" in result.stderr
    assert json.loads(data.read_text()) == {"completion": "x 42", "solution": "42"}


def test_unwritable_output_is_a_usage_error_not_a_traceback(env, config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [{"completion": "x"}])
    result = rh(env, "score", "-c", str(config), str(data), "-o", str(tmp_path / "no" / "such" / "out.jsonl"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "does not exist" in result.stderr


def test_jsonl_with_a_byte_order_mark_reads_its_first_row(env, config, tmp_path):
    data = tmp_path / "bom.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + json.dumps({"completion": "42", "solution": "42"}).encode() + b"\n")
    result = rh(env, "score", "-c", str(config), str(data), "--progress")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["rewards"]["t_contains"] == 1.0



def test_corrupt_parquet_with_progress_bar_is_a_clear_error(env, config, tmp_path):
    data = tmp_path / "broken.parquet"
    data.write_bytes(b"not parquet at all")
    result = rh(env, "score", "-c", str(config), str(data), "--progress")
    assert result.returncode == 2
    assert "cannot read Parquet file" in result.stderr and "Traceback" not in result.stderr


def test_pytest_reports_a_malformed_case_file_by_its_message(env, tmp_path):
    (tmp_path / "bad.cases.yaml").write_text("reward: t_contains\ncases:\n  - name: a\n    completion: x\n    expcet: 1\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert "case 'a': unknown key(s) 'expcet'" in result.stdout
    assert "plugins/cases.py" not in result.stdout  # no traceback into rewardhub's internals


def test_a_datasets_folder_saved_in_numpy_format_round_trips(env, config, tmp_path):
    import datasets

    folder = tmp_path / "np_ds"
    rows = [{"prompt": "q", "completion": "it is 42", "solution": "42", "ids": [1, 2, 3]}]
    datasets.Dataset.from_list(rows).with_format("numpy").save_to_disk(str(folder))
    result = rh(env, "score", "-q", "-c", str(config), str(folder))
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
    assert row["ids"] == [1, 2, 3] and row["rewards"]["t_contains"] == 1.0  # ids was the string "[1 2 3]"


def test_numpy_values_in_rows_are_written_as_json_numbers():
    import numpy as np

    from rewardhub._files.jsonl import dumps_row

    assert json.loads(dumps_row({"a": np.int64(3), "b": np.array([0.5, np.nan]), "c": {1, 2}})) == {
        "a": 3, "b": [0.5, None], "c": "{1, 2}"}


def test_a_failed_read_leaves_the_previous_output_alone(env, config, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"kept": true}\n')
    result = rh(env, "score", "-c", str(config), str(tmp_path / "typo.jsonl"), "-o", str(out))
    assert result.returncode == 2 and "input not found" in result.stderr
    assert out.read_text() == '{"kept": true}\n'


def test_an_input_with_no_scorable_row_is_an_error(env, config, tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("prompt,completion\nq,42\n")
    result = rh(env, "score", "-q", "-c", str(config), str(data))
    assert result.returncode == 2
    assert "none of the 2 rows of" in result.stderr and "line 1: invalid JSON" in result.stderr


def test_a_lone_surrogate_row_is_skipped_with_its_line_and_the_rest_scored(env, config, tmp_path):
    lines = [json.dumps({"completion": "42", "solution": "42"})] * 1001
    lines[600] = '{"completion": "4\\ud800 2", "solution": "42"}'  # valid JSON, not valid Unicode
    lines[700] = '{"completion": "\\ud83d\\ude00 42", "solution": "42"}'  # a real pair: an emoji, fine
    data = tmp_path / "in.jsonl"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    result = rh(env, "score", "-c", str(config), str(data), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "line 601: a lone surrogate escape" in result.stderr and "Traceback" not in result.stderr
    assert len(out.read_text().splitlines()) == 1000


def test_a_failed_run_leaves_the_previous_output_intact(env, config, tmp_path):
    out = tmp_path / "scored.jsonl"
    out.write_text("previous run\n")
    csv = tmp_path / "in.csv"
    csv.write_text("prompt,completion\nq,42\n")
    result = rh(env, "score", "-c", str(config), str(csv), "-o", str(out))
    assert result.returncode == 2 and "could be scored" in result.stderr
    assert out.read_text() == "previous run\n"
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_an_interrupted_run_leaves_the_previous_output_intact(env, tmp_path):
    config = tmp_path / "slow.yaml"
    config.write_text("rewards:\n  - name: t_sleepy\n")
    plugin = tmp_path / "sleepy_plugin.py"
    plugin.write_text(
        "import time, rewardhub\n"
        "@rewardhub.sample_reward(name='t_sleepy')\n"
        "def sleepy(text):\n    time.sleep(0.05)\n    return 1.0\n"
        "@rewardhub.hookimpl\ndef register_rewards(register):\n    register(sleepy)\n"
    )
    data = write_jsonl(tmp_path / "in.jsonl", [{"prompt": str(i), "completion": "x"} for i in range(2000)])
    out = tmp_path / "scored.jsonl"
    out.write_text("previous run\n")
    code = (
        "import sys, rewardhub._manager as m, sleepy_plugin\n"
        "m.load_plugins(); m.pm.register(sleepy_plugin)\n"
        "from rewardhub.cli import main\n"
        f"sys.exit(main(['score', '-c', {str(config)!r}, {str(data)!r}, '-o', {str(out)!r}, '--batch-size', '8']))\n"
    )
    # SIGINT restored to its default in the child: a suite run in the background (`cmd &`) starts with SIGINT
    # ignored, which children inherit, and Python then never turns SIGINT into KeyboardInterrupt.
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env={**env, "PYTHONPATH": str(tmp_path)},
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for _ in range(1200):  # until the run is writing its output (the partial file is there), however slow the start
        if any("partial" in p.name for p in tmp_path.iterdir()) or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert out.read_text() == "previous run\n"
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_parquet_output_by_extension(env, config, tmp_path):
    import pyarrow.parquet as pq

    data = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "q", "completion": "42", "solution": "42"}] * 3)
    out = tmp_path / "scored.parquet"
    assert rh(env, "score", "-c", str(config), str(data), "-o", str(out), "-q").returncode == 0
    table = pq.read_table(out).to_pylist()
    assert len(table) == 3 and set(table[0]) >= {"rewards", "reward", "reasons", "outcomes", "seconds"}
