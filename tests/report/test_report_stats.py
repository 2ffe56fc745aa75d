"""The report's numbers, computed from small hand-made scored rows whose answers are worked out by hand."""

import json

import pytest

from rewardhub.report.stats import (
    TOTAL,
    ReportError,
    analyse,
    correlation,
    disagreements,
    extremes,
    group_reasons,
    group_spread,
    infer_weights,
    load_scored,
    prompt_groups,
    reason_pattern,
    summarise_reward,
    time_unit,
)
from rewardhub.report.training import load_trainer_state


def scored(prompt, rewards, reasons=None, total=None, seconds=None, completion="c", outcomes=None):
    row = {
        "prompt": prompt,
        "completion": completion,
        "rewards": rewards,
        "reward": total,
        "reasons": reasons or {},
        "seconds": seconds or {},
    }
    if outcomes is not None:
        row["outcomes"] = outcomes
    return row


def rows_of(*records):
    return load_scored(records).rows


def test_summary_counts_none_errors_timeouts_and_time():
    rows = rows_of(
        scored("p", {"a": 1.0}, {"a": "ok"}, seconds={"a": 0.5}),
        scored("p", {"a": 0.0}, {"a": "wrong"}, seconds={"a": 0.5}),
        scored("p", {"a": None}, {"a": "no \\boxed answer"}, seconds={"a": 0.25}),
        scored("p", {"a": None}, {"a": "error: ConnectionError: endpoint down"}, seconds={"a": 0.25},
               outcomes={"a": "error"}),
        scored("p", {"a": None}, {"a": "timeout after 5 s"}, seconds={"a": 0.25}, outcomes={"a": "timeout"}),
        scored("p", {"a": 0.0}, {"a": "timeout after 7 s"}, seconds={"a": 0.25}, outcomes={"a": "timeout"}),
    )
    summary = summarise_reward(rows, "a")
    assert summary.values == [1.0, 0.0, 0.0]
    assert summary.none_count == 3 and summary.none_fraction == 0.5
    assert summary.mean == pytest.approx(1 / 3)
    assert summary.std == pytest.approx((2 / 9) ** 0.5)
    assert (summary.minimum, summary.maximum) == (0.0, 1.0)
    assert summary.errors == 1
    assert summary.timeouts == 2  # a timeout scored as a failure (0.0) counts too
    assert summary.seconds_per_completion == pytest.approx((0.5 * 2 + 0.25 * 4) / 6)
    assert [(g.pattern, g.count) for g in summary.none_reasons] == [
        ("no \\boxed answer", 1),
        ("error: ConnectionError: endpoint down", 1),
        ("timeout after # s", 1),
    ]
    assert [(g.pattern, g.count, g.example) for g in summary.failure_reasons] == [
        ("timeout after # s", 2, "timeout after 5 s"),
        ("error: ConnectionError: endpoint down", 1, "error: ConnectionError: endpoint down"),
    ]


def test_errors_and_timeouts_come_from_outcomes_never_from_the_reason_text():
    rows = rows_of(
        scored("p", {"a": 0.0}, {"a": "wrong: the answer says 'timeout after 5 s'"}, outcomes={"a": "ok"}),
        scored("p", {"a": 1.0}, {"a": "error: looked like one, but scored"}, outcomes={"a": "ok"}),
        scored("p", {"a": None}, {"a": "timeout after 9 s"}),  # a file without outcomes: derived from the value
    )
    summary = summarise_reward(rows, "a")
    assert summary.errors == summary.timeouts == 0
    assert [r.outcomes["a"] for r in rows] == ["ok", "ok", "abstain"]


def test_reasons_group_by_pattern_with_numbers_masked():
    groups = group_reasons(["3/5 tests passed", "1/5 tests passed", "", "timeout after 2.5 s", "0/5 tests passed"])
    assert [(g.pattern, g.count, g.example) for g in groups] == [
        ("#/# tests passed", 3, "3/5 tests passed"),
        ("(no reason given)", 1, ""),
        ("timeout after # s", 1, "timeout after 2.5 s"),
    ]
    assert reason_pattern("a\n  b 12") == "a b #"


def test_total_summary_says_every_component_abstained():
    rows = rows_of(scored("p", {"a": None}, {"a": "n/a"}, total=None), scored("p", {"a": 2.0}, total=2.0))
    summary = summarise_reward(rows, TOTAL)
    assert summary.values == [2.0]
    assert [(g.pattern, g.count) for g in summary.none_reasons] == [("every component abstained", 1)]
    assert summary.errors == summary.timeouts == 0


def test_spread_counts_flat_groups_ignoring_none_and_single_completions():
    rows = rows_of(
        scored("flat", {"a": 1.0}), scored("flat", {"a": 1.0}), scored("flat", {"a": None}),
        scored("varied", {"a": 1.0}), scored("varied", {"a": 0.0}),
        scored("one value", {"a": 1.0}), scored("one value", {"a": None}),
        scored("alone", {"a": 0.5}),
        scored([{"role": "user", "content": "chat"}], {"a": 0.0}),
        scored([{"role": "user", "content": "chat"}], {"a": 0.0}),
    )
    groups = prompt_groups(rows)
    assert [len(g) for g in groups] == [3, 2, 2, 1, 2]
    spread = group_spread(groups, "a")
    assert (spread.groups, spread.flat) == (3, 2)  # flat, varied, chat; the others have < 2 values
    assert spread.flat_fraction == pytest.approx(2 / 3)
    assert spread.mean_group_std == pytest.approx((0 + 0.5 + 0) / 3)


