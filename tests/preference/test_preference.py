"""Preference pairs and SFT selections from rows with known scores: exact pairs, margins, drops and reasons."""

import itertools
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardhub.preference import (
    PairOptions,
    PreferenceError,
    Requirement,
    SelectOptions,
    Stats,
    UnsortedInputError,
    iter_pairs,
    iter_selected,
    pairs_for_prompt,
    select_for_prompt,
)


def scored(prompt, completion, reward, **rewards):
    return {"prompt": prompt, "completion": completion, "reward": reward, "rewards": rewards}


def group(prompt, *scores):
    """Completions c0, c1, ... of one prompt with the given totals (and a 'fmt' component = 1)."""
    return [scored(prompt, f"{prompt}-c{i}", s, fmt=1.0) for i, s in enumerate(scores)]


def brief(pairs):
    return [(p["chosen"], p["rejected"], round(p["margin"], 6)) for p in pairs]


# --- pairs ------------------------------------------------------------------------------------------


def test_best_worst_pairs_exact_values_and_drop_reasons():
    rows = [
        *group("a", 0.2, 0.9, 0.5),          # best c1 vs worst c0
        *group("b", 1.0, 1.0, 1.0),          # every completion the same: no signal
        *group("c", 0.7),                    # one completion
        *group("d", 0.0, None, 1.0),         # c1 abstained: dropped, c2 vs c0 still paired
        *group("e", 0.3, 0.5),               # margin 0.2 < 0.25
    ]
    stats = Stats()
    pairs = list(iter_pairs(rows, PairOptions(min_margin=0.25), stats=stats))
    assert brief(pairs) == [("a-c1", "a-c0", 0.7), ("d-c2", "d-c0", 1.0)]
    first = pairs[0]
    assert first["prompt"] == "a"
    assert (first["score_chosen"], first["score_rejected"]) == (0.9, 0.2)
    assert first["rewards_chosen"] == {"fmt": 1.0} and first["rewards_rejected"] == {"fmt": 1.0}
    assert dict(stats.dropped) == {"no_signal": 1, "too_few": 1, "no_score": 1, "below_margin": 1}
    assert (stats.rows, stats.prompts, stats.written, stats.prompts_written) == (12, 5, 2, 2)


def test_margin_equal_to_the_minimum_is_kept_despite_float_rounding():
    # 0.7 - 0.2 == 0.49999999999999994 in binary floating point
    pairs = list(iter_pairs(group("p", 0.2, 0.7), PairOptions(min_margin=0.5)))
    assert brief(pairs) == [("p-c1", "p-c0", 0.5)]


def test_equal_best_and_worst_are_broken_by_input_order():
    pairs = list(iter_pairs(group("p", 0.0, 1.0, 0.0, 1.0)))
    assert brief(pairs) == [("p-c1", "p-c0", 1.0)]


def test_all_mode_every_pair_above_the_margin_largest_first_ties_counted():
    stats = Stats()
    pairs = list(iter_pairs(group("p", 3.0, 2.0, 2.0, 0.0), PairOptions(mode="all"), stats=stats))
    assert brief(pairs) == [
        ("p-c0", "p-c3", 3.0), ("p-c1", "p-c3", 2.0), ("p-c2", "p-c3", 2.0),
        ("p-c0", "p-c1", 1.0), ("p-c0", "p-c2", 1.0),
    ]
    assert dict(stats.dropped) == {"tie": 1}


def test_all_mode_min_margin_and_max_pairs():
    stats = Stats()
    options = PairOptions(mode="all", min_margin=1.5, max_pairs=2)
    pairs = list(iter_pairs(group("p", 3.0, 2.0, 2.0, 0.0), options, stats=stats))
    assert brief(pairs) == [("p-c0", "p-c3", 3.0), ("p-c1", "p-c3", 2.0)]
    assert dict(stats.dropped) == {"tie": 1, "below_margin": 2, "max_pairs": 1}


def test_require_picks_the_best_completion_that_passes_the_gate():
    rows = [
        scored("p", "right but unformatted", 1.0, fmt=0.0, acc=1.0),
        scored("p", "formatted", 0.6, fmt=1.0, acc=0.5),
        scored("p", "wrong", 0.0, fmt=1.0, acc=0.0),
    ]
    pairs = list(iter_pairs(rows, PairOptions(require=["fmt>=1"])))
    assert brief(pairs) == [("formatted", "wrong", 0.6)]
    # the gate applies to the chosen side only: the unformatted one may still be rejected
    pairs = list(iter_pairs(rows, PairOptions(by="fmt", require="acc>0")))
    assert brief(pairs) == [("formatted", "right but unformatted", 1.0)]


