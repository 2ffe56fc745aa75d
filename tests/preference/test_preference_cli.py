"""`rewardhub pairs` and `rewardhub select` as a user runs them: outputs, counts on stderr, exit codes, progress."""

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import textwrap
from pathlib import Path

import pytest
from paths import TESTS

RH = str(Path(sys.executable).with_name("rewardhub"))

# The core tests' rewards (tests/core_rewards.py), registered in the CLI process through sitecustomize.
SITE = textwrap.dedent("""
    import rewardhub, core_rewards
    core_rewards.register_all(rewardhub.registry)
""")

SCORED = [
    {"prompt": "a", "completion": "a-right", "reward": 1.0, "rewards": {"fmt": 1.0, "acc": 1.0}},
    {"prompt": "a", "completion": "a-wrong", "reward": 0.0, "rewards": {"fmt": 1.0, "acc": 0.0}},
    {"prompt": "a", "completion": "a-close", "reward": 0.6, "rewards": {"fmt": 0.0, "acc": 0.6}},
    {"prompt": "b", "completion": "b-one", "reward": 0.5, "rewards": {"fmt": 1.0, "acc": 0.5}},
    {"prompt": "b", "completion": "b-two", "reward": 0.5, "rewards": {"fmt": 1.0, "acc": 0.5}},
    {"prompt": "c", "completion": "c-best", "reward": 0.9, "rewards": {"fmt": 0.0, "acc": 0.9}},
    {"prompt": "c", "completion": "c-worst", "reward": 0.1, "rewards": {"fmt": 1.0, "acc": 0.1}},
]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "sitecustomize.py").write_text(SITE)
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(TESTS)]), OMP_NUM_THREADS="1")


@pytest.fixture
def scored(tmp_path):
    path = tmp_path / "scored.jsonl"
    write_jsonl(path, SCORED)
    return path


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def rh(env, *args, stdin=None):
    return subprocess.run([RH, *args], capture_output=True, text=True, env=env, input=stdin, timeout=120)


