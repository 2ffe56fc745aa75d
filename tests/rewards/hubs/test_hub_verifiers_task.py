"""verifiers 0.4.0 tasks as the ``verifiers_task`` reward, run in verifiers' own environment (it pins openai<3,
rewardhub's [all] has openai 3): see verifiers_side.py beside this file and tests/verifiers_tasks.py."""

from __future__ import annotations

from pathlib import Path

import hubs
import pytest


@pytest.fixture(scope="module")
def scored():
    return hubs.run_in(hubs.venv(hubs.VERIFIERS), Path(__file__).with_name("verifiers_side.py"))


def test_a_task_scores_a_row_as_verifiers_scores_the_rollout(scored):
    assert scored["values"] == scored["native"] == [1.0, 1.25, 0.0]  # correct + 0.25 * called a tool
    assert scored["reasons"][1] == "MathTask: 1.25 (called_a_tool=1 x0.25, correct=1)"


def test_reward_functions_plugged_through_the_tasks_config_count(scored):
    assert scored["plugged"] == scored["plugged_native"] == [3.0, 1.25, 2.0]  # + 2 * brevity


def test_reward_functions_that_need_a_runtime_are_skipped_and_said(scored):
    values, reasons = scored["sandbox"]
    assert values == [None] and "scored nothing" in reasons[0] and "tests_pass" in reasons[0]


def test_bad_params_are_named(scored):
    not_a_task, bad_config = scored["errors"]
    assert "is not a verifiers Task class" in not_a_task
    assert "not a valid TaskConfig" in bad_config and "rewardz" in bad_config
