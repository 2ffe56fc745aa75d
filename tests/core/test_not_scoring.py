"""A reward that is not scoring is said once, loudly, on every path: a missing column (with the
closest name the batch has) or a reward whose samples all fail (an endpoint down)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from judge_server import (  # noqa: F401
    KEY_ENV,
    SECRET,
    JudgeServer,
    judge_fixture,
    rows,
    running_server_fixture,
    server_fixture,
)

import rewardhub
from rewardhub import RewardNotScoringWarning
from rewardhub.trainers.groups import CallScorer
from rewardhub.trainers.ppo import PPORewards

CONFIG = [{"name": "exact_match", "weight": 1.0}, {"name": "format_regex", "weight": 0.5,
                                                    "params": {"pattern": "^answer"}}]
PROMPTS = ["q1", "q1", "q2", "q2"]
COMPLETIONS = [r"answer \boxed{4}", "answer 5", r"\boxed{7}", "no"]
MISSPELT = {"soluton": ["4", "4", "7", "7"]}  # TRL passes every dataset column by its own name


def said(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, RewardNotScoringWarning)]


def _two_steps(path: str) -> list[list[float | None]]:
    """Two training steps' calls of the set on a batch without ``solution``, the way ``path`` calls it."""
    rewards = rewardhub.load(CONFIG)
    out = []
    for _ in range(2):
        if path == "reward_funcs":  # TRL's GRPOTrainer: each reward, with its logging hooks
            logs = {}
            kwargs = {**MISSPELT, "log_extra": logs.__setitem__, "log_metric": logs.__setitem__}
            out.append(rewards.reward_funcs[0](prompts=PROMPTS, completions=COMPLETIONS, **kwargs))
        elif path == "weighted":  # verl, OpenRLHF, async GRPO: one weighted callable
            out.append(rewards.weighted(prompts=PROMPTS, completions=COMPLETIONS, **MISSPELT))
        elif path == "ppo":
            out.append(PPORewards(rewards)(PROMPTS, COMPLETIONS, **MISSPELT).components["exact_match"].tolist())
        elif path == "shims":
            batch = rewardhub.Batch(PROMPTS, COMPLETIONS, dict(MISSPELT))
            out.append(CallScorer(rewards).score(batch).component_values()["exact_match"])
        elif path == "offline":
            rows_ = [{"prompt": p, "completion": c, "soluton": s}
                     for p, c, s in zip(PROMPTS, COMPLETIONS, MISSPELT["soluton"], strict=True)]
            out.append([r["rewards"]["exact_match"] for r in rewards.score(rows_)])
    return out


