"""``pass_at_k: K`` on a config entry: PKPO's unbiased per-sample pass@k rewards, checked against their definition."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from serving import ensure_registered

import rewardhub
from rewardhub._set.pass_at_k import pass_at_k_estimate, pass_at_k_rewards


def by_definition(values: list[float], k: int) -> list[float]:
    """n/k times the mean, over all k-subsets of the group, of the subset's best value times [the sample is in it]."""
    n = len(values)
    subsets = list(itertools.combinations(range(n), k))
    return [n / k * sum(max(values[j] for j in s) for s in subsets if i in s) / len(subsets) for i in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_the_rewards_are_the_subset_definition(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 8)
    values = [rng.choice([0.0, 0.5, 1.0, rng.random()]) for _ in range(n)]  # ties included
    for k in range(1, n + 1):
        assert pass_at_k_rewards(values, k) == pytest.approx(by_definition(values, k), abs=1e-12)
        subsets = list(itertools.combinations(values, k))
        assert pass_at_k_estimate(values, k) == pytest.approx(sum(map(max, subsets)) / len(subsets))


def test_binary_rewards_have_the_closed_form_and_k_1_changes_nothing():
    values = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]  # n = 8, c = 2
    for k in (2, 4):
        wrong = 1 - math.comb(8 - 2 - 1, k - 1) / math.comb(8 - 1, k - 1)
        assert pass_at_k_rewards(values, k) == pytest.approx([1.0 if v else wrong for v in values])
    assert pass_at_k_rewards([0.3, 0.9, 0.1], 1) == pytest.approx([0.3, 0.9, 0.1])
    assert pass_at_k_estimate(values, 4) == pytest.approx(1 - math.comb(6, 4) / math.comb(8, 4))


def test_the_entry_option_transforms_within_each_prompt_group():
    ensure_registered()
    reward_set = rewardhub.load({"rewards": [{"name": "th_contains", "pass_at_k": 2}]})
    prompts = ["p"] * 4 + ["q"] * 3
    completions = ["42", "no", "no", "no", "no", "no", "no"]
    result = reward_set.evaluate(prompts, completions, solution=["42"] * 7)
    assert result.totals[:4] == pytest.approx([1.0, 1 / 3, 1 / 3, 1 / 3])
    assert result.totals[4:] == [0.0, 0.0, 0.0]  # a group with nothing right has nothing to share
    assert "pass@2 reward 1 (group pass@2 0.5, n=4)" in result["th_contains"].reasons[0]
    assert result["th_contains"].verdicts[0] is None  # th_contains gives no verdict; the inner one is kept


def test_abstentions_stay_out_and_a_small_group_uses_k_n():
    ensure_registered()
    reward_set = rewardhub.load({"rewards": [{"name": "th_sometimes", "pass_at_k": 4}]})
    result = reward_set.evaluate(["p"] * 3, ["odd", "even", "abc"])  # "even": even length, abstains
    assert result["th_sometimes"].values[1] is None and result["th_sometimes"].outcomes[1] == "abstain"
    assert result.totals[0] == result.totals[2] == pytest.approx(0.5)  # both 0.5: the best of 2 is 0.5
    assert "only 2 scored in the group, so k = 2" in result["th_sometimes"].reasons[0]


def test_group_assembly_treats_it_as_a_group_reward():
    from rewardhub import needs_groups
    from rewardhub.trainers.groups import group_size_for

    ensure_registered()
    reward_set = rewardhub.load({"rewards": [{"name": "th_contains", "pass_at_k": 2}]})
    assert needs_groups(reward_set.members[0].reward)
    with pytest.raises(rewardhub.ConfigError, match="group_size"):
        group_size_for(reward_set)  # verl and OpenRLHF send one completion per call: the group must be assembled
    assert group_size_for(reward_set, 8) == 8


@pytest.mark.parametrize("k", [0, -1, 1.5, "2", True])
def test_a_bad_k_is_a_config_error(k):
    with pytest.raises(rewardhub.ConfigError, match="'pass_at_k' must be an integer k >= 1"):
        rewardhub.load({"rewards": [{"name": "exact_match", "pass_at_k": k}]})
