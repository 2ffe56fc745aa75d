"""The judge's answer cache, with real faults: a broken cache never costs a score and never kills the process.

Faults are made real: garbage and damaged files, ``chattr +i`` (we run as root, so ``chmod``
would not stop a write), a full tmpfs mounted in a private mount namespace (``unshare -m``), a
lock held by another process, and files truncated under a running process. Scores are checked
against the server's scripted answers, and the server's request count shows nothing is sent twice.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

import pytest
from judge_server import KEY_ENV, SECRET, Reply, judge_fixture, rows, running_server_fixture, server_fixture  # noqa: F401

from rewardhub.rewards.judge.cache import JudgeCache, shared_cache


def numbered(tag: str, start: int, n: int) -> tuple[list[str], list[str], list[float]]:
    """``n`` distinct rows scripted to score ``(i % 11) / 10``, and those scores."""
    ids = range(start, start + n)
    return ["q"] * n, [f"{tag} {i} [[{i % 11}]]" for i in ids], [(i % 11) / 10 for i in ids]


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "rewardhub.judge" and r.levelno >= logging.WARNING]


@contextmanager
def immutable(*paths: Path):
    """``chattr +i`` on ``paths`` (even root cannot write them), undone on exit; skips where unsupported."""
    done = []
    try:
        for path in paths:
            result = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
            if result.returncode != 0:
                pytest.skip(f"chattr +i is not available here: {result.stderr.strip()}")
            done.append(path)
        yield
    finally:
        for path in done:
            subprocess.run(["chattr", "-i", str(path)], check=True)


# ----- the cache doing its job --------------------------------------------------------------------
def test_cache_hits_make_zero_requests(server, judge, tmp_path):
    path = tmp_path / "judge.sqlite"
    prompts, completions = rows("1", "Score: 2", "3")
    prompts, completions = prompts + prompts[-1:], completions + completions[-1:]  # one repeat: deduplicated
    reward = judge(cache=str(path))
    first = reward.evaluate(prompts, completions)
    assert server.requests == 3
    reward.cache.flush()  # answers are stored in the background
    server.reset()
    again = judge(cache=str(path))
    second = again.evaluate(prompts, completions)
    assert second.values == first.values == [0.1, 0.2, 0.3, 0.3]
    assert server.requests == 0 and again.counters.cache_hits == 3 and again.counters.requests == 0
    # the cache holds answers, so a new score range re-parses them for free...
    assert judge(cache=str(path), max_score=5).evaluate(prompts, completions).values == [0.2, 0.4, 0.6, 0.6]
    assert server.requests == 0
    # ...but another model or sampling setting is another request
    judge(cache=str(path), temperature=0.7).evaluate(prompts, completions)
    assert server.requests == 3
    assert len(shared_cache(path)) == 6


def test_default_cache_location(server, judge, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    reward = judge(cache="default")
    reward.evaluate(*rows("5"))
    reward.cache.flush()
    assert len(shared_cache(tmp_path / "rewardhub" / "judge.sqlite")) == 1


def test_failures_are_not_cached(server, judge, tmp_path):
    path = str(tmp_path / "judge.sqlite")
    server.script.append(Reply(status=400))
    assert judge(cache=path).evaluate(*rows("4")).values == [None]
    assert judge(cache=path).evaluate(*rows("4")).values == [0.4]
    assert server.requests == 2


def test_never_maps_a_file_and_converts_a_wal_file_left_by_older_versions(server, judge, tmp_path):
    path = tmp_path / "judge.sqlite"
    old = sqlite3.connect(path, isolation_level=None)  # the layout rewardhub < 0.2 wrote
    old.execute("PRAGMA journal_mode=WAL")
    old.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
    old.close()
    prompts, completions, expected = numbered("wal", 0, 5)
    reward = judge(cache=str(path))
    assert reward.evaluate(prompts, completions).values == expected
    reward.cache.flush()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judge.sqlite"]  # no -wal, no -shm to map
    with open(f"/proc/{os.getpid()}/maps") as maps:
        assert str(path) not in maps.read()
    assert judge(cache=str(path)).evaluate(prompts, completions).values == expected
    assert server.requests == 5


_WORKER = textwrap.dedent(
    """
    # A judge with a cache in its own process: each step scores rows or damages the cache.
    import json, logging, os, subprocess, sys
    import rewardhub

    base_url, cache, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
    warned = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warned.append(record.getMessage())
    logging.getLogger("rewardhub.judge").addHandler(handler)
    reward = rewardhub.get("judge", base_url=base_url, api_key_env=os.environ["JUDGE_KEY_ENV"],
                           cache=cache, model="judge-test")
    folder, name = os.path.split(cache)

    def companions():
        return [os.path.join(folder, f) for f in os.listdir(folder) if f.startswith(name)]

    def damage(fault):
        if fault == "truncate":  # another process cuts the cache files under us
            for path in companions():
                os.truncate(path, 0)
        elif fault == "fill":  # the disk fills up
            try:
                with open(os.path.join(folder, "filler"), "wb") as filler:
                    while True:
                        filler.write(b"x" * 4096)
                        filler.flush()
            except OSError:
                pass
        elif fault == "immutable":  # the files and folder become unwritable
            for path in companions() + [folder]:
                subprocess.run(["chattr", "+i", path], check=True)
        elif fault == "mutable":
            for path in companions() + [folder]:
                subprocess.run(["chattr", "-i", path], check=True)

    report = {"right": []}
    for step in steps:
        kind, *args = step.split(":")
        if kind == "rows":
            tag, start, n = args[0], int(args[1]), int(args[2])
            ids = range(start, start + n)
            values = reward.evaluate(["q"] * n, [f"{tag} {i} [[{i % 11}]]" for i in ids]).values
            reward.cache.flush()
            report["right"].append(values == [(i % 11) / 10 for i in ids])
        else:
            damage(args[0])
    report.update(reward.counters.as_dict(), warnings=warned)
    print(json.dumps(report))
    """
)


def run_worker(server, cache: Path, *steps: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    env = {**os.environ, "JUDGE_KEY_ENV": KEY_ENV, KEY_ENV: SECRET}
    command = [*prefix, sys.executable, "-c", _WORKER, server.base_url, str(cache), *steps]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def report_of(worker: subprocess.Popen) -> dict:
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, f"exit code {worker.returncode}: {err[-2000:]}"
    return json.loads(out)


def test_cache_is_shared_safely_between_processes(server, judge, tmp_path):
    path = tmp_path / "shared.sqlite"
    # several write transactions each, interleaving; rows 20-39 are scored by both processes
    workers = [run_worker(server, path, *(f"rows:row:{start + offset}:10" for offset in range(0, 40, 10)))
               for start in (0, 20)]  # fmt: skip
    for worker in workers:
        assert report_of(worker)["right"] == [True] * 4
    assert 60 <= server.requests <= 80 and len(shared_cache(path)) == 60
    server.reset()
    reward = judge(cache=str(path))
    prompts, completions, expected = numbered("row", 0, 60)
    assert reward.evaluate(prompts, completions).values == expected
    assert server.requests == 0 and reward.counters.cache_hits == 60


# ----- faults ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("on_error", ["none", "zero", "raise"])
def test_a_corrupt_file_is_moved_aside_and_a_new_one_started(server, judge, tmp_path, caplog, on_error):
    path = tmp_path / "judge.sqlite"
    path.write_bytes(b"not a database, " * 100)
    prompts, completions, expected = numbered("c", 0, 8)
    reward = judge(cache=str(path), on_error=on_error)
    assert reward.evaluate(prompts, completions).values == expected  # never None, never 0.0, never raised
    assert reward.evaluate(prompts, completions).values == expected
    assert server.requests == 8 and reward.counters.cache_hits == 8  # the new file serves the second call
    [aside] = tmp_path.glob("judge.sqlite.corrupt-*")
    assert aside.read_bytes() == b"not a database, " * 100
    [warning] = warnings_of(caplog)
    assert "is corrupt (DatabaseError: file is not a database)" in warning and str(aside) in warning
    reward.close()
    restarted = report_of(run_worker(server, path, "rows:c:0:8"))
    assert restarted["right"] == [True] and restarted["cache_hits"] == 8 and server.requests == 8


def test_corruption_found_mid_run_moves_the_file_aside(server, judge, tmp_path, caplog):
    path = tmp_path / "judge.sqlite"
    prompts, completions, expected = numbered("m", 0, 40)
    reward = judge(cache=str(path))
    assert reward.evaluate(prompts, completions).values == expected
    reward.cache.flush()
    with open(path, "r+b") as damaged:  # keep the header, scribble over the pages (another process did it)
        damaged.seek(100)
        damaged.write(os.urandom(path.stat().st_size - 100))
    server.reset()
    assert reward.evaluate(prompts, completions).values == expected
    assert server.requests == 40  # asked once more, because the answers were lost, and only once
    assert len(list(tmp_path.glob("judge.sqlite.corrupt-*"))) == 1
    assert "is corrupt (DatabaseError: database disk image is malformed)" in " ".join(warnings_of(caplog))
    assert len(shared_cache(path)) == 40


def test_read_only_folder_goes_on_uncached_and_warns_once(server, judge, tmp_path, caplog):
    folder = tmp_path / "cache"
    folder.mkdir()
    prompts, completions, expected = numbered("ro", 0, 6)
    with immutable(folder):
        reward = judge(cache=str(folder / "judge.sqlite"), on_error="zero")
        assert reward.evaluate(prompts, completions).values == expected
        reward.cache.flush()  # the queued answers could not be stored, so they are gone
        assert reward.evaluate(prompts, completions).values == expected
        assert server.requests == 12  # each call asks once: nothing sent twice, nothing thrown away
        [warning] = warnings_of(caplog)
        assert "scoring goes on without cached answers" in warning and "unable to open database file" in warning
    restarted = report_of(run_worker(server, folder / "judge.sqlite", "rows:ro:0:6", "rows:ro:0:6"))
    assert restarted["right"] == [True, True] and restarted["warnings"] == []
    assert server.requests == 18 and restarted["cache_hits"] == 6  # writable again: a restart caches


def test_read_only_file_still_serves_its_answers(server, judge, tmp_path, caplog):
    path = tmp_path / "judge.sqlite"
    prompts, completions, expected = numbered("rf", 0, 6)
    first = judge(cache=str(path))
    first.evaluate(prompts, completions)
    first.cache.close()  # stored before the file becomes read-only
    more = numbered("rf", 6, 4)
    server.reset()
    with immutable(path):
        reward = judge(cache=str(path))
        assert reward.evaluate(prompts, completions).values == expected  # read from the cache
        assert reward.evaluate(*more[:2]).values == more[2]  # asked, scored, not stored
        reward.cache.flush()
        assert server.requests == 4 and reward.counters.cache_hits == 6
        [warning] = warnings_of(caplog)
        assert "writing failed" in warning and "readonly database" in warning
        assert "scoring goes on without storing answers" in warning


def test_a_lock_held_too_long_costs_time_not_scores(server, judge, tmp_path, caplog):
    path = tmp_path / "judge.sqlite"
    prompts, completions, expected = numbered("lk", 0, 6)
    first = judge(cache=str(path))
    first.evaluate(prompts, completions)
    first.cache.close()  # stored before the lock is taken
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
         "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == "locked\n"
        reward = judge(cache=str(path))
        reward.cache = JudgeCache(path, read_timeout=0.2, write_timeout=0.2)  # the real cache, shorter waits
        assert reward.evaluate(prompts, completions).values == expected
        reward.cache.flush()
        assert server.requests == 12
        [warning] = warnings_of(caplog)
        assert "reading failed (OperationalError: database is locked)" in warning
    finally:
        holder.communicate(timeout=10)  # closes its stdin: it exits and the lock goes
    assert judge(cache=str(path)).evaluate(prompts, completions).values == expected
    assert server.requests == 12  # the lock is gone: the answers stored before it are read again


def test_cache_failures_never_raise_and_it_recovers(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="rewardhub.judge")
    folder = tmp_path / "cache"
    folder.mkdir()
    cache = JudgeCache(folder / "judge.sqlite", retry_after=0.0)
    with immutable(folder):
        assert cache.get_many(["a"]) == {}
        cache.put_many({"a": {"content": "7"}})
        cache.flush()
        assert len(warnings_of(caplog)) == 1
    cache.put_many({"a": {"content": "7"}})
    cache.flush()
    assert cache.get_many(["a", "b"]) == {"a": {"content": "7"}}
    assert "works again" in caplog.text and len(warnings_of(caplog)) == 1
    cache.close()


# ----- faults under a running process (its own, so that a crash is seen as an exit code) -------------
@pytest.fixture(scope="session")
def private_tmpfs() -> tuple[str, ...]:
    """A command prefix that runs its command with a 1 MiB tmpfs mounted on ``$JUDGE_TMPFS``."""
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True, text=True)  # fmt: skip
    if shutil.which("unshare") is None or probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a private mount namespace: {probe.stderr.strip()}")
    script = 'mkdir -p "$JUDGE_TMPFS" && mount -t tmpfs -o size=1m tmpfs "$JUDGE_TMPFS" && exec "$@"'
    return ("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh")


def test_files_truncated_mid_run_never_kill_the_process(server, tmp_path):
    # With WAL the -shm file was mmap'd: truncating it killed the worker with SIGBUS at the next lookup
    # (exit code 135 from a shell, -7 from Popen), before it could score anything more.
    path = tmp_path / "judge.sqlite"
    report = report_of(run_worker(server, path, "rows:a:0:20", "fault:truncate", "rows:b:0:20", "rows:a:0:20"))
    assert report["right"] == [True] * 3
    assert report["requests"] == server.requests == 60  # the truncated answers are asked again, once
    restarted = report_of(run_worker(server, path, "rows:a:0:20", "rows:b:0:20"))
    assert restarted["right"] == [True] * 2 and restarted["cache_hits"] == 40 and server.requests == 60


def test_files_made_unwritable_mid_run(server, tmp_path):
    # With WAL this died of SIGBUS too (chattr +i on the -shm and -wal under a running process).
    folder = tmp_path / "cache"
    folder.mkdir()
    try:
        worker = run_worker(server, folder / "judge.sqlite",
                            "rows:a:0:20", "fault:immutable", "rows:b:0:20", "rows:a:0:20", "fault:mutable")  # fmt: skip
        report = report_of(worker)
    finally:
        subprocess.run(["chattr", "-R", "-i", str(folder)], capture_output=True)
    assert report["right"] == [True] * 3
    assert report["requests"] == server.requests == 40 and report["cache_hits"] == 20  # rows a: read, not asked
    [warning] = report["warnings"]
    assert "writing failed" in warning


def test_disk_filling_up_mid_run(server, tmp_path, private_tmpfs, monkeypatch):
    mount = tmp_path / "tmpfs"
    monkeypatch.setenv("JUDGE_TMPFS", str(mount))
    worker = run_worker(server, mount / "judge.sqlite",
                        "rows:a:0:20", "fault:fill", "rows:b:0:20", "rows:a:0:20", prefix=private_tmpfs)  # fmt: skip
    report = report_of(worker)
    assert report["right"] == [True] * 3
    # each new row asked exactly once (not twice, answers not thrown away); rows a come from the cache
    assert report["requests"] == server.requests == 40 and report["cache_hits"] == 20
    [warning] = report["warnings"]
    assert "writing failed (OperationalError: database or disk is full)" in warning
