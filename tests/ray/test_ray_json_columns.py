"""rewardhub-written Parquet on the Ray path: columns rewardhub stores as JSON (``arrow.json``: text
and chat-message completions in one column, a column of numbers and text) reach the rewards as the
values ``rewardhub score`` gives them, on every path of ``score_dataset``, and the output is the
one-process output row for row (``seconds`` aside: timings differ).

Real Ray, in this process (``ray.init(num_cpus=2)``).
"""

from __future__ import annotations

import json

import pytest
import ray_cluster

import rewardhub
from rewardhub._files.io import iter_input
from rewardhub._files.score_file import score_file
from rewardhub._files.tables import rows_table, table_rows, write_table
from rewardhub.cli import main as cli

ray = pytest.importorskip("ray")
pq = pytest.importorskip("pyarrow.parquet")
import rewardhub.ray as rray  # noqa: E402

CONFIG = {"rewards": [
    {"name": "exact_match", "alias": "em"},
    {"name": "format_regex", "alias": "fmt", "weight": 0.2, "params": {"pattern": r"^The answer is \d+$"}},
    {"name": "majority_vote", "alias": "vote", "weight": 0.5, "params": {"equivalence": "string"}},
]}


def mixed_rows(prompts: int = 6, size: int = 4) -> list[dict]:
    """Even prompts are chat (messages in, messages out), odd ones plain text; a prompt's rows are
    consecutive (as the one-process path needs them); ``meta`` holds numbers and text."""
    rows = []
    for p in range(prompts):
        for k in range(size):
            answer = f"The answer is {p if k else p + 50}"
            chat = p % 2 == 0
            rows.append({
                "id": p * size + k, "solution": str(p), "meta": k if k % 2 else f"note {k}",
                "prompt": [{"role": "user", "content": f"What is {p} + 0?"}] if chat else f"What is {p} + 0?",
                "completion": [{"role": "assistant", "content": answer}] if chat else answer,
            })
    return rows


def without_seconds(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "seconds"}


@pytest.fixture(scope="module")
def local_ray():
    with ray_cluster.local_ray(num_cpus=2) as started:
        yield started


@pytest.fixture(scope="module")
def mixed_parquet(tmp_path_factory):
    """A Parquet file as rewardhub writes it, and the one-process scoring of it (by id)."""
    folder = tmp_path_factory.mktemp("mixed")
    source = folder / "rollouts.parquet"
    write_table(mixed_rows(), source, "parquet")
    schema = pq.read_schema(source)
    assert {schema.field(name).type.extension_name for name in ("completion", "prompt", "meta")} == {"arrow.json"}
    score_file(CONFIG, source, folder / "one-process.jsonl")
    expected = {r["id"]: r for r in map(json.loads, (folder / "one-process.jsonl").read_text().splitlines())}
    assert expected[0]["rewards"] == {"em": 0.0, "fmt": 1.0, "vote": 0.0}  # the odd one out of a chat group
    assert expected[1]["rewards"] == {"em": 1.0, "fmt": 1.0, "vote": 1.0}
    assert expected[5]["rewards"] == {"em": 1.0, "fmt": 1.0, "vote": 1.0}  # a text row
    return source, expected


def same_rows(got: dict[int, dict], expected: dict[int, dict]) -> None:
    assert sorted(got) == sorted(expected)
    for i, row in got.items():
        assert without_seconds(row) == without_seconds(expected[i]), (row, expected[i])
        assert set(row["seconds"]) == set(expected[i]["seconds"])


@pytest.mark.parametrize("path", ["read by Ray, cut at group boundaries", "hash-partitioned", "grouped on the driver",
                                  "ungrouped Python objects"])
def test_score_dataset_gives_rewards_the_decoded_values(local_ray, mixed_parquet, path):
    source, expected = mixed_parquet
    if path == "read by Ray, cut at group boundaries":  # what `score --ray` does with a Parquet input
        scored = rray.score_dataset(ray.data.read_parquet(str(source)), CONFIG, concurrency=2, batch_size=3)
    elif path == "hash-partitioned":  # the file as two blocks that cut a group in two
        table = pq.read_table(source)
        blocks = ray.data.from_arrow([table.slice(0, 10), table.slice(10)])
        scored = rray.score_dataset(blocks, CONFIG, concurrency=2, batch_size=3)
    elif path == "grouped on the driver":  # what `score --ray` does with rows it read itself
        rows = [record.row for record in iter_input(source)]
        scored = rray.score_dataset(rray.grouped_dataset(rows, blocks=3), CONFIG, concurrency=2, grouped=True)
    else:  # rows handed to Ray as Python objects, in one block: Ray stores the mixed columns pickled
        scored = rray.score_dataset(ray.data.from_items(mixed_rows(), override_num_blocks=1), CONFIG, concurrency=1)
    got = {}
    for batch in scored.iter_batches(batch_format="pyarrow", batch_size=None):
        got.update((row["id"], row) for row in table_rows(batch))
    same_rows(got, expected)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("source_kind", ["parquet", "jsonl"])