def test_correlation_handles_constant_columns_and_missing_values():
    rows = rows_of(
        scored("p", {"a": 1.0, "b": 2.0, "c": 5.0, "d": None}),
        scored("p", {"a": 2.0, "b": 4.0, "c": 5.0, "d": 1.0}),
        scored("p", {"a": 3.0, "b": 6.5, "c": 5.0, "d": None}),
        scored("p", {"a": 4.0, "b": None, "c": 5.0, "d": 0.0}),
    )
    # shared rows: a = 1, 2, 3; b = 2, 4, 6.5 -> deviations (-1, 0, 1) and (-13, -1, 14) / 6
    assert correlation(rows, "a", "b").value == pytest.approx((27 / 6) / (2 * 366 / 36) ** 0.5)
    assert correlation(rows, "a", "b").pairs == 3
    constant = correlation(rows, "a", "c")
    assert constant.value is None and "c constant" in constant.note
    sparse = correlation(rows, "a", "d")
    assert sparse.value is None and sparse.pairs == 2 and "only 2 rows" in sparse.note
    anti = rows_of(*(scored("p", {"x": float(i), "y": -2.0 * i}) for i in range(5)))
    assert correlation(anti, "x", "y").value == pytest.approx(-1.0)


def test_disagreements_scale_each_reward_and_pick_the_largest_gaps():
    rows = rows_of(
        scored("p1", {"correct": 1.0, "length": -0.1}, {"correct": "right", "length": "short"}),
        scored("p1", {"correct": 1.0, "length": -0.9}, {"correct": "right", "length": "long"}),
        scored("p2", {"correct": 0.0, "length": -0.1}, {"correct": "wrong", "length": "short"}),
        scored("p2", {"correct": 0.0, "length": -0.5}),
        scored("p3", {"correct": None, "length": -0.1}),
    )
    examples = disagreements(rows, "correct", "length", limit=2)
    assert [(d.row.line, round(d.gap, 6), d.scaled_a, d.scaled_b) for d in examples] == [
        (2, 1.0, 1.0, 0.0),
        (3, 1.0, 0.0, 1.0),
    ]
    assert examples[0].row.reasons == {"correct": "right", "length": "long"}
    constant = rows_of(scored("p", {"a": 1.0, "b": 0.0}), scored("p", {"a": 1.0, "b": 1.0}))
    assert disagreements(constant, "a", "b") == []


def test_disagreement_examples_prefer_different_prompts():
    rows = rows_of(
        scored("p1", {"a": 1.0, "b": 0.0}),
        scored("p1", {"a": 1.0, "b": 0.0}),
        scored("p2", {"a": 0.0, "b": 0.9}),
        scored("p2", {"a": 0.5, "b": 0.5}),
    )
    assert [d.row.line for d in disagreements(rows, "a", "b", limit=2)] == [1, 3]
    assert [d.row.line for d in disagreements(rows, "a", "b", limit=3)] == [1, 2, 3]


def test_extremes_rank_by_total_without_overlap():
    rows = rows_of(*(scored("p", {"a": t}, total=t, completion=f"c{i}") for i, t in enumerate([0.5, 2.0, None, 1.0, 2.0])))
    top, bottom = extremes(rows, k=2)
    assert [r.line for r in top] == [2, 5]
    assert [r.line for r in bottom] == [1, 4]
    top, bottom = extremes(rows, k=3)
    assert [r.line for r in top] == [2, 5, 4] and [r.line for r in bottom] == [1]


def test_extremes_show_each_completion_once():
    """A degenerate output repeated across prompts used to fill the whole top list."""
    records = [scored(f"p{i}", {"a": 1.0}, total=1.0, completion="I cannot help with that.") for i in range(6)]
    records += [scored("q", {"a": 0.5}, total=0.5, completion="4"), scored("r", {"a": 0.0}, total=0.0, completion="5")]
    top, bottom = extremes(rows_of(*records), k=5)
    assert [r.completion for r in top] == ["I cannot help with that.", "4", "5"]
    assert bottom == []


def test_weights_are_solved_from_the_totals():
    records = [scored("p", {"a": a, "b": b}, total=1.0 * a + 0.25 * (b or 0.0)) for a, b in
               [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.5, None)]]
    assert infer_weights(rows_of(*records), ["a", "b"]) == {"a": 1.0, "b": 0.25}
    together = [scored("p", {"a": v, "b": v}, total=2 * v) for v in (0.0, 1.0, 0.5)]
    assert infer_weights(rows_of(*together), ["a", "b"]) is None  # only a + b is determined
    off = [scored("p", {"a": a}, total=t) for a, t in [(1.0, 1.0), (0.0, 0.3), (0.5, 0.2)]]
    assert infer_weights(rows_of(*off), ["a"]) is None  # no weight explains these totals


