"""Pairs and selections through files: JSONL / Parquet / datasets folders, scoring raw rows, reuse, errors."""

import json

import pytest

from rewardhub import ConfigError, OutputFileError
from rewardhub.preference import (
    PairOptions,
    PreferenceError,
    SelectOptions,
    UnsortedInputError,
    write_pairs,
    write_selection,
)

# Scores a `t_contains` + 0.5 * `t_length` config gives (tests/core_rewards.py): contains 1/0, length 0.1 per char.
CONFIG = {"rewards": [{"name": "t_contains", "alias": "correct"},
                      {"name": "t_length", "alias": "long", "weight": 0.5, "params": {"per_char": 0.1}}]}
RAW = [
    {"prompt": "1+1?", "completion": "2", "solution": "2"},           # 1 + 0.05
    {"prompt": "1+1?", "completion": "three", "solution": "2"},       # 0 + 0.25
    {"prompt": "1+1?", "completion": "it is 2", "solution": "2"},     # 1 + 0.35
    {"prompt": "2+2?", "completion": "4", "solution": "4"},
    {"prompt": "2+2?", "completion": "4", "solution": "4"},
]


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_raw_rows_are_scored_with_the_config(tmp_path, core_registry):
    out = tmp_path / "pairs.jsonl"
    stats = write_pairs(write_jsonl(tmp_path / "raw.jsonl", RAW), out, PairOptions(keep=["solution"]), config=CONFIG)
    (pair,) = read_jsonl(out)
    assert (pair["prompt"], pair["chosen"], pair["rejected"], pair["solution"]) == ("1+1?", "it is 2", "three", "2")
    assert pair["score_chosen"] == pytest.approx(1.35) and pair["score_rejected"] == pytest.approx(0.25)
    assert pair["margin"] == pytest.approx(1.1)
    assert pair["rewards_chosen"] == {"correct": 1.0, "long": pytest.approx(0.7)}
    assert pair["rewards_rejected"] == {"correct": 0.0, "long": pytest.approx(0.5)}
    assert dict(stats.dropped) == {"no_signal": 1}


def test_scores_in_the_input_are_reused_unless_rescore(tmp_path, core_registry):
    # stale scores that say the opposite of what the config would give
    rows = [dict(RAW[0], reward=0.0, rewards={"correct": 0.0, "long": 0.0}),
            dict(RAW[1], reward=5.0, rewards={"correct": 1.0, "long": 0.0})]
    src = write_jsonl(tmp_path / "scored.jsonl", rows)
    out = tmp_path / "pairs.jsonl"
    write_pairs(src, out, config=CONFIG)
    assert [(p["chosen"], p["rejected"]) for p in read_jsonl(out)] == [("three", "2")]
    write_pairs(src, out, config=CONFIG, rescore=True)
    assert [(p["chosen"], p["rejected"]) for p in read_jsonl(out)] == [("2", "three")]


def test_rows_missing_a_component_are_scored_when_a_config_is_given(tmp_path, core_registry):
    rows = [dict(RAW[0], reward=9.0), dict(RAW[1], reward=0.0)]  # totals only; the gate needs 'correct'
    out = tmp_path / "pairs.jsonl"
    write_pairs(write_jsonl(tmp_path / "in.jsonl", rows), out, PairOptions(require=["correct>=1"]), config=CONFIG)
    (pair,) = read_jsonl(out)
    assert pair["chosen"] == "2" and pair["score_chosen"] == pytest.approx(1.05)  # rescored: 9.0 replaced


def test_config_must_name_the_scores_used(tmp_path, core_registry):
    with pytest.raises(ConfigError, match=r"'fmt' are not in the reward config; its aliases: correct, long"):
        write_pairs(write_jsonl(tmp_path / "raw.jsonl", RAW), tmp_path / "o.jsonl", PairOptions(by="fmt"),
                    config=CONFIG)