def test_score_on_ray_writes_what_score_writes(local_ray, mixed_parquet, tmp_path, suffix, source_kind):
    source, expected = mixed_parquet
    if source_kind == "jsonl":
        jsonl = tmp_path / "rollouts.jsonl"
        jsonl.write_text("".join(json.dumps(r) + "\n" for r in mixed_rows()))
        source = jsonl
    output = tmp_path / f"scored{suffix}"
    summary = rray.score_file(CONFIG, source, output, concurrency=2, batch_size=3)
    assert summary.rows == len(expected)
    got = {record.row["id"]: record.row for record in iter_input(output)}
    same_rows(got, expected)


def test_pairs_and_select_read_the_ray_output(local_ray, mixed_parquet, tmp_path):
    source, expected = mixed_parquet
    output = tmp_path / "scored.parquet"
    rray.score_file(CONFIG, source, output, concurrency=2, batch_size=3)
    assert output.is_dir()

    pairs = tmp_path / "pairs.jsonl"
    assert cli(["pairs", str(output), "-o", str(pairs), "-q"]) == 0
    made = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert len(made) == 6
    for pair in made:  # chat prompts give chat pairs, text prompts text pairs: the decoded values
        chat = isinstance(pair["prompt"], list)
        assert isinstance(pair["chosen"], list) == chat and isinstance(pair["rejected"], list) == chat, pair
        assert pair["chosen"] != pair["rejected"]

    best = tmp_path / "best.jsonl"
    assert cli(["select", str(output), "-o", str(best), "--keep", "id", "-q"]) == 0
    chosen = [json.loads(line) for line in best.read_text().splitlines()]
    assert len(chosen) == 6
    best_reward = {}
    for row in expected.values():
        key = json.dumps(row["prompt"])
        best_reward[key] = max(best_reward.get(key, -1e9), row["reward"])
    for row in chosen:
        assert expected[row["id"]]["reward"] == best_reward[json.dumps(expected[row["id"]]["prompt"])]
        assert row["completion"] == expected[row["id"]]["completion"]  # decoded, not JSON text


def test_blocks_of_different_types_say_how_to_build_the_dataset(local_ray):
    with pytest.raises(rewardhub.InputFileError, match="grouped_dataset"):
        rray.score_dataset(ray.data.from_items(mixed_rows()), CONFIG, concurrency=1)  # a block a row


def test_rows_table_holds_mixed_shapes_as_json_and_reads_them_back():
    rows = mixed_rows(prompts=2, size=2)
    table = rows_table(rows)
    assert table.schema.field("completion").type.extension_name == "arrow.json"
    assert str(table.schema.field("solution").type) == "string"
    assert list(table_rows(table)) == rows


def test_a_local_ray_reads_parquet_here_and_groups_it(local_ray, mixed_parquet):
    source, _ = mixed_parquet
    ds, grouped = rray.read_dataset(source, blocks=3, local=True)
    assert grouped and ds.num_blocks() == 3
    assert ds.schema().types[ds.schema().names.index("completion")].extension_name == "arrow.json"
    _, grouped = rray.read_dataset(source, local=False)  # a cluster's Ray reads it there; grouped later
    assert not grouped


# ----- rows the one-process path scores or skips: the same on the Ray path -------------------------------------
EPISODE_CONFIG = {"rewards": [{"name": "exact_match", "alias": "em"},
                              {"name": "majority_vote", "alias": "vote", "params": {"equivalence": "string"}}]}


