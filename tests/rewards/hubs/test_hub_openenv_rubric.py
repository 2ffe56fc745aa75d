"""OpenEnv 0.10.0 rubrics as the ``openenv_rubric`` reward, run in OpenEnv's own environment (tests/hubs.py; its
FastAPI/FastMCP/Gradio dependencies stay out of rewardhub's): see openenv_side.py beside this file."""

from __future__ import annotations

from pathlib import Path

import hubs
import pytest


@pytest.fixture(scope="module")
def scored():
    return hubs.run_in(hubs.venv(hubs.OPENENV), Path(__file__).with_name("openenv_side.py"))


def test_a_rubric_gives_the_numbers_it_gives_an_environment(scored):
    assert scored["combined"] == pytest.approx(scored["combined_direct"])
    assert scored["combined"] == pytest.approx([1.0, 0.7, 0.3])
    assert "WeightedSum: 0.7" in scored["reasons"][1] and "rubric_0=1" in scored["reasons"][1]
    assert scored["async"] == [1.0, 1.0, 0.0]


def test_an_environments_own_types_can_carry_the_row(scored):
    assert scored["typed"] == scored["typed_direct"] == [1.0, 1.0, 0.0]


def test_it_is_one_reward_of_a_set(scored):
    assert scored["in_a_set"] == [1.5, 1.5, 0.0]  # the rubric + 0.5 * exact_match


def test_a_rubric_that_fails_on_a_row_abstains_and_bad_params_are_named(scored):
    values, outcomes, reasons = scored["missing_column"]
    assert values == [None] and outcomes == ["error"] and "solution" in reasons[0]
    nope, no_module, no_colon, not_a_rubric = scored["errors"]
    assert "has no attribute 'Nope'" in nope and "cannot import 'no_such_module'" in no_module
    assert "must be an import path" in no_colon and "ChatAction" in not_a_rubric and "not a Rubric" in not_a_rubric
