"""Bad input never crashes a batch: any completion shape yields a value or None with a reason."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import rewardhub
from rewardhub._files.io import iter_input
from rewardhub._files.jsonl import dumps_row

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
completions = st.one_of(
    st.text(max_size=200),
    st.lists(st.fixed_dictionaries({"role": st.sampled_from(["assistant", "user", "tool"]), "content": json_values}),
             max_size=3),
    json_values,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(completions, min_size=1, max_size=8), st.data())
def test_any_completion_shape_gets_a_value_or_none(core_registry_module, batch, data):
    solutions = data.draw(st.lists(json_values, min_size=len(batch), max_size=len(batch)))
    for name in ("t_contains", "t_length", "t_batch_len", "t_flaky"):
        result = rewardhub.get(name).evaluate(["q"] * len(batch), batch, solution=solutions)
        assert len(result.scores) == len(batch)
        for score in result.scores:
            assert score.value is None or isinstance(score.value, float)
            if score.value is None:
                assert score.reason, f"{name}: an abstention must say why"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=4), max_size=6))
def test_rows_survive_a_jsonl_round_trip(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("rt") / "rows.jsonl"
    path.write_text("".join(dumps_row(r) + "\n" for r in rows), encoding="utf-8")
    back = [record.row for record in iter_input(path)]
    assert back == [json.loads(dumps_row(r)) for r in rows]
