"""rewardhub.ray on real Ray: ``score_dataset`` in-process (``ray.init(num_cpus=2)``), and
``rewardhub score --ray ADDRESS`` against a cluster started with ``ray start --head`` on loopback.

Rows are shuffled so that a prompt's completions are scattered through the input: majority votes
equal to a one-process scoring of whole groups show that no group was ever split across batches.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest
import ray_cluster
from ray_cluster import RAY_ENV, ray_head

import rewardhub

ray = pytest.importorskip("ray")
import rewardhub.ray as rray  # noqa: E402

CONFIG = {"rewards": [
    {"name": "majority_vote", "alias": "vote", "params": {"equivalence": "string"}},
    {"name": "exact_match", "alias": "em", "weight": 0.5},
]}


def vote_rows(prompts: int = 12, size: int = 4, seed: int = 0) -> list[dict]:
    """``prompts`` x ``size`` rows; prompt p's majority answer is p (3 of 4), the odd one out p + 50."""
    rows = [{"id": p * size + k, "prompt": f"What is {p} + 0?", "completion": f"answer {p if k else p + 50}",
             "solution": str(p)} for p in range(prompts) for k in range(size)]
    random.Random(seed).shuffle(rows)
    return rows


def reference(rows: list[dict]) -> dict[int, dict]:
    """One process, each prompt's rows together: what a correct grouping must reproduce."""
    whole = sorted(rows, key=lambda r: r["id"])
    return {r["id"]: r for r in rewardhub.load(CONFIG).score(whole)}


@pytest.fixture(scope="module")
def local_ray():
    with ray_cluster.local_ray(num_cpus=2) as started:
        yield started


@pytest.mark.parametrize("path", ["hash-partitioned", "grouped on the driver"])
def test_groups_meet_in_one_batch_however_the_input_is_ordered(local_ray, path):
    rows = vote_rows()
    if path == "hash-partitioned":
        scored = rray.score_dataset(ray.data.from_items(rows), CONFIG, concurrency=2, batch_size=3, partitions=3)
    else:  # what `rewardhub score --ray` does with a JSONL file: blocks of whole groups, no shuffle
        ds = rray.grouped_dataset(rows, blocks=3)
        assert ds.num_blocks() == 3
        scored = rray.score_dataset(ds, CONFIG, concurrency=2, batch_size=3, grouped=True)
    out = {r["id"]: r for r in scored.take_all()}
    expected = reference(rows)
    assert sorted(out) == sorted(expected)
    for i, row in out.items():
        assert row["rewards"] == expected[i]["rewards"], (row, expected[i])
        assert row["reward"] == expected[i]["reward"]
        assert row["reasons"] == expected[i]["reasons"]
        assert row["outcomes"] == expected[i]["outcomes"]
    assert sum(r["rewards"]["vote"] == 1.0 for r in out.values()) == 36  # 3 of each 4 agree with the majority


def test_same_columns_as_rewardhub_score_and_nulls_typed(local_ray):
    rows = [{"prompt": "p", "completion": "answer 1", "solution": "1"},
            {"prompt": "q", "completion": [{"role": "assistant", "content": "answer 2"}], "solution": "2"},
            {"prompt": "r", "completion": None, "solution": "3"}]  # no completion: skipped, as `score` does
    config = {"rewards": [{"name": "exact_match", "alias": "em"},
                          {"name": "format_regex", "alias": "fmt", "params": {"pattern": "^<think>"}}]}
    ds = rray.grouped_dataset(rows, blocks=2)  # completions as text and as messages: a JSON column
    scored = rray.score_dataset(ds, config, concurrency=1, grouped=True)
    out = sorted(scored.take_all(), key=lambda r: r["prompt"])
    expected = rewardhub.load(config).score(rows[:2])
    assert [r["prompt"] for r in out] == ["p", "q"]
    for got, want in zip(out, expected, strict=True):
        assert set(got) == set(want)
        assert {k: got[k] for k in ("rewards", "reward", "reasons", "outcomes")} == \
               {k: want[k] for k in ("rewards", "reward", "reasons", "outcomes")}
    schema = scored.schema()
    assert str(schema.types[schema.names.index("reward")]) == "double"