def test_output_folder_must_exist(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "p", "completion": "x", "reward": 1.0}])
    with pytest.raises(OutputFileError, match=r"cannot write .*out\.jsonl: folder .*missing does not exist"):
        write_pairs(src, tmp_path / "missing" / "out.jsonl")


def test_rescore_without_config_is_an_error(tmp_path):
    with pytest.raises(PreferenceError, match="rescoring needs a reward config"):
        write_pairs(write_jsonl(tmp_path / "raw.jsonl", RAW), tmp_path / "o.jsonl", rescore=True)


def test_raw_file_without_config_names_the_line(tmp_path):
    src = write_jsonl(tmp_path / "raw.jsonl", ["", *RAW])
    with pytest.raises(PreferenceError, match=r"^line 2 has no 'reward'"):
        write_pairs(src, tmp_path / "o.jsonl")
    assert not (tmp_path / "o.jsonl").exists()


def test_bad_lines_are_counted_and_reported_with_line_numbers(tmp_path):
    lines = [{"prompt": "p", "completion": "a", "reward": 1.0}, "{not json", "[1, 2]",
             {"prompt": "p", "completion": "b", "reward": 0.0}, {"prompt": "p", "reward": 0.5}]
    out = tmp_path / "pairs.jsonl"
    stats = write_pairs(write_jsonl(tmp_path / "in.jsonl", lines), out)
    assert [(p["chosen"], p["rejected"]) for p in read_jsonl(out)] == [("a", "b")]
    assert stats.dropped["invalid_row"] == 3
    assert stats.problems[0].startswith("line 2: invalid JSON")
    assert stats.problems[1] == "line 3: a row must be a JSON object, got list"
    assert stats.problems[2] == "line 5: no 'completion' (fields: prompt, reward)"


def test_unsorted_file_fails_without_leaving_output_and_spill_handles_it(tmp_path):
    rows = [{"prompt": p, "completion": f"{p}{i}", "reward": float(i)} for i, p in enumerate("abab")]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "pairs.jsonl"
    with pytest.raises(UnsortedInputError, match="line 3: prompt 'a' appeared earlier in the input"):
        write_pairs(src, out)
    assert list(tmp_path.iterdir()) == [src]  # neither the output nor a partial file
    stats = write_pairs(src, out, unsorted="spill")
    assert [(p["chosen"], p["rejected"]) for p in read_jsonl(out)] == [("a2", "a0"), ("b3", "b1")]
    assert stats.prompts == 2


def test_parquet_and_datasets_outputs_open_as_datasets(tmp_path):
    import datasets
    import pyarrow.parquet as pq

    rows = [{"prompt": "p", "completion": c, "reward": r, "rewards": {"a": r, "b": None}}
            for c, r in (("x", 1.0), ("y", 0.0))]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    write_pairs(src, tmp_path / "pairs.parquet")
    (pair,) = pq.read_table(tmp_path / "pairs.parquet").to_pylist()
    assert (pair["chosen"], pair["rejected"], pair["margin"]) == ("x", "y", 1.0)
    assert pair["rewards_chosen"] == {"a": 1.0, "b": None}

    write_pairs(src, tmp_path / "pairs_ds")
    write_pairs(src, tmp_path / "pairs_ds")  # writing again replaces the folder
    loaded = datasets.load_from_disk(str(tmp_path / "pairs_ds"))
    assert loaded.column_names[:3] == ["prompt", "chosen", "rejected"]
    assert loaded[0]["chosen"] == "x" and len(loaded) == 1


def test_selection_from_parquet_input_to_messages_folder(tmp_path):
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"prompt": "q", "completion": c, "reward": r} for c, r in (("good", 1.0), ("bad", 0.0), ("fine", 0.8))]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    stats = write_selection(tmp_path / "in.parquet", tmp_path / "sft", SelectOptions(top_k=2, format="messages"))
    loaded = datasets.load_from_disk(str(tmp_path / "sft"))
    assert [m[-1]["content"] for m in loaded["messages"]] == ["good", "fine"]
    assert loaded[0]["messages"][0] == {"role": "user", "content": "q"}
    assert dict(stats.dropped) == {"not_top_k": 1}