@pytest.mark.parametrize("path", ["reward_funcs", "weighted", "ppo", "shims", "offline"])
def test_a_misspelt_column_is_said_once_naming_the_reward_the_columns_and_the_closest(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # even so: said once, by rewardhub itself
        values = _two_steps(path)
    messages = said(caught)
    assert len(messages) == 1, messages
    assert messages[0].startswith("rewardhub: not scoring: reward 'exact_match' needs column 'solution', but the "
                                  "batch has only: soluton. Did you mean 'soluton'?")
    if path in ("reward_funcs", "shims", "offline"):
        assert values == [[None] * 4] * 2  # abstentions, never a 0.0 that reads as "wrong"
    elif path == "ppo":
        assert all(v != v for step in values for v in step)  # NaN: left out of the means


def test_the_cli_says_it_once_on_stderr(tmp_path):
    config = tmp_path / "rewards.json"
    config.write_text(json.dumps({"rewards": CONFIG}))
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"prompt": p, "completion": c, "answer": "4"}) + "\n"
                            for p, c in zip(PROMPTS, COMPLETIONS, strict=True)))
    rh = str(Path(sys.executable).with_name("rewardhub"))
    proc = subprocess.run([rh, "score", "-c", str(config), str(data), "--batch-size", "2"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONWARNINGS": ""})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("RewardNotScoringWarning") == 1, proc.stderr
    assert "reward 'exact_match' needs column 'solution', but the batch has only: answer." in proc.stderr
    assert [json.loads(line)["outcomes"]["exact_match"] for line in proc.stdout.splitlines()] == ["error"] * 4


def test_an_async_reward_says_it_too():
    @rewardhub.sample_reward(name="async_needs_gold")
    async def needs_gold(text, solution):
        return float(solution in text)

    reward = needs_gold()
    with pytest.warns(RewardNotScoringWarning, match="'async_needs_gold' needs column 'solution'"):
        values = asyncio.run(reward(prompts=PROMPTS, completions=COMPLETIONS, **MISSPELT))
    assert values == [None] * 4


def test_a_judge_down_for_whole_steps_is_said_once(judge):
    with JudgeServer() as gone:
        url = gone.base_url  # nothing listens there any more
    reward = judge(base_url=url, max_retries=0)
    prompts, completions = rows("5", "6")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):  # three steps, the way TRL awaits an async reward
            assert asyncio.run(reward(prompts=prompts, completions=completions)) == [None, None]
    messages = said(caught)
    assert len(messages) == 1, messages
    assert messages[0].startswith("rewardhub: reward 'judge' is not scoring: none of its last 2 samples got a "
                                  "score (outcome error; first reason: judge ")
    assert "connection error" in messages[0]


def test_one_sample_callers_say_it_after_a_streak_and_a_bad_row_is_not_a_dead_reward(judge, server):
    reward = judge()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mixed = reward.evaluate(["q", "q"], ["fine [[7]]", "broken [[not a number]]"])
        assert mixed.outcomes[0] == "ok" and mixed.values[1] is None  # one bad row among good ones
        assert said(caught) == []
    with JudgeServer() as gone:
        url = gone.base_url
    down = judge(base_url=url, max_retries=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for call in range(1, 12):  # verl and OpenRLHF send one sample per call
            down.evaluate(["q"], [f"completion {call}"])
            assert len(said(caught)) == (call >= 8), call
    assert "none of its last 8 samples got a score" in said(caught)[0]


def test_abstaining_is_not_failing():
    """A reward that does not apply (no gold in the rows) abstains quietly: routing relies on it."""
    rewards = rewardhub.load(CONFIG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = rewards.evaluate(PROMPTS, COMPLETIONS, solution=[None] * 4)
    assert result["exact_match"].outcomes == ["abstain"] * 4 and said(caught) == []


def test_a_run_can_stop_at_the_first_one():
    reward = rewardhub.get("exact_match")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RewardNotScoringWarning)
        with pytest.raises(RewardNotScoringWarning, match="needs column 'solution'"):
            reward(prompts=PROMPTS, completions=COMPLETIONS, **MISSPELT)


@pytest.mark.parametrize("passing", [0, 2])
def test_behind_a_gate_a_missing_column_is_an_error_on_every_row_never_ok(passing):
    rewards = rewardhub.load([{"name": "format_regex", "alias": "fmt", "params": {"pattern": "^answer"}},
                              {"name": "exact_match", "gate": {"reward": "fmt", "threshold": 1.0}}])
    completions = COMPLETIONS if passing else ["x", "y", "z", "w"]  # two pass the gate, or none
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = rewards.evaluate(PROMPTS, completions, **MISSPELT)["exact_match"]
    assert result.outcomes == ["error"] * 4 and result.values == [None] * 4
    assert all("needs column 'solution'" in r for r in result.reasons)
    assert len(said(caught)) == 1


def test_the_gate_failing_is_an_error_of_the_gated_reward():
    rewards = rewardhub.load([{"name": "format_regex", "params": {"pattern": "^answer"}},
                              {"name": "format_regex", "alias": "gated_on_gold",
                               "params": {"pattern": "^answer"}, "gate": "exact_match"}])
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result = rewards.evaluate(PROMPTS, COMPLETIONS, **MISSPELT)["gated_on_gold"]
    assert result.outcomes == ["error"] * 4 and result.values == [None] * 4
    assert result.reasons[0].startswith("gate 'exact_match' failed: error: MissingColumnError")
