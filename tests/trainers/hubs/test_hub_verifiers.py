"""A rewardhub set as a verifiers 0.4.0 reward function, plugged into a task's config and scored by verifiers
itself, in verifiers' own environment (it pins openai<3): see verifiers_side.py beside this file."""

from __future__ import annotations

from pathlib import Path

import hubs
import pytest


@pytest.fixture(scope="module")
def scored():
    return hubs.run_in(hubs.venv(hubs.VERIFIERS), Path(__file__).with_name("verifiers_side.py"))


def test_the_sets_total_is_a_weighted_verifiers_reward(scored):
    right, wrong, bare = scored
    assert right["rewards"]["rewardhub"] == [1.5, 0.5] and right["total"] == 1.0 + 0.75
    assert wrong["rewards"]["rewardhub"] == [0.5, 0.5] and wrong["rewards"]["correct"] == [0.0, 1.0]
    assert bare["rewards"]["rewardhub"] == [1.0, 0.5]  # the right answer without the format's tags


def test_each_component_is_a_verifiers_metric(scored):
    assert scored[0]["metrics"] == {"answer": 1.0, "format": 1.0}
    assert scored[1]["metrics"] == {"answer": 0.0, "format": 1.0}
    assert scored[2]["metrics"] == {"answer": 1.0, "format": 0.0}