@pytest.mark.parametrize("mode", ["best-worst", "all"])
def test_prompts_where_nothing_that_passes_the_gate_beats_anything_are_counted(mode):
    no_pass = [scored("q", "x", 1.0, fmt=0.0), scored("q", "y", 0.0, fmt=0.0)]
    only_worst_passes = [scored("r", "x", 1.0, fmt=0.0), scored("r", "y", 0.0, fmt=1.0)]
    passing_tie_for_worst = [scored("s", "x", 1.0, fmt=0.0), scored("s", "y", 0.5, fmt=1.0),
                             scored("s", "z", 0.5, fmt=1.0)]
    stats = Stats()
    rows = no_pass + only_worst_passes + passing_tie_for_worst
    assert list(iter_pairs(rows, PairOptions(require=["fmt==1"], mode=mode), stats=stats)) == []
    assert dict(stats.dropped) == {"gate": 3}


def test_abstaining_gate_component_does_not_pass():
    rows = [scored("p", "x", 1.0, fmt=None), scored("p", "y", 0.0, fmt=1.0)]
    stats = Stats()
    assert list(iter_pairs(rows, PairOptions(require="fmt>=0"), stats=stats)) == []
    assert stats.dropped == Counter({"gate": 1})


def test_conversational_rows_give_conversational_pairs():
    prompt = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "2+2?"}]
    rows = [
        {"prompt": prompt, "completion": [{"role": "assistant", "content": "4"}], "reward": 1.0},
        {"prompt": prompt, "completion": [{"role": "assistant", "content": "5"}], "reward": 0.0},
    ]
    (pair,) = iter_pairs(rows)
    assert pair["prompt"] == prompt
    assert pair["chosen"] == [{"role": "assistant", "content": "4"}]
    assert pair["rejected"] == [{"role": "assistant", "content": "5"}]
    assert pair["rewards_chosen"] is None  # the rows had no components


def test_plain_prompt_with_message_completions_is_wrapped_as_a_user_turn():
    rows = [
        {"prompt": "2+2?", "completion": [{"role": "assistant", "content": "4"}], "reward": 1.0},
        {"prompt": "2+2?", "completion": [{"role": "assistant", "content": "5"}], "reward": 0.0},
    ]
    (pair,) = iter_pairs(rows)
    assert pair["prompt"] == [{"role": "user", "content": "2+2?"}]


def test_keep_copies_prompt_level_columns_from_the_chosen_row():
    rows = [dict(r, solution="42", id=i) for i, r in enumerate(group("p", 0.0, 1.0))]
    (pair,) = iter_pairs(rows, PairOptions(keep=["solution", "id", "absent"]))
    assert (pair["solution"], pair["id"], pair["absent"]) == ("42", 1, None)


def test_ranking_by_a_component():
    rows = [scored("p", "x", 0.9, acc=0.0), scored("p", "y", 0.1, acc=1.0)]
    (pair,) = iter_pairs(rows, PairOptions(by="acc"))
    assert (pair["chosen"], pair["rejected"], pair["margin"]) == ("y", "x", 1.0)


def test_pairs_for_prompt_on_one_group():
    dropped = Counter()
    out = pairs_for_prompt(group("p", 0.1, 0.4), PairOptions(), dropped)
    assert brief(out) == [("p-c1", "p-c0", 0.3)] and not dropped


# --- input checks -------------------------------------------------------------------------------------


def test_rows_without_scores_need_a_config():
    rows = [{"prompt": "p", "completion": "x"}]
    with pytest.raises(PreferenceError, match=r"row 1 has no 'reward'.*--config"):
        list(iter_pairs(rows))


def test_missing_component_names_the_available_ones():
    with pytest.raises(PreferenceError, match=r"row 1 has no score 'fmt' in 'rewards' \(it has: acc\)"):
        list(iter_pairs([scored("p", "x", 1.0, acc=1.0)], PairOptions(require=["fmt>=1"])))


def test_invalid_rows_are_counted_with_their_position_and_the_rest_is_used():
    rows = [*group("p", 0.0, 1.0), {"prompt": "q"}, "not a row"]
    stats = Stats()
    assert len(list(iter_pairs(rows, stats=stats))) == 1
    assert stats.dropped == Counter({"invalid_row": 2})
    assert stats.problems == ["row 3: no 'completion' (fields: prompt)", "row 4: a row must be a mapping, got str"]


def test_a_prompt_reappearing_later_is_an_error_naming_the_row():
    rows = [*group("a", 0.0, 1.0), *group("b", 0.0, 1.0), *group("a", 0.5)]
    with pytest.raises(UnsortedInputError, match=r"row 5: prompt 'a' appeared earlier in the input.*--spill"):
        list(iter_pairs(rows))


