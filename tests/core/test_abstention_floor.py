"""An abstention never pays more than a failure: in every aggregation (sum, normalize_then_sum, TRL's own
normalize_then_sum on the separate functions, verl's GDPO fill) an abstaining row ranks with its group's
worst scored row for that reward, never above an honest wrong answer (issue 33, item 1)."""

from __future__ import annotations

import math

import pytest

import rewardhub
from rewardhub import Batch
from rewardhub._set.aggregate import combine, group_floors, with_floors
from rewardhub.trainers.verl import to_results

ANSWERS = [r"\boxed{42}", r"\boxed{41}", r"\boxed{40}", r"\boxed{9^{9^{9^{9}}}}"]  # the tower makes math abstain
MATH_AND_FORMAT = [{"name": "math", "params": {"timeout": 1}},
                   {"name": "format_regex", "weight": 0.2, "params": {"pattern": r".*\\boxed\{.*"}}]


@pytest.fixture(scope="module")
def scored_math():
    """The issue's example scored once per aggregate: math + format_regex (0.2), 42, 41, 40 and a tower vs 42."""
    out = {}
    for aggregate in ("sum", "normalize_then_sum"):
        rewards = rewardhub.load({"aggregate": aggregate, "rewards": MATH_AND_FORMAT})
        out[aggregate] = (rewards, rewards.evaluate(["q"] * 4, ANSWERS, solution=["42"] * 4))
    return out


@pytest.mark.parametrize("aggregate", ["sum", "normalize_then_sum"])
def test_the_tower_never_beats_the_honest_wrong_answers(scored_math, aggregate):
    _, result = scored_math[aggregate]
    right, wrong1, wrong2, tower = result.totals
    assert result["math"].values[:3] == [1.0, 0.0, 0.0] and result["format_regex"].values == [1.0] * 4
    assert result["math"].values[3] is None or result["math"].values[3] == 0.0  # abstained or a scored runaway
    assert tower <= wrong1 and tower <= wrong2 < right
    assert tower == pytest.approx(wrong1)  # it ranks with the group's worst, not below it


def test_trls_own_normalize_then_sum_on_the_separate_functions_ranks_the_tower_with_the_worst(scored_math):
    """What TRL computes from what each reward function hands it (GRPOTrainer, TRL 1.16): nanmean/nanstd per
    function and group, then nansum; an abstention handed over as None would add 0 and beat the wrong rows."""
    import torch
    from trl.trainer.utils import nanstd

    rewards, _ = scored_math["normalize_then_sum"]
    handed = [func(["q"] * 4, ANSWERS, solution=["42"] * 4) for func in rewards.reward_funcs]
    per_func = torch.tensor([[math.nan if v is None else v for v in row] for row in zip(*handed, strict=True)], dtype=torch.float64)
    normalised = (per_func - torch.nanmean(per_func, dim=0)) / (nanstd(per_func, dim=0) + 1e-4)
    totals = (normalised * torch.tensor(rewards.reward_weights, dtype=torch.float64)).nansum(dim=1).tolist()
    assert totals[3] <= min(totals[1:3]) and totals[1] < totals[0]


def test_verls_gdpo_fill_is_the_groups_floor(scored_math):
    rewards, _ = scored_math["normalize_then_sum"]
    batch = Batch(["q"] * 4, ANSWERS, {"solution": ["42"] * 4})
    result = rewards.evaluate_batch(batch, groups=[[0, 1, 2, 3]])  # as the shims' group assembly scores
    assert result.group_floors["math"] == [0.0] * 4
    assert result.group_floors == {a: group_floors(v, [[0, 1, 2, 3]]) for a, v in result.component_values().items()}
    filled = to_results(result, gdpo=True)
    assert [r["math"] for r in filled] == [1.0, 0.0, 0.0, 0.0]
    assert filled[3]["math/abstained"] == float(result["math"].values[3] is None)


@pytest.mark.parametrize("aggregate", ["sum", "normalize_then_sum"])
def test_negative_rewards_too_an_abstention_takes_the_groups_lowest_value(aggregate):
    """A penalty reward (values <= 0): abstaining must not earn 0 while honest rows pay -1."""
    components = {"penalty": [-1.0, -0.5, None, 0.0]}
    totals = combine(components, [{"penalty": 1.0}] * 4, aggregate, [[0, 1, 2, 3]])
    assert totals[2] == pytest.approx(totals[0]) and totals[2] < totals[1]


def test_where_every_other_row_was_right_abstaining_still_pays_a_failure_not_a_success():
    """The floor is at most 0.0, what a reward pays a failure: a tower among right answers is not right."""
    assert with_floors([1.0, None, 1.0], [[0, 1, 2]]) == [1.0, 0.0, 1.0]
    assert combine({"math": [1.0, 1.0, None]}, [{"math": 1.0}] * 3, "sum", [[0, 1, 2]]) == [1.0, 1.0, 0.0]
    normalised = combine({"math": [1.0, 1.0, None]}, [{"math": 1.0}] * 3, "normalize_then_sum", [[0, 1, 2]])
    assert normalised[2] < 0 < normalised[0]


def test_a_whole_group_abstaining_stays_out_and_routes_are_not_filled():
    assert with_floors([None, None, 1.0], [[0, 1], [2]]) == [None, None, 1.0]
    assert with_floors([0.5, None, 1.0], [[0, 1, 2]], applies=[True, False, True]) == [0.5, None, 1.0]
    assert with_floors([0.5, None, 1.0], [[0, 1, 2]]) == [0.5, 0.0, 1.0]
    assert with_floors([-0.5, None, 1.0], [[0, 1, 2]]) == [-0.5, -0.5, 1.0]
    assert combine({"a": [None, None]}, [{"a": 1.0}] * 2, "normalize_then_sum", [[0, 1]]) == [None, None]