def test_datasets_folder_input(tmp_path):
    import datasets

    rows = [{"prompt": "q", "completion": c, "reward": r} for c, r in (("good", 1.0), ("bad", 0.0))]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "in_ds"))
    write_pairs(tmp_path / "in_ds", tmp_path / "out.jsonl")
    assert [(p["chosen"], p["rejected"]) for p in read_jsonl(tmp_path / "out.jsonl")] == [("good", "bad")]


def test_empty_result_still_writes_a_valid_file(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "p", "completion": "x", "reward": 1.0}])
    stats = write_pairs(src, tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_text() == "" and stats.dropped["too_few"] == 1


@pytest.mark.parametrize("unsorted", ["error", "spill"])
def test_jsonl_input_streams_in_bounded_memory(tmp_path, unsorted):
    """Peak Python memory stays a small fraction of the file: rows are never all loaded at once."""
    import tracemalloc

    src = tmp_path / "big.jsonl"
    with src.open("w", encoding="utf-8") as handle:
        for i in range(10_000):  # 625 prompts x 16 completions, ~5 MB
            row = {"prompt": f"prompt {i // 16} " + "x" * 100, "completion": f"c{i} " + "y" * 300,
                   "reward": (i * 7919 % 13) / 13, "rewards": {"a": 1.0, "b": (i % 3) / 2}}
            handle.write(json.dumps(row) + "\n")
    size = src.stat().st_size
    tracemalloc.start()
    try:
        stats = write_pairs(src, tmp_path / "pairs.jsonl", unsorted=unsorted)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stats.written == 625 and stats.rows == 10_000
    assert peak < size / 20, f"peak {peak} bytes for a {size}-byte file"


# majority_vote is group-aware: it must see every completion of a prompt in one scoring batch.
VOTE = {"rewards": [{"name": "majority_vote", "alias": "vote", "params": {"equivalence": "string"}}]}


def test_spilled_raw_rows_are_scored_as_whole_prompt_groups(tmp_path):
    """With --spill, rows are grouped by prompt before scoring: an interleaved file scored in input order
    would hand majority_vote one completion at a time (every completion its own majority: 1.0)."""
    answers = {"a": ["1", "1", "5"], "b": ["2", "3", "3"]}
    rows = [{"prompt": p, "completion": f"the answer is {answers[p][i]}"} for i in range(3) for p in "ab"]
    src = write_jsonl(tmp_path / "raw.jsonl", rows)
    out = tmp_path / "pairs.jsonl"
    stats = write_pairs(src, out, config=VOTE, batch_size=1, unsorted="spill")
    pairs = [(p["prompt"], p["chosen"], p["rejected"], p["margin"]) for p in read_jsonl(out)]
    assert pairs == [("a", "the answer is 1", "the answer is 5", 1.0), ("b", "the answer is 3", "the answer is 2", 1.0)]
    assert stats.prompts == 2 and not stats.dropped


def test_a_prompt_with_some_rows_unscored_is_scored_as_a_whole(tmp_path):
    """Reusing the scores of part of a prompt's rows would score the rest as a partial group."""
    rows = [
        {"prompt": "a", "completion": "the answer is 1", "reward": 1.0, "rewards": {"vote": 1.0}},
        {"prompt": "a", "completion": "the answer is 1"},
        {"prompt": "a", "completion": "the answer is 5"},
    ]
    out = tmp_path / "pairs.jsonl"
    write_pairs(write_jsonl(tmp_path / "raw.jsonl", rows), out, config=VOTE)
    (pair,) = read_jsonl(out)
    assert (pair["chosen"], pair["rejected"], pair["margin"]) == ("the answer is 1", "the answer is 5", 1.0)
