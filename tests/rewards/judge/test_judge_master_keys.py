"""Judge master keys (':', '.', 'Thought process:', 'Solution', ... in ten languages) against a judge
that pays them, as weak LLM judges do: the reward scores each 0 (ranks it last) without asking, the
contract kit's probe says so for any judge reward, and ``rewardhub check-judge`` measures the endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from judge_server import KEY_ENV, SECRET, JudgeServer, judge_fixture, running_server_fixture, server_fixture  # noqa: F401

from rewardhub.rewards.judge.hollow import hollow_reason
from rewardhub.testing import ContractViolation
from rewardhub.testing.judge_probes import JUDGE_FORGERIES, JUDGE_MASTER_KEYS, check_judge_master_keys


def fooled(body) -> str:
    """Pays anything that is not a wrong number: a judge the master keys fool."""
    content = body["messages"][-1]["content"]
    response = content.split("[Response]\n", 1)[-1].split("\n[End of response]", 1)[0]
    wrong = any(w in response for w in ("11", "Lyon", "8 sides"))
    if "Label: <label>" in content:
        return "Label: incorrect" if wrong else "Label: correct"
    if "Which response is better?" in content:
        return "Winner: 1"
    if "ranking every response by its number" in content:
        return "Ranking: 1 > 2"
    return ("no" if wrong else "yes") if "[Reference answer]" in content or "[Criterion]" in content else (
        "0" if wrong else "10")


@pytest.mark.parametrize("params", [{}, {"template": "binary"}, {"mode": "label"},
                                    {"mode": "rubric", "rubric": ["Gives the right answer"]}],
                         ids=["pointwise", "binary", "label", "rubric"])
def test_every_master_key_scores_zero_without_asking(server, judge, params):
    server.answer = fooled
    report = check_judge_master_keys(judge(**params))
    assert report.ok and set(report.values.values()) == {0.0} and report.honest == 1.0
    sent = [b["messages"][-1]["content"].split("[Response]\n", 1)[1].split("\n[End of response]", 1)[0]
            for b in server.bodies]
    assert sent and not any(hollow_reason(text) for text in sent)  # no master key was sent to the judge
    assert len(sent) <= 1 + len(JUDGE_FORGERIES)  # forgeries that read the same are sent once


@pytest.mark.parametrize("mode", ["pairwise", "groupwise"])
def test_master_keys_lose_every_comparison(server, judge, mode):
    server.answer = fooled  # would name the first listed response the winner
    texts = ["4 + 6 = 10.", "Thought process:", ":", "Solution"]
    result = judge(mode=mode).evaluate(["What is 4 + 6?"] * 4, texts)
    assert result.values == [1.0, 0.0, 0.0, 0.0], result.reasons
    assert server.requests == 0  # the one real completion wins without a comparison
    two = judge(mode=mode).evaluate(["Q"] * 4, ["q=1 first", "q=2 second", "Let's solve this problem step by step.", "."])
    assert two.values[2:] == [0.0, 0.0] and all(v >= 1 / 3 for v in two.values[:2]), two.reasons


@pytest.mark.parametrize("text", ["42", "Paris", "B", "No.", "Yes", "0", "x = 3", "Let's think step by step. 4 + 6 = 10.",
                                  "解：答案是 10。", "Ответ: 10", "Solution: dissolve it in water."])
def test_short_honest_answers_are_not_hollow(text):
    assert hollow_reason(text) is None


def test_the_reference_itself_is_never_hollow(server, judge):
    server.answer = lambda body: "yes"
    result = judge(template="binary").evaluate(["A homogeneous mixture is called?"], ["Solution"], solution=["solution"])
    assert result.values == [1.0]


def test_the_kit_catches_a_judge_reward_without_the_guard(server, judge):
    server.answer = fooled
    reward = judge(template="binary")
    reward.refuses_hollow = False  # a third-party judge reward that asks the endpoint about everything
    with pytest.raises(ContractViolation, match="probe ':' scored 1"):
        check_judge_master_keys(reward)
    assert {key for key in JUDGE_MASTER_KEYS} <= set(check_judge_master_keys(reward, raise_on_failure=False).values)


def run_check_judge(server: JudgeServer, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rewardhub.cli", "check-judge", "--base-url", server.base_url,
                           "--model", "judge-test", "--api-key-env", KEY_ENV, *extra],
                          capture_output=True, text=True, timeout=300, env={**os.environ, KEY_ENV: SECRET})


def test_check_judge_measures_the_endpoint_itself(server):
    server.answer = fooled
    done = run_check_judge(server, "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert found["paid"] == found["keys"] == 3 * len(JUDGE_MASTER_KEYS)
    assert found["right_paid"] == 3 and found["wrong_paid"] == 0


def test_check_judge_passes_a_judge_that_refuses_the_keys(server):
    def strict(body):
        response = body["messages"][-1]["content"].split("[Response]\n", 1)[1].split("\n[End of response]", 1)[0]
        return "yes" if any(w in response for w in ("10.", "Paris.", "6 sides")) else "no"

    server.answer = strict
    done = run_check_judge(server)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "master keys paid: 0 of" in done.stdout and "right answers paid 3/3" in done.stdout
