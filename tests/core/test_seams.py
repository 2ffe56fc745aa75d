"""The three wrong numbers the core's plumbing produced (issue 32), through the public API.

1. A reward's deadline keeps only the rows *it* settled, never another member's.
2. OpenRLHF's ``scores`` divide by the set's weights at the step, not TRL's fixed ``reward_weights``.
3. A reward that reuses another's verdicts sees the verdict the set paid (after its gate).
"""

import math

import pytest

import rewardhub
from rewardhub.trainers import openrlhf

DOUBLE = "```python\nprint(int(input()) * 2)\n```"
ONE_OF_TWO = [{"input": "1\n", "output": "2\n"}, {"input": "2\n", "output": "5\n"}]


def test_a_timed_out_entry_never_reports_another_entrys_rows():
    rewards = rewardhub.load({"rewards": [
        {"name": "code", "alias": "partial", "params": {"mode": "fraction"}},
        {"name": "code", "alias": "strict", "params": {"mode": "all"}, "timeout": 0.001},
    ]})
    result = rewards.evaluate_batch(rewardhub.Batch(["p"], [DOUBLE], {"tests": [ONE_OF_TWO]}))
    partial, strict = result["partial"].scores[0], result["strict"].scores[0]
    assert partial.value == pytest.approx(0.5) and partial.outcome == "ok"
    # The strict entry either timed out or finished with its own verdict (all cases must pass: 0.0).
    assert (strict.value, strict.outcome) in ((None, "timeout"), (0.0, "ok")), strict
    assert strict.reason != partial.reason


def test_a_timed_out_batch_scorer_keeps_its_own_settled_rows(core_registry):
    """Rows a batch scorer settled before its deadline keep their scores; the others time out."""
    import threading

    release = threading.Event()

    class Slow(rewardhub.Reward):
        name = "slow_settler"

        def score_batch(self, batch):
            self.settle(0, (1.0, "first row done"))
            release.wait(30)
            return [1.0] * len(batch)

    try:
        reward = Slow()
        reward.batch_timeout = 0.05
        scores = reward.evaluate_batch(rewardhub.Batch(["p", "q"], ["a", "b"], {})).scores
    finally:
        release.set()
    assert (scores[0].value, scores[0].reason) == (1.0, "first row done")
    assert scores[1].outcome == "timeout"


SCHEDULED = {"rewards": [
    {"name": "format_regex", "alias": "fmt", "weight": {"schedule": "constant", "start": 3.0},
     "params": {"preset": "think_answer"}},
    {"name": "exact_match", "alias": "em", "weight": 1.0},
]}


def test_openrlhf_scores_use_the_weights_at_the_step():
    rewards = rewardhub.load(SCHEDULED)
    batch = rewardhub.Batch(["q"], ["The answer is 42."], {"solution": ["42"]})
    scored = rewards.evaluate_batch(batch, step=10)
    assert scored["fmt"].values == [0.0] and scored["em"].values == [1.0]
    response = openrlhf.to_response(scored)
    assert response["rewards"] == [pytest.approx(1.0)]
    assert response["scores"] == [pytest.approx(0.25)]  # 1.0 / (3.0 + 1.0), not 1.0 / (1.0 + 1.0)


def test_openrlhf_reward_func_scores_use_the_weights_at_the_step(tmp_path):
    import json

    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(SCHEDULED))
    func = openrlhf.RewardFunc(str(config), samples_per_step=1000, monitor=False)
    out = func(["q The answer is 42."], ["q "], ["42"])
    assert float(out["scores"][0]) == pytest.approx(0.25)


README_CONFIG = {"rewards": [
    {"name": "format_regex", "alias": "format", "weight": 0.2, "params": {"preset": "think_answer"}},
    {"name": "math", "alias": "accuracy", "weight": 1.0, "params": {"timeout": 30}, "gate": "format"},
    {"name": "length_penalty", "weight": 0.1, "params": {"mode": "group", "correctness": "accuracy"}},
]}


def test_a_reused_verdict_is_the_verdict_the_set_paid():
    rewards = rewardhub.load(README_CONFIG)
    unformatted_right = "The answer is \\boxed{42}."
    formatted_wrong = "<think>" + "let me think step by step " * 20 + "</think>\n<answer>\\boxed{41}</answer>"
    result = rewards.evaluate_batch(rewardhub.Batch(["q", "q"], [unformatted_right, formatted_wrong],
                                                    {"solution": ["42", "42"]}))
    assert result["accuracy"].values == [0.0, 0.0]
    assert "gated" in result["accuracy"].reasons[0]
    # The shortest completion of its group earns lambda = 0.5 only if correct; as the set paid it wrong: 0.
    length = result["length_penalty"].scores[0]
    assert length.value == 0.0, length
    assert not math.isnan(result.totals[0])


def test_sync_members_run_side_by_side_in_the_servers_executor(clean_registry):
    """The server runs sync members in threads at once, each within the caller's context."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    inside = threading.Barrier(3, timeout=60)  # all three members must be running at the same time

    @rewardhub.batch_reward(name="meets_the_others")
    def meets_the_others(texts):
        inside.wait()
        return [1.0] * len(texts)

    clean_registry.add(meets_the_others)
    rewards = rewardhub.load([{"name": "meets_the_others", "alias": f"m{i}"} for i in range(3)])
    batch = rewardhub.Batch(["p"], ["x"], {})
    with ThreadPoolExecutor(3) as executor:
        result = asyncio.run(rewards.aevaluate_batch(batch, executor))
    assert result.totals == [3.0]