def test_spill_groups_any_order_in_first_seen_order():
    rows = [scored("a", "a0", 0.0), scored("b", "b0", 0.0), scored("a", "a1", 1.0), scored("b", "b1", 2.0)]
    stats = Stats()
    pairs = list(iter_pairs(rows, PairOptions(), stats=stats, unsorted="spill"))
    assert brief(pairs) == [("a1", "a0", 1.0), ("b1", "b0", 2.0)]
    assert (stats.rows, stats.prompts) == (4, 2)


def test_input_streams_one_prompt_at_a_time():
    """An endless input still yields pairs: nothing waits for the end of the input."""
    endless = (r for i in itertools.count() for r in group(f"p{i}", 0.0, float(i + 1)))
    first = list(itertools.islice(iter_pairs(endless), 3))
    assert [p["prompt"] for p in first] == ["p0", "p1", "p2"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("format>=1", ("format", ">=", 1.0)), (" math == 1 ", ("math", "==", 1.0)), ("a.b<-0.5", ("a.b", "<", -0.5)),
     ("reward!=0", ("reward", "!=", 0.0)), ("x>1e-3", ("x", ">", 0.001))],
)
def test_requirement_syntax(text, expected):
    req = Requirement.parse(text)
    assert (req.score, req.op, req.threshold) == expected


@pytest.mark.parametrize("text", ["format", "format=>1", ">=1", "format>=one", "format>=nan", "a b>=1"])
def test_bad_requirement_says_how_to_write_one(text):
    with pytest.raises(PreferenceError, match="write ALIAS OP NUMBER"):
        Requirement.parse(text)


def test_requirement_checks_values():
    req = Requirement.parse("fmt>0.5")
    assert req.met_by({"rewards": {"fmt": 1}}) and not req.met_by({"rewards": {"fmt": 0.5}})
    assert not req.met_by({"rewards": {"fmt": None}}) and not req.met_by({"rewards": {}})
    assert Requirement.parse("reward>=1").met_by({"reward": 1.0, "rewards": {}})
    # the same tolerance as margins: 0.1 + 0.2 == 0.30000000000000004
    sum_row = {"rewards": {"acc": 0.1 + 0.2}}
    assert Requirement.parse("acc>=0.3").met_by(sum_row) and Requirement.parse("acc==0.3").met_by(sum_row)
    assert not Requirement.parse("acc>0.3").met_by(sum_row) and Requirement.parse("acc<=0.3").met_by(sum_row)
    assert not Requirement.parse("acc!=0.3").met_by(sum_row) and not Requirement.parse("acc<0.3").met_by(sum_row)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"mode": "best"}, "unknown pair mode"), ({"min_margin": -1}, "min_margin"), ({"max_pairs": 0}, "max_pairs"),
     ({"keep": ["chosen"]}, "already has"), ({"by": ""}, "'by'")],
)
def test_bad_pair_options(kwargs, message):
    with pytest.raises(PreferenceError, match=message):
        PairOptions(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"top_k": 0}, "top_k"), ({"min_score": float("inf")}, "min_score"), ({"format": "chat"}, "unknown format")],
)
def test_bad_select_options(kwargs, message):
    with pytest.raises(PreferenceError, match=message):
        SelectOptions(**kwargs)


def test_unknown_unsorted_policy():
    with pytest.raises(PreferenceError, match="unsorted"):
        list(iter_pairs(group("p", 0.0, 1.0), unsorted="sort"))


# --- selection ----------------------------------------------------------------------------------------


def test_best_of_n_keeps_the_best_per_prompt_ties_by_input_order():
    stats = Stats()  # the kind follows the options
    rows = [*group("a", 0.2, 0.9, 0.9), *group("b", None, 0.1)]
    out = list(iter_selected(rows, stats=stats))
    assert [(r["prompt"], r["completion"], r["score"]) for r in out] == [("a", "a-c1", 0.9), ("b", "b-c1", 0.1)]
    assert out[0]["rewards"] == {"fmt": 1.0}
    assert dict(stats.dropped) == {"not_top_k": 2, "no_score": 1}
    assert "wrote 2 completions from 2 prompts" in stats.summary()


def test_threshold_and_gate_selection_with_counts():
    rows = [
        scored("a", "good", 1.0, fmt=1.0), scored("a", "good unformatted", 1.0, fmt=0.0),
        scored("a", "ok", 0.5, fmt=1.0), scored("a", "bad", 0.1, fmt=1.0),
        scored("b", "bad", 0.0, fmt=1.0),
    ]
    stats = Stats("select")
    options = SelectOptions(top_k=None, min_score=0.5, require=["fmt>=1"])
    out = list(iter_selected(rows, options, stats=stats))
    assert [(r["prompt"], r["completion"]) for r in out] == [("a", "good"), ("a", "ok")]
    assert dict(stats.dropped) == {"gate": 1, "below_threshold": 2}
    assert (stats.prompts, stats.prompts_written, stats.written) == (2, 1, 2)
    assert "wrote 2 completions from 1 prompts" in stats.summary()
    assert "dropped 2: completions scoring below --min-score [below_threshold]" in stats.summary()