def episode_rows() -> list[dict]:
    """Episodes (``messages``, no ``completion``): two conversations of three rows each, and a row that
    has neither (the one-process path skips it, saying why)."""
    rows = []
    for p, question in enumerate(["What is 2 + 2?", "What is 3 + 3?"]):
        for k in range(3):
            rows.append({"id": p * 3 + k, "solution": str([4, 6][p]), "meta": k if k % 2 else f"note {k}", "messages": [
                {"role": "user", "content": question},
                {"role": "assistant", "content": f"The answer is {[4, 6][p] if k else 99}"}]})
    rows.append({"id": 6, "solution": "4", "text": "neither a completion nor messages"})
    return rows


@pytest.mark.parametrize("source_kind", ["parquet", "jsonl"])
def test_episode_rows_are_scored_and_rows_with_neither_skipped_as_score_does(local_ray, tmp_path, source_kind):
    source = tmp_path / f"episodes.{source_kind}"
    if source_kind == "parquet":
        write_table(episode_rows(), source, "parquet")
    else:
        source.write_text("".join(json.dumps(r) + "\n" for r in episode_rows()))
    one = score_file(EPISODE_CONFIG, source, tmp_path / "one.jsonl")
    expected = {r["id"]: r for r in map(json.loads, (tmp_path / "one.jsonl").read_text().splitlines())}
    assert sorted(expected) == [0, 1, 2, 3, 4, 5] and expected[1]["rewards"] == {"em": 1.0, "vote": 1.0}
    assert expected[0]["rewards"] == {"em": 0.0, "vote": 0.0}  # outvoted in its conversation's group
    on_ray = rray.score_file(EPISODE_CONFIG, source, tmp_path / "ray.jsonl", concurrency=2, batch_size=2)
    same_rows({r["id"]: r for r in map(json.loads, (tmp_path / "ray.jsonl").read_text().splitlines())}, expected)
    assert on_ray.bad_rows == one.bad_rows and [(n, why[:16]) for n, why in one.bad_rows] == [(7, "no 'completion' ")]


def test_rows_ray_reads_itself_that_cannot_be_scored_are_left_out_and_reported(local_ray, tmp_path, capsys):
    """Read by Ray (a remote cluster's path): an episode row is scored, a row with neither a completion
    nor messages, or with a JSON value that does not decode, is left out and said, never a failed job."""
    source = tmp_path / "episodes.parquet"
    write_table(episode_rows(), source, "parquet")
    table = pq.read_table(source)
    broken = table.set_column(table.schema.get_field_index("meta"), "meta", pa_json_with_one_broken(table))
    pq.write_table(broken, tmp_path / "broken.parquet")
    one = score_file(EPISODE_CONFIG, tmp_path / "broken.parquet", tmp_path / "one.jsonl")
    expected = {r["id"]: r for r in map(json.loads, (tmp_path / "one.jsonl").read_text().splitlines())}
    assert len(one.bad_rows) == 2 and expected[4]["rewards"] == {"em": 1.0, "vote": 1.0}
    assert expected[1]["rewards"] == {"em": 1.0, "vote": 0.0}  # a tie with row 0, once row 2 is left out
    capsys.readouterr()
    bad_rows: list = []
    scored = rray.score_dataset(ray.data.from_arrow(broken), EPISODE_CONFIG, concurrency=1, bad_rows=bad_rows)
    got = {row["id"]: row for batch in scored.iter_batches(batch_format="pyarrow", batch_size=None)
           for row in table_rows(batch)}
    assert sorted(got) == [0, 1, 3, 4, 5]  # row 2's meta does not decode, row 6 has nothing to score
    same_rows(got, expected)
    assert sorted(why for _, why in bad_rows) == sorted(why for _, why in one.bad_rows) == [
        "column 'meta' is not valid JSON: Expecting value at column 1",
        "no 'completion' (fields: id, messages, meta, solution, text)"]
    assert capsys.readouterr().err.count("row skipped") == 2
    on_ray = rray.score_file(EPISODE_CONFIG, tmp_path / "broken.parquet", tmp_path / "ray.jsonl", concurrency=2)
    assert on_ray.bad_rows == one.bad_rows  # read and grouped here (`score --ray` on this machine): row numbers too
    same_rows({r["id"]: r for r in map(json.loads, (tmp_path / "ray.jsonl").read_text().splitlines())}, expected)


def pa_json_with_one_broken(table):
    """The table's ``meta`` column (``arrow.json``: numbers and text) with row 2's value made text that is not JSON."""
    import pyarrow as pa

    column = table.column("meta").combine_chunks()
    values = column.storage.to_pylist()
    values[2] = "not json {"
    return pa.ExtensionArray.from_storage(column.type, pa.array(values, type=column.type.storage_type))