def test_analysis_lists_components_then_total():
    rows = [scored("p", {"a": 1.0, "b": 0.0}, total=1.0), scored("p", {"a": 0.0, "b": 1.0, "c": 0.5}, total=1.5)]
    analysis = analyse(load_scored(rows))
    assert analysis.names == ["a", "b", "c", TOTAL]
    assert [s.name for s in analysis.summaries] == ["a", "b", "c", TOTAL]
    assert analysis.summaries[2].none_count == 1  # c is missing from the first row
    assert analysis.prompts == 1 and analysis.group_sizes == {2: 1}
    assert [(p.a, p.b) for p in analysis.disagreements] == [("a", "b")]


def test_load_scored_skips_bad_rows_and_names_them(tmp_path):
    path = tmp_path / "scored.jsonl"
    lines = [
        json.dumps(scored("p", {"a": 1.0}, total=1.0)),
        "{not json",
        json.dumps({"prompt": "p", "completion": "c"}),
        json.dumps(scored("p", {"a": "high"})),
        '{"prompt": "p", "completion": "c", "rewards": {"a": NaN}, "reward": null}',
    ]
    path.write_text("\n".join(lines) + "\n")
    data = load_scored(path)
    assert [r.line for r in data.rows] == [1, 5]
    assert data.rows[1].rewards == {"a": None}  # NaN is an abstention, as in TRL
    assert data.aliases == ["a"] and data.source == str(path)
    skipped = dict(data.skipped)
    assert set(skipped) == {2, 3, 4}
    assert "invalid JSON" in skipped[2]
    assert "no `rewards` object" in skipped[3]
    assert "`rewards.a` must be a number or null, got str" in skipped[4]


def test_an_alias_may_not_take_the_totals_name():
    with pytest.raises(ReportError, match="a reward is aliased 'reward'"):
        load_scored([scored("p", {"a": 1.0, TOTAL: 0.0})])


def test_load_scored_raises_when_nothing_is_usable(tmp_path):
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"prompt": "p", "completion": "c"}) + "\n")
    with pytest.raises(ReportError, match=r"no scored rows in .*plain.jsonl \(line 1: no `rewards` object"):
        load_scored(path)
    with pytest.raises(ReportError, match="the input is empty"):
        load_scored([])


def test_trainer_state_curves(tmp_path):
    history = [
        {"step": 10, "rewards/math/mean": 0.25, "rewards/math/std": 0.1, "reward": 0.5, "frac_reward_zero_std": 0.4},
        {"step": 10, "eval_rewards/math/mean": 0.9, "eval_loss": 1.0},
        {"step": 20, "rewards/math/mean": 0.5, "rewards/format/mean": float("nan"), "reward": 0.75},
        {"step": 30, "rewards/format/mean": 1.0, "train_runtime": 3.0},
    ]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": 30, "log_history": history}))
    curves = load_trainer_state(path)
    assert curves.rewards == {"math": [(10.0, 0.25), (20.0, 0.5)], "format": [(30.0, 1.0)]}
    assert curves.total == [(10.0, 0.5), (20.0, 0.75)]
    assert curves.flat_groups == [(10.0, 0.4)]
    assert curves.source == str(path) and not curves.empty
    assert load_trainer_state({"log_history": [{"loss": 1.0}]}).empty


def test_trainer_state_curves_of_a_composite_reward():
    """A rewardhub composite logs its components as `<alias>/mean` beside `<alias>/abstained`."""
    history = [
        {"step": 1, "rewards/rewardhub/mean": 1.2, "accuracy/mean": 0.5, "accuracy/abstained": 0.0,
         "format/mean": 1.0, "format/abstained": 0.25, "entropy/mean": 3.0, "reward": 1.2},
        {"step": 2, "rewards/rewardhub/mean": 1.4, "accuracy/mean": 0.75, "accuracy/abstained": 0.0, "reward": 1.4},
    ]
    curves = load_trainer_state({"log_history": history})
    assert curves.rewards == {"rewardhub": [(1.0, 1.2), (2.0, 1.4)], "accuracy": [(1.0, 0.5), (2.0, 0.75)],
                              "format": [(1.0, 1.0)]}  # "entropy/mean" has no "/abstained" twin: not a reward


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "trainer state not found"),
        ("{oops", "cannot read trainer state"),
        ('{"global_step": 3}', "has no `log_history` list"),
    ],
)
def test_trainer_state_errors(tmp_path, content, message):
    path = tmp_path / "trainer_state.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReportError, match=message):
        load_trainer_state(path)


@pytest.mark.parametrize(
    ("seconds", "expected"), [(2.5, (1.0, "s")), (0.25, (1e3, "ms")), (0.001, (1e3, "ms")), (3e-6, (1e6, "µs"))]
)
def test_time_unit(seconds, expected):
    assert time_unit(seconds) == expected
