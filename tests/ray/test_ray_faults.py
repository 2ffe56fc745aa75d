"""``rewardhub score --ray`` under faults (issue 35 item 8), on real Ray: the input is streamed into the object
store in blocks of one schema (never held on the driver), and a driver killed mid-run (SIGKILL, no cleanup of
its own) leaves none of the local Ray it started behind; ``-q`` keeps Ray's INFO logs off the terminal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import ray_cluster
from judge_server import KEY_ENV, SECRET, JudgeServer, Reply
from ray_cluster import RAY_ENV
from serving import until

ray = pytest.importorskip("ray")
from rewardhub._files.tables import table_rows  # noqa: E402
from rewardhub.ray.reading import stream_blocks  # noqa: E402


class Bad:
    def __init__(self):
        self.bad_rows: list[tuple[int, str]] = []


@pytest.fixture(scope="module")
def local_ray():
    with ray_cluster.local_ray(num_cpus=2) as started:
        yield started


def test_the_input_is_streamed_in_blocks_of_one_schema(local_ray, tmp_path):
    """Text completions first, chat-message completions later (another block): every block has the JSON
    column the whole file needs, the rows come back as written, the bad line is reported as `score` does."""
    rows = [{"prompt": f"p{i // 4}", "completion": f"answer {i}", "n": i} for i in range(40)]
    rows += [{"prompt": f"q{i // 4}", "completion": [{"role": "assistant", "content": f"chat {i}"}], "n": 40 + i,
              "extra": {"k": i}} for i in range(40)]
    source = tmp_path / "mixed.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows[:50]) + "{broken\n"
                      + "".join(json.dumps(r) + "\n" for r in rows[50:]))
    bad = Bad()
    refs = stream_blocks(source, bad, rows_per_block=16)
    tables = ray.get(refs)
    assert len(tables) > 3 and len({t.schema for t in tables}) == 1
    assert [n for t in tables for n in t.column("n").to_pylist()] == list(range(80))
    assert all(len(t) >= 16 for t in tables[:-1])  # blocks end where a group does
    got = [row for t in tables for row in table_rows(t)]
    assert [r["completion"] for r in got] == [r["completion"] for r in rows]
    assert [line for line, _ in bad.bad_rows] == [51]


def ray_processes(marker: str) -> list[int]:
    """Pids of the processes whose environment holds ``marker`` (RAY_TMPDIR of one run: what it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ.split(b"\0"):
            found.append(int(entry))
    return found


def test_a_killed_driver_leaves_no_ray_behind_and_q_keeps_ray_quiet(tmp_path):
    """The actors wait on a judge that never answers; the driver is SIGKILLed mid-run."""
    temp_dir = tempfile.mkdtemp(prefix="rh-ray-", dir="/tmp")
    marker = f"RAY_TMPDIR={temp_dir}"
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({"prompt": f"q{i}", "completion": f"a{i}"}) + "\n" for i in range(8)))
    with JudgeServer() as judge:
        judge.answer = lambda body: Reply(hang=True)
        config = tmp_path / "judge.json"
        config.write_text(json.dumps({"rewards": [{"name": "judge", "params": {
            "base_url": judge.base_url, "model": "m", "api_key_env": KEY_ENV, "cache": None, "timeout": 600}}]}))
        env = {**os.environ, **RAY_ENV, KEY_ENV: SECRET, "RAY_TMPDIR": temp_dir}
        env.pop("RAY_ADDRESS", None)
        driver = subprocess.Popen([sys.executable, "-m", "rewardhub.cli", "score", "--ray", "-q", "-c", str(config),
                                   str(source), "-o", str(tmp_path / "out.jsonl"), "--actors", "1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        try:
            until(lambda: judge.requests > 0 or driver.poll() is not None, "an actor scoring", tries=12000)
            assert driver.poll() is None, driver.stderr.read()
            assert ray_processes(marker), "the run's Ray processes are found by their environment"
            driver.send_signal(signal.SIGKILL)
            driver.wait(60)
            until(lambda: not ray_processes(marker), "the run's Ray processes gone", tries=2400)
        finally:
            if driver.poll() is None:
                driver.kill()
            for pid in ray_processes(marker):  # only if the test failed: what this test started
                os.kill(pid, signal.SIGKILL)
    stderr = driver.stderr.read()
    assert "INFO" not in stderr and len(stderr.splitlines()) < 5, stderr