def test_a_bad_config_fails_on_the_driver_with_its_message(local_ray):
    with pytest.raises(rewardhub.UnknownRewardError, match="exact_match"):
        rray.score_dataset(ray.data.from_items([{"prompt": "p", "completion": "c"}]),
                           {"rewards": [{"name": "exact_mach"}]})


def test_score_dataset_without_completion_column_says_so(local_ray):
    with pytest.raises(Exception, match="completion"):
        rray.score_dataset(ray.data.from_items([{"prompt": "p", "text": "c"}]), CONFIG).take_all()


def test_cli_on_a_ray_cluster_then_pairs_reads_the_parquet_folder(tmp_path):
    rows = vote_rows(prompts=6)
    source = tmp_path / "rollouts.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(CONFIG))
    output = tmp_path / "scored.parquet"
    env = {**os.environ, **RAY_ENV}
    with ray_head() as address:
        done = subprocess.run([sys.executable, "-m", "rewardhub.cli", "score", "--ray", address, "--config",
                               str(config), str(source), "-o", str(output), "--actors", "2", "--batch-size", "4"],
                              capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "line 25" in done.stderr and "row skipped" in done.stderr  # the bad line, reported as `score` does
    assert "scored 24 rows" in done.stderr
    assert output.is_dir() and any(p.suffix == ".parquet" for p in output.iterdir())
    expected = reference(rows)
    from rewardhub._files.io import iter_input

    got = {rec.row["id"]: rec.row for rec in iter_input(output)}
    assert {i: r["rewards"] for i, r in got.items()} == {i: r["rewards"] for i, r in expected.items()}

    pairs = tmp_path / "pairs.jsonl"
    done = subprocess.run([sys.executable, "-m", "rewardhub.cli", "pairs", str(output), "-o", str(pairs)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    made = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert len(made) == 6 and all(p["chosen"] != p["rejected"] for p in made)

    best = tmp_path / "best.jsonl"
    done = subprocess.run([sys.executable, "-m", "rewardhub.cli", "select", str(output), "-o", str(best), "--keep", "id"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    chosen = [json.loads(line) for line in best.read_text().splitlines()]
    best_reward = {r["prompt"]: max(o["reward"] for o in expected.values() if o["prompt"] == r["prompt"]) for r in rows}
    assert len(chosen) == 6 and len({expected[r["id"]]["prompt"] for r in chosen}) == 6  # one per prompt
    assert all(expected[r["id"]]["reward"] == best_reward[expected[r["id"]]["prompt"]] for r in chosen)


def test_blocks_of_whole_groups_are_cut_not_shuffled(local_ray):
    """Blocks that each hold whole groups are scored where they lie (a block larger than its share cut
    at group boundaries); blocks that split a group are hash-partitioned."""
    pa = pytest.importorskip("pyarrow")
    rows = vote_rows()
    by_prompt = sorted(rows, key=lambda r: r["id"])
    whole = [pa.Table.from_pylist(by_prompt[:24]), pa.Table.from_pylist(by_prompt[24:])]
    spread = [pa.Table.from_pylist(rows[0::2]), pa.Table.from_pylist(rows[1::2])]  # shuffled: groups in both
    light = {"batch_format": "pyarrow", "batch_size": None}

    def keyed(tables):
        return ray.data.from_arrow(tables).map_batches(rray._keyed, **light).materialize()

    assert rray.whole_group_blocks(ray, keyed(spread), pieces=4) is None
    cut = rray.whole_group_blocks(ray, keyed(whole), pieces=6)
    assert cut is not None and cut.num_blocks() >= 6
    key_sets = [set(block.column(rray.GROUP_KEY).to_pylist())
                for block in cut.iter_batches(batch_format="pyarrow", batch_size=None)]
    keys = [key for key_set in key_sets for key in key_set]
    assert len(keys) == len(set(keys)) == 12  # each group in one block only
    expected = reference(rows)
    for tables in (whole, spread):
        scored = rray.score_dataset(ray.data.from_arrow(tables), CONFIG, concurrency=2, batch_size=3)
        assert {r["id"]: r["rewards"] for r in scored.take_all()} == {i: r["rewards"] for i, r in expected.items()}