def test_top_k_after_threshold():
    dropped = Counter()
    out = select_for_prompt(group("p", 0.1, 0.8, 0.9, 0.7), SelectOptions(top_k=2, min_score=0.75), dropped)
    assert [r["completion"] for r in out] == ["p-c2", "p-c1"]
    assert dict(dropped) == {"below_threshold": 2}


def test_messages_format_joins_prompt_and_completion():
    prompt = [{"role": "user", "content": "hi"}]
    rows = [{"prompt": prompt, "completion": "hello", "reward": 1.0, "topic": "greeting"}]
    (row,) = iter_selected(rows, SelectOptions(format="messages", keep=["topic"]))
    assert row == {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        "score": 1.0, "rewards": None, "topic": "greeting",
    }
    (row,) = iter_selected(rows)
    assert row["prompt"] == prompt and row["completion"] == [{"role": "assistant", "content": "hello"}]


def test_nan_scores_count_as_missing():
    rows = [scored("p", "x", float("nan")), scored("p", "y", 0.5)]
    stats = Stats("select")
    assert [r["completion"] for r in iter_selected(rows, stats=stats)] == ["y"]
    assert stats.dropped == Counter({"no_score": 1})


def test_summary_lists_reasons_and_problems():
    stats = Stats()
    list(iter_pairs([*group("p", 1.0, 1.0), {"completion": "x"}], stats=stats))
    text = stats.summary()
    assert text.splitlines()[0] == "read 3 rows of 1 prompts; wrote 0 pairs from 0 prompts"
    assert "dropped 1: prompts whose completions all scored the same [no_signal]" in text
    assert "row 3: no 'prompt' (fields: completion)" in text
    json.dumps(dict(stats.dropped))  # counts are plain JSON for the API


# --- accounting properties -------------------------------------------------------------------------------

score_values = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.0]))
groups_strategy = st.lists(st.lists(st.tuples(score_values, st.sampled_from([0.0, 1.0])), min_size=1, max_size=6),
                           min_size=1, max_size=8)


def rows_from(groups):
    return [scored(f"p{g}", f"p{g}-c{i}", s, fmt=f) for g, comps in enumerate(groups) for i, (s, f) in enumerate(comps)]


@settings(max_examples=150, deadline=None)
@given(groups=groups_strategy, margin=st.sampled_from([0.0, 0.3, 0.75]), gated=st.booleans())
def test_best_worst_accounts_for_every_prompt(groups, margin, gated):
    stats = Stats()
    options = PairOptions(min_margin=margin, require=["fmt>=1"] if gated else [])
    pairs = list(iter_pairs(rows_from(groups), options, stats=stats))
    prompt_drops = sum(stats.dropped[k] for k in ("too_few", "no_signal", "gate", "below_margin"))
    assert len(pairs) + prompt_drops == len(groups)
    assert stats.dropped["no_score"] == sum(s is None for comps in groups for s, _ in comps)
    for pair in pairs:
        comps = groups[int(pair["prompt"][1:])]
        scores = [s for s, _ in comps if s is not None]
        assert pair["score_rejected"] == min(scores)
        assert pair["margin"] > 0 and pair["margin"] >= margin - 1e-9
        assert not gated or pair["rewards_chosen"]["fmt"] == 1.0
        eligible = [s for s, f in comps if s is not None and (f == 1.0 or not gated)]
        assert pair["score_chosen"] == max(eligible)


@settings(max_examples=150, deadline=None)
@given(groups=groups_strategy, top_k=st.sampled_from([None, 1, 2]), min_score=st.sampled_from([None, 0.5]))
def test_selection_accounts_for_every_completion(groups, top_k, min_score):
    stats = Stats()
    options = SelectOptions(top_k=top_k, min_score=min_score, require=["fmt>=1"])
    kept = list(iter_selected(rows_from(groups), options, stats=stats))
    assert len(kept) + sum(stats.dropped.values()) == sum(len(comps) for comps in groups)
    for row in kept:
        assert row["rewards"]["fmt"] == 1.0 and (min_score is None or row["score"] >= min_score)
    per_prompt = Counter(row["prompt"] for row in kept)
    assert top_k is None or max(per_prompt.values(), default=0) <= top_k
