"""Parquet and datasets outputs of mixed shapes (a map column, ints mixed with text, text mixed with
chat messages) for score, pairs and select, read back by rewardhub's own readers; Parquet streamed
a row group per batch; a failed write keeps the rows."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from rewardhub._files.io import iter_input  # noqa: E402
from rewardhub._files.score_file import score_file  # noqa: E402
from rewardhub._files.tables import write_table  # noqa: E402
from rewardhub.errors import OutputFileError  # noqa: E402
from rewardhub.preference import PairOptions, SelectOptions, write_pairs, write_selection  # noqa: E402
from rewardhub.report.page import write_report  # noqa: E402

CONFIG = {"rewards": [{"name": "exact_match"}]}


def _rows(shape):
    """Four prompts x two completions (one right, one wrong) with the column of ``shape`` mixed."""
    rows = []
    for i in range(8):
        right = i % 2 == 0
        text = r"\boxed{42}" if right else r"\boxed{41}"
        row = {"prompt": f"q{i // 2}", "completion": text, "solution": "42"}
        if shape == "mixed_solution":
            row["solution"] = 42 if i % 4 < 2 else "42"
        elif shape == "text_and_messages":
            row["completion"] = [{"role": "assistant", "content": text}] if i % 4 < 2 else text
        elif shape == "map":
            row["meta"] = {f"k{i}": i}  # a Parquet map column: different keys in every row
        rows.append(row)
    return rows


def _source(tmp_path, shape):
    """The input file: Parquet with a real map column for "map", else JSONL."""
    rows = _rows(shape)
    if shape == "map":
        path = tmp_path / "in.parquet"
        meta = pa.array([list(r["meta"].items()) for r in rows], type=pa.map_(pa.string(), pa.int64()))
        table = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "meta"} for r in rows]).append_column("meta", meta)
        pq.write_table(table, path)
    else:
        path = tmp_path / "in.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def _read(path):
    records = list(iter_input(path))
    assert all(r.error is None for r in records), [r.error for r in records if r.error]
    return [r.row for r in records]


SHAPES = ["mixed_solution", "text_and_messages", "map"]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("suffix", [".parquet", ""])
def test_score_writes_mixed_shapes_and_reads_them_back(tmp_path, shape, suffix):
    source, rows = _source(tmp_path, shape)
    out = tmp_path / f"scored{suffix}"
    summary = score_file(CONFIG, source, out)
    assert summary.rows == 8
    back = _read(out)
    assert [r["rewards"]["exact_match"] for r in back] == [1.0, 0.0] * 4
    for given, got in zip(rows, back, strict=True):
        assert (got["completion"], got["solution"]) == (given["completion"], given["solution"])  # 42 stays an int
        if shape == "map":  # the map reads as a dict, stored as a struct of every row's keys (null where a row has none)
            assert {k: v for k, v in got["meta"].items() if v is not None} == given["meta"]
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name or "rescued" in p.name] == []


@pytest.mark.parametrize("shape", SHAPES)
def test_pairs_and_select_write_mixed_shapes_and_read_each_others_output(tmp_path, shape):
    source, rows = _source(tmp_path, shape)
    scored = tmp_path / "scored.parquet"
    score_file(CONFIG, source, scored)
    keep = ["solution"] + (["meta"] if shape == "map" else [])
    write_pairs(scored, tmp_path / "pairs", PairOptions(keep=keep))  # the README's `pairs -o pairs/`
    pairs = _read(tmp_path / "pairs")
    assert [(p["chosen"], p["rejected"]) for p in pairs] == [(rows[i]["completion"], rows[i + 1]["completion"])
                                                             for i in range(0, 8, 2)]
    assert [p["solution"] for p in pairs] == [rows[i]["solution"] for i in range(0, 8, 2)]
    selected = tmp_path / "sft.parquet"
    write_selection(scored, selected, SelectOptions(top_k=1, keep=keep))
    back = _read(selected)
    assert [r["completion"] for r in back] == [rows[i]["completion"] for i in range(0, 8, 2)]
    write_report(scored, tmp_path / "report.html")  # the report reads the scored Parquet too
    assert "exact_match" in (tmp_path / "report.html").read_text()


def test_datasets_sees_a_json_column_as_its_values(tmp_path):
    import datasets

    source, rows = _source(tmp_path, "text_and_messages")
    score_file(CONFIG, source, tmp_path / "scored")
    loaded = datasets.load_from_disk(str(tmp_path / "scored"))
    assert isinstance(loaded.features["completion"], datasets.Json)
    assert loaded["completion"] == [r["completion"] for r in rows]
    parquet = tmp_path / "scored.parquet"
    score_file(CONFIG, source, parquet)
    assert datasets.Dataset.from_parquet(str(parquet), cache_dir=str(tmp_path / "cache"))["completion"] == \
        [r["completion"] for r in rows]


def test_cli_pairs_to_a_folder_with_text_and_messages(tmp_path):
    source, rows = _source(tmp_path, "text_and_messages")
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards:\n  - name: exact_match\n")
    rh = str(Path(sys.executable).with_name("rewardhub"))
    result = subprocess.run([rh, "pairs", "-c", str(config), str(source), "-o", str(tmp_path / "pairs"), "-q"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert [p["chosen"] for p in _read(tmp_path / "pairs")] == [rows[i]["completion"] for i in range(0, 8, 2)]


def test_a_later_batch_widens_the_staged_rows(tmp_path):
    """The type follows the whole file, not the first batch: a batch that needs a wider type (a first
    non-null value, a new key, a float after ints, text after ints, a new column) rewrites the rows before it."""
    rows = [{"note": None, "meta": {"a": 1}, "n": 1, "answer": 7} for _ in range(10)]
    rows += [{"note": "late", "meta": {"a": 2, "b": "x"}, "n": 2.5, "answer": "seven", "extra": [1]} for _ in range(10)]
    out = tmp_path / "wide.parquet"
    assert write_table(iter(rows), out, "parquet", rows_per_group=5) == 20
    schema = pq.ParquetFile(out).schema_arrow
    assert str(schema.field("note").type) == "string" and str(schema.field("n").type) == "double"
    assert schema.field("meta").type == pa.struct([("a", pa.int64()), ("b", pa.string())])
    assert isinstance(schema.field("answer").type, pa.JsonType)
    back = _read(out)
    assert [r["answer"] for r in back] == [7] * 10 + ["seven"] * 10
    assert back[0]["meta"] == {"a": 1, "b": None} and back[19]["meta"] == {"a": 2, "b": "x"}
    assert [r["extra"] for r in back] == [None] * 10 + [[1]] * 10
    assert pq.ParquetFile(out).num_row_groups == 4


def test_parquet_streams_a_row_group_per_batch(tmp_path):
    """Row groups reach the staged file while rows are still coming, and the file has one per batch."""
    out = tmp_path / "big.parquet"
    sizes = []

    def rows():
        for i in range(1000):
            if i in (300, 900):
                (staged,) = [p for p in tmp_path.rglob("big.parquet") if "partial" in str(p)]
                sizes.append(staged.stat().st_size)
            yield {"prompt": f"p{i}", "completion": "x" * 200, "n": i}

    assert write_table(rows(), out, "parquet", rows_per_group=100) == 1000
    assert pq.ParquetFile(out).num_row_groups == 10
    assert 0 < sizes[0] < sizes[1], sizes  # written as it goes, not at the end
    assert [r["n"] for r in _read(out)] == list(range(1000))


def test_score_cli_writes_several_row_groups(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"prompt": f"q{i}", "completion": "42", "solution": "42"}) + "\n"
                              for i in range(9000)))
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards:\n  - name: exact_match\n")
    out = tmp_path / "scored.parquet"
    rh = str(Path(sys.executable).with_name("rewardhub"))
    result = subprocess.run([rh, "score", "-c", str(config), str(source), "-o", str(out), "-q"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    parquet = pq.ParquetFile(out)
    assert parquet.num_row_groups >= 3 and parquet.metadata.num_rows == 9000


@pytest.mark.parametrize("kind, name", [("parquet", "out.parquet"), ("dataset", "out")])
def test_a_failure_mid_run_leaves_no_file_and_the_previous_one_intact(tmp_path, kind, name):
    out = tmp_path / name
    out.write_bytes(b"previous run")

    def rows():
        for i in range(250):
            yield {"n": i}
        raise RuntimeError("scoring broke")

    with pytest.raises(RuntimeError, match="scoring broke"):
        write_table(rows(), out, kind, rows_per_group=100)
    assert out.read_bytes() == b"previous run"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_write_that_still_fails_keeps_every_row_as_jsonl(tmp_path, capfd):
    """Rows the writer cannot take (here: a value no Arrow type or JSON encoding holds) go, with the
    rows already staged and the rows still to come, to a JSONL file beside the target; the error says where."""

    class Unwritable:
        def tolist(self):
            raise RuntimeError("cannot be encoded")

    rows = [{"n": i, "v": "fine"} for i in range(150)] + [{"n": 150, "v": Unwritable()}] + \
           [{"n": i, "v": "fine"} for i in range(151, 400)]
    out = tmp_path / "out.parquet"
    with pytest.raises(OutputFileError, match=r"The 399 rows are in .*out\.parquet\.rescued\.jsonl"):
        write_table(iter(rows), out, "parquet", rows_per_group=100)
    assert "writing the rows as JSONL" in capfd.readouterr().err
    rescued = [json.loads(line) for line in (tmp_path / "out.parquet.rescued.jsonl").read_text().splitlines()]
    assert [r["n"] for r in rescued] == [n for n in range(400) if n != 150]
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_empty_output_is_a_valid_parquet_file(tmp_path):
    out = tmp_path / "none.parquet"
    assert write_table(iter([]), out, "parquet") == 0
    assert pq.ParquetFile(out).metadata.num_rows == 0 and list(iter_input(out)) == []


def test_a_parquet_json_column_that_is_not_json_is_a_bad_row(tmp_path):
    path = tmp_path / "odd.parquet"
    pq.write_table(pa.table({"prompt": ["q", "q"], "completion": pa.array(['"ok"', "{oops"], type=pa.json_())}), path)
    records = list(iter_input(path))
    assert records[0].row == {"prompt": "q", "completion": "ok"}
    assert records[1].row is None and "column 'completion' is not valid JSON" in records[1].error
    assert os.path.exists(path)