def test_pairs_writes_trl_rows_and_prints_drop_counts(env, scored, tmp_path):
    out = tmp_path / "pairs.jsonl"
    done = rh(env, "pairs", str(scored), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert [(p["prompt"], p["chosen"], p["rejected"]) for p in read_jsonl(out)] == [
        ("a", "a-right", "a-wrong"), ("c", "c-best", "c-worst")]
    assert done.stderr.splitlines() == [
        "read 7 rows of 3 prompts; wrote 2 pairs from 2 prompts",
        "  dropped 1: prompts whose completions all scored the same [no_signal]",
    ]


def test_pairs_options_require_margin_and_all_mode(env, scored, tmp_path):
    out = tmp_path / "pairs.jsonl"
    done = rh(env, "pairs", str(scored), "-o", str(out), "--require", "fmt>=1", "--mode", "all",
              "--min-margin", "0.5")
    assert done.returncode == 0, done.stderr
    assert [(p["chosen"], p["rejected"]) for p in read_jsonl(out)] == [("a-right", "a-wrong")]
    assert done.stderr.splitlines()[1:] == [
        "  dropped 1: prompts whose completions all scored the same [no_signal]",
        "  dropped 1: prompts where no completion that meets --require scores above another [gate]",
        "  dropped 1: pairs with a margin below --min-margin [below_margin]",
    ]


def test_pairs_stdin_to_stdout_and_quiet(env):
    done = rh(env, "pairs", "-", "--by", "acc", "--quiet", stdin="".join(json.dumps(r) + "\n" for r in SCORED))
    assert done.returncode == 0 and done.stderr == ""
    assert [json.loads(line)["chosen"] for line in done.stdout.splitlines()] == ["a-right", "c-best"]


def test_select_best_of_n_to_parquet(env, scored, tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "sft.parquet"
    done = rh(env, "select", str(scored), "-o", str(out), "--require", "fmt>=1", "--keep", "reward")
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(out).to_pylist()
    assert [(r["prompt"], r["completion"], r["score"]) for r in rows] == [
        ("a", "a-right", 1.0), ("b", "b-one", 0.5), ("c", "c-worst", 0.1)]
    assert "wrote 3 completions from 3 prompts" in done.stderr
    assert "dropped 2: completions that fail --require [gate]" in done.stderr
    assert "dropped 2: completions outranked by --top-k better ones of their prompt [not_top_k]" in done.stderr


def test_select_all_above_threshold(env, scored, tmp_path):
    out = tmp_path / "sft.jsonl"
    done = rh(env, "select", str(scored), "-o", str(out), "--all", "--min-score", "0.5")
    assert done.returncode == 0, done.stderr
    assert [r["completion"] for r in read_jsonl(out)] == ["a-right", "a-close", "b-one", "b-two", "c-best"]


def test_raw_rows_scored_with_config(env, tmp_path):
    raw = tmp_path / "raw.jsonl"
    write_jsonl(raw, [{"prompt": "1+1?", "completion": c, "solution": "2"} for c in ("2", "3", "it is 2")])
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards:\n  - name: t_contains\n    alias: correct\n  - name: t_length\n    weight: 0.1\n")
    out = tmp_path / "pairs.jsonl"
    done = rh(env, "pairs", str(raw), "-c", str(config), "-o", str(out))
    assert done.returncode == 0, done.stderr
    (pair,) = read_jsonl(out)
    assert (pair["chosen"], pair["rejected"]) == ("it is 2", "3")
    assert pair["rewards_chosen"] == {"correct": 1.0, "t_length": pytest.approx(0.7)}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--require", "fmt=>1"], "cannot read requirement 'fmt=>1': write ALIAS OP NUMBER"),
        (["--require", "style>=1"], "line 1 has no score 'style' in 'rewards' (it has: fmt, acc)"),
        (["--rescore"], "rescoring needs a reward config"),
        (["--max-pairs", "0"], "max_pairs must be a whole number >= 1"),
        (["--config", "missing.yaml"], "config file not found: missing.yaml"),
    ],
)
def test_usage_errors_exit_2_with_a_message_and_no_output(env, scored, tmp_path, args, message):
    out = tmp_path / "pairs.jsonl"
    done = rh(env, "pairs", str(scored), "-o", str(out), *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert not out.exists()


def test_raw_input_without_config_exits_2(env, tmp_path):
    raw = tmp_path / "raw.jsonl"
    write_jsonl(raw, [{"prompt": "p", "completion": "x"}])
    done = rh(env, "select", str(raw), "-o", str(tmp_path / "o.jsonl"))
    assert done.returncode == 2
    assert "line 1 has no 'reward'; pass a reward config (--config)" in done.stderr


def test_unsorted_input_exits_2_and_spill_groups_it(env, tmp_path):
    src = tmp_path / "in.jsonl"
    write_jsonl(src, [SCORED[0], SCORED[5], SCORED[1], SCORED[6]])
    out = tmp_path / "pairs.jsonl"
    done = rh(env, "pairs", str(src), "-o", str(out))
    assert done.returncode == 2
    assert "line 3: prompt 'a' appeared earlier in the input" in done.stderr and "--spill" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]
    done = rh(env, "pairs", str(src), "-o", str(out), "--spill")
    assert done.returncode == 0, done.stderr
    assert [(p["chosen"], p["rejected"]) for p in read_jsonl(out)] == [("a-right", "a-wrong"), ("c-best", "c-worst")]


def test_progress_bar_on_a_terminal_only(env, scored, tmp_path):
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # rows, columns
    try:
        done = subprocess.run([RH, "pairs", str(scored), "-o", str(tmp_path / "p.jsonl")], env=env, timeout=120,
                              stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        follower = None
        terminal = _read_all(leader)
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)
    assert done.returncode == 0
    assert "reading [" in terminal and "7/7" in terminal
    assert "wrote 2 pairs" in terminal
    piped = rh(env, "pairs", str(scored), "-o", str(tmp_path / "p.jsonl"))
    assert "reading" not in piped.stderr and "\r" not in piped.stderr
    forced = rh(env, "pairs", str(scored), "-o", str(tmp_path / "p.jsonl"), "--progress")
    assert "reading [" in forced.stderr and "7/7" in forced.stderr


def _read_all(fd) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO once the writer side is closed and drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")
