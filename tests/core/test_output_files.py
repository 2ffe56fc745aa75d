"""Output files that keep the work: staging private to each run, concurrent runs on one target,
devices and FIFOs as targets, SIGTERM mid-run (real CLI processes, stopped by pid)."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rewardhub._files.output import write_rows
from rewardhub._files.staging import replacing

# A reward that holds every row until the file $GATE exists: runs are provably mid-write when the
# test looks, however slow the machine, and nothing here depends on timing.
GATED_PLUGIN = """
import os, time, rewardhub

@rewardhub.sample_reward(name="t_gated")
def gated(text):
    while not os.path.exists(os.environ["GATE"]):
        time.sleep(0.02)
    return 1.0

@rewardhub.hookimpl
def register_rewards(register):
    register(gated)
"""

RUN = """
import sys, rewardhub._manager as m, gated_plugin
m.load_plugins(); m.pm.register(gated_plugin)
from rewardhub.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def gated(tmp_path):
    """(start(input, output) -> Popen, gate path): CLI runs scoring with the gated reward."""
    (tmp_path / "gated_plugin.py").write_text(GATED_PLUGIN)
    config = tmp_path / "gated.yaml"
    config.write_text("rewards:\n  - name: t_gated\n")
    gate = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "GATE": str(gate)}
    procs = []

    def start(source, output):
        proc = subprocess.Popen([sys.executable, "-c", RUN, "score", "-c", str(config), str(source), "-o", str(output),
                                 "-q", "--batch-size", "16"], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        return proc

    yield start, gate
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def rows_file(path, tag, count):
    path.write_text("".join(json.dumps({"prompt": f"{tag}{i // 4}", "completion": tag}) + "\n" for i in range(count)))
    return path


def partials(folder):
    return sorted(p.name for p in folder.iterdir() if "partial" in p.name)


def wait_for(predicate, procs, what):
    for _ in range(3000):  # until it holds, however slow the start (a run that exits early fails at once)
        if predicate():
            return
        for proc in procs:
            assert proc.poll() is None, f"a run ended before {what}: {proc.communicate()}"
        time.sleep(0.05)
    raise AssertionError(f"never saw {what}")


def read_back(path):
    from rewardhub._files.io import iter_input

    return [record.row for record in iter_input(path)]


@pytest.mark.parametrize("name", ["scored.jsonl", "scored_dataset"])  # a file, and a folder (moved aside)
def test_two_runs_writing_one_output_each_put_a_complete_file_in_place(gated, tmp_path, name):
    start, gate = gated
    out = tmp_path / name
    first = start(rows_file(tmp_path / "a.jsonl", "a", 120), out)
    wait_for(lambda: len(partials(tmp_path)) == 1, [first], "the first run's staging")
    second = start(rows_file(tmp_path / "b.jsonl", "b", 80), out)
    wait_for(lambda: len(partials(tmp_path)) == 2, [first, second], "both runs staging at once")
    host = socket.gethostname()
    assert all(f".{name}.{host}.{proc.pid}-" in " ".join(partials(tmp_path)) for proc in (first, second))
    gate.touch()
    for proc in (first, second):
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
    rows = read_back(out)
    tags = {row["completion"] for row in rows}
    assert (tags, len(rows)) in (({"a"}, 120), ({"b"}, 80)), "the file in place is one run's, complete"
    assert all(row["rewards"] == {"t_gated": 1.0} for row in rows)
    assert partials(tmp_path) == []


def test_a_run_never_removes_another_live_runs_staging_nor_another_hosts(tmp_path):
    live = tmp_path / f".scored.jsonl.{socket.gethostname()}.{os.getppid()}-abcdef.partial"  # a live process
    other_host = tmp_path / f".scored.jsonl.elsewhere.example.{_dead_pid()}-abcdef.partial"
    for foreign in (live, other_host):
        foreign.mkdir()
        (foreign / "scored.jsonl").write_text('{"other": "run"}\n')
    assert write_rows([{"a": 1}], tmp_path / "scored.jsonl") == 1
    assert (live / "scored.jsonl").read_text() == '{"other": "run"}\n'
    assert partials(tmp_path) == sorted([live.name, other_host.name])


def test_a_killed_runs_staging_is_cleared_by_the_next_run(gated, tmp_path):
    """SIGKILL leaves no chance to clean up; the next run writing the same target removes what it left
    (and an older one, named without a host), and leaves other targets' staging alone."""
    start, gate = gated
    out = tmp_path / "scored.jsonl"
    killed = start(rows_file(tmp_path / "a.jsonl", "a", 40), out)
    wait_for(lambda: partials(tmp_path), [killed], "the run's staging")
    killed.kill()
    killed.wait(60)
    left = partials(tmp_path)
    assert len(left) == 1 and f".{killed.pid}-" in left[0]
    older = tmp_path / f".scored.jsonl.{_dead_pid()}-xyz.partial"
    other_target = tmp_path / f".other.jsonl.{socket.gethostname()}.{_dead_pid()}-xyz.partial"
    older.mkdir()
    other_target.mkdir()
    gate.touch()
    again = start(rows_file(tmp_path / "b.jsonl", "b", 8), out)
    _, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr
    assert len(read_back(out)) == 8
    assert partials(tmp_path) == [other_target.name]


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_sigterm_mid_run_leaves_the_previous_output_and_no_staging(gated, tmp_path):
    start, _ = gated
    out = tmp_path / "scored.parquet"
    out.write_bytes(b"previous run")
    proc = start(rows_file(tmp_path / "a.jsonl", "a", 40), out)
    wait_for(lambda: partials(tmp_path), [proc], "the run's staging")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert out.read_bytes() == b"previous run"
    assert partials(tmp_path) == []


@pytest.mark.parametrize("command", ["score", "pairs", "select"])
def test_dev_null_takes_the_rows_and_leaves_nothing(tmp_path, command):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"prompt": "q", "completion": c, "solution": "42"}) + "\n"
                              for c in ("42", "41", "42")))
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards:\n  - name: exact_match\n")
    before = set(os.listdir("/dev"))
    result = subprocess.run([str(Path(sys.executable).with_name("rewardhub")), command, "-c", str(config), str(source),
                             "-o", "/dev/null"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert [name for name in set(os.listdir("/dev")) - before if "partial" in name] == []
    assert partials(tmp_path) == []


def test_a_fifo_target_gets_the_rows_as_jsonl(tmp_path):
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.extend(fifo.read_text().splitlines()))
    reader.start()
    assert write_rows(({"n": i} for i in range(3)), fifo) == 3
    reader.join(timeout=30)
    assert [json.loads(line) for line in received] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert partials(tmp_path) == []


def test_a_failed_write_removes_its_staging_and_keeps_the_target(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("previous\n")

    def rows():
        yield {"a": 1}
        raise RuntimeError("scoring broke")

    with pytest.raises(RuntimeError, match="scoring broke"):
        write_rows(rows(), target)
    assert target.read_text() == "previous\n" and partials(tmp_path) == []


@pytest.mark.parametrize("was_folder", [True, False])
def test_a_file_replaces_a_folder_and_a_folder_a_file(tmp_path, was_folder):
    target = tmp_path / "out"
    if was_folder:
        target.mkdir()
        (target / "old.txt").write_text("old")
    else:
        target.write_text("old")
    with replacing(target) as staged:
        if was_folder:
            staged.write_text("new")
        else:
            staged.mkdir()
            (staged / "new.txt").write_text("new")
    assert (target.read_text() if was_folder else (target / "new.txt").read_text()) == "new"
    assert partials(tmp_path) == []


def test_a_symlinked_output_replaces_the_file_it_points_to(tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    write_rows([{"a": 1}], link)
    assert link.is_symlink() and json.loads(real.read_text()) == {"a": 1}
