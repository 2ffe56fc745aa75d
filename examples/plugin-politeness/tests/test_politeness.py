"""The politeness plugin tested the way trainers call it (run `pytest` here after `pip install -e .`)."""

import rewardhub
from rewardhub.testing import check_contract


def test_found_through_its_entry_point():
    spec = {r["name"]: r for r in rewardhub.list_rewards()}["politeness"]
    assert spec["source"] == "rewardhub-politeness"
    assert spec["params"]["per_phrase"]["default"] == 0.5


def test_values_and_reasons_as_trl_sees_them():
    politeness = rewardhub.get("politeness")
    completions = ["Thanks! Please try again.", "No.", [{"role": "assistant", "content": "Thank you kindly"}]]
    result = politeness.evaluate(None, completions)
    assert result.values == [1.0, 0.0, 1.0]  # two phrases at 0.5 each; none; "thank you" + "kindly"
    assert result.reasons == ["polite phrases: please, thanks", "polite phrases: none",
                              "polite phrases: thank you, kindly"]
    assert rewardhub.get("politeness", per_phrase=0.25)(None, ["please"]) == [0.25]


def test_contract():
    report = check_contract(rewardhub.get("politeness"), columns={})
    assert report.ok, report
