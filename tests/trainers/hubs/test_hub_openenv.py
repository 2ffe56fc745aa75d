"""rewardhub sets as OpenEnv 0.10.0 rubrics, run in OpenEnv's own environment (its FastAPI/FastMCP/Gradio
dependencies are installed there, not in rewardhub's): see openenv_side.py beside this file."""

from __future__ import annotations

from pathlib import Path

import hubs
import pytest


@pytest.fixture(scope="module")
def scored():
    return hubs.run_in(hubs.venv(hubs.OPENENV), Path(__file__).with_name("openenv_side.py"))


def test_a_set_is_a_rubric_returning_its_weighted_total(scored):
    assert scored["right"] == 1.5 and scored["wrong"] == 0.5
    assert scored["children"] == {"answer": 0.0, "format": 1.0}  # the last call's components, by alias
    assert "expected '4'" in scored["reasons"]["answer"]


def test_it_composes_with_openenvs_containers_and_environments(scored):
    assert scored["weighted"] == [1.0, 0.5, 0.5]  # 0.5 * correct + 0.5 * brevity
    assert scored["gated"] == [1.0, 0.0]
    assert scored["step"] == 1.5  # Environment._apply_rubric in step()


def test_an_abstention_gives_abstain_value(scored):
    assert scored["abstained"] == -1.0
