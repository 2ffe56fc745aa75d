"""An entry's ``rescue``: a model verifier (the judge in ``mode: verify`` on the scripted OpenAI-compatible
server on 127.0.0.1) asked about the rows ``math`` scored a plain 0, and nothing else.

The guards are what is tested: a verifier that says yes to everything still rescues only plain 0s within
``max_chars`` and ``max_share``; a verifier that is down, unsure or says no leaves the 0; the judge master
keys, which fool LLM judges, never reach it.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from judge_server import KEY_ENV, SECRET, Reply, running_server_fixture, server_fixture  # noqa: F401

import rewardhub
from rewardhub import ConfigError, Reward, Score
from rewardhub.testing import check_contract

PAPER_MASTER_KEYS = (":", ".", "Thought process:", "Let's solve this problem step by step.", "Solution")


def yes_to_everything(body):
    return "\\boxed{A}"


def honest_but_fooled_by_master_keys(body):
    """Compares the candidate's last box with the standard answer, and grades content-free answers A, as the
    LLM judges of "One Token to Fool LLM-as-a-Judge" do."""
    text = body["messages"][-1]["content"]
    candidate = text.split("[Candidate's answer]\n", 1)[1].split("\n[End of candidate's answer]", 1)[0]
    reference = text.split("[Standard answer]\n", 1)[1].split("\n", 1)[0]
    boxes = re.findall(r"\\boxed\{([^{}]*)\}", candidate)
    if not boxes:
        return "\\boxed{A}"
    return "\\boxed{A}" if boxes[-1].strip() == reference else "\\boxed{B}"


@pytest.fixture
def rescued(server, monkeypatch):
    """A set of one ``math`` entry rescued by the judge in verify mode on the test server."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    made = []

    def make(max_share=1.0, max_chars=2000, base_url=None, **judge):
        params = {"mode": "verify", "base_url": base_url or server.base_url, "model": "verifier",
                  "api_key_env": KEY_ENV, "backoff": 0.01, "max_backoff": 0.05, "timeout": 5.0, **judge}
        made.append(rewardhub.load([{"name": "math", "rescue": {"name": "judge", "params": params,
                                                                "max_share": max_share, "max_chars": max_chars}}]))
        return made[-1]

    yield make
    for reward_set in made:
        reward_set["math"].close()


def sent_candidates(server) -> list[str]:
    return [b["messages"][-1]["content"].split("[Candidate's answer]\n", 1)[1].split("\n[End", 1)[0]
            for b in server.bodies]


ROWS = {
    "passed": "So the answer is \\boxed{42}.",
    "plain wrong": "So the answer is \\boxed{41}.",
    "hedge": "It is 41 or 42. \\boxed{41 \\text{ or } 42}",
    "several answers": "\\boxed{41} \\boxed{42} \\boxed{419}",
    "no answer": "I am not sure what the answer is.",
    "too long": "filler " * 400 + "\\boxed{43}",
}


def test_a_verifier_saying_yes_to_everything_sees_only_plain_zeros(server, rescued):
    server.answer = yes_to_everything
    reward_set = rescued(max_chars=1000)
    rows = [{"prompt": "What is 6 * 7?", "completion": text, "solution": "42"} for text in ROWS.values()]
    rows.append({"prompt": "What is 6 * 7?", "completion": "\\boxed{41}", "solution": None})  # the rule abstains
    scored = reward_set.score(rows)
    values = [row["rewards"]["math"] for row in scored]
    assert values == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, None]
    assert sent_candidates(server) == [ROWS["plain wrong"]]  # one request: never a pass, hedge, abstention, long row
    assert scored[1]["reasons"]["math"].startswith("rescued by math/rescue (verifier: A (correct)); the rule said: ")
    assert scored[0]["reasons"]["math"].startswith("correct")
    assert reward_set["math"].counts == {"rescue_sent": 1, "rescued": 1}


def test_max_share_caps_the_requests_of_a_batch(server, rescued):
    server.answer = yes_to_everything
    reward_set = rescued(max_share=0.25)
    completions = [f"\\boxed{{{n}}}" for n in range(100, 108)]
    result = reward_set.evaluate(["What is 6 * 7?"] * 8, completions, solution=["42"] * 8)["math"]
    assert result.values == [1.0, 1.0] + [0.0] * 6  # the first quarter of the batch, in batch order
    assert server.requests == 2
    assert all("not sent to math/rescue: the batch's max_share 0.25 was reached" in r for r in result.reasons[2:])


@pytest.mark.parametrize("reply, says", [
    (Reply(status=500, error="engine died"), "judge unavailable: HTTP 500: engine died"),
    (Reply("\\boxed{C}"), "verifier: C (invalid)"),
    (Reply("\\boxed{B}"), "verifier: B (incorrect)"),
    (Reply("They might be equivalent."), "unparsable verifier answer"),
    (Reply("<think>Surely \\boxed{A}</think>\n\\boxed{B}"), "verifier: B (incorrect)"),  # thinking never read
])
def test_a_verifier_down_unsure_or_saying_no_leaves_the_zero(server, rescued, reply, says):
    server.answer = lambda body: reply
    result = rescued(max_retries=1).evaluate(["What is 6 * 7?"], ["\\boxed{41}"], solution=["42"])["math"]
    assert result.values == [0.0] and result.outcomes == ["ok"] and result.verdicts == [False]
    assert "; math/rescue did not rescue it: " in result.reasons[0] and says in result.reasons[0]


async def test_trl_call_logs_the_rescued_count(server, rescued):
    server.answer = lambda body: "\\boxed{A}" if "\\boxed{41}" in body["messages"][-1]["content"] else "\\boxed{B}"
    entry = rescued().reward_funcs[0]
    metrics = {}
    values = await entry(prompts=["What is 6 * 7?"] * 3, completions=["\\boxed{42}", "\\boxed{41}", "\\boxed{40}"],
                   solution=["42"] * 3, log_metric=metrics.__setitem__)
    assert values == [1.0, 1.0, 0.0]
    assert metrics["math/rescue_sent"] == 2.0 and metrics["math/rescued"] == 1.0
    assert metrics["math/rescued_share"] == pytest.approx(1 / 3)


def test_the_report_plots_the_rescued_share():
    from rewardhub.report.plots import training_chart
    from rewardhub.report.training import load_trainer_state

    curves = load_trainer_state({"log_history": [{"step": 1, "math/rescued_share": 0.125},
                                                 {"step": 2, "math/rescued_share": 0.25, "math/rescued": 2.0}]})
    assert curves.rescued == {"math": [(1.0, 0.125), (2.0, 0.25)]} and not curves.empty
    assert training_chart(curves).startswith("data:image/png")


async def test_master_keys_and_gaming_probes_never_reach_the_rescuer(server, rescued):
    try:  # the contract kit's judge master keys (issue 33), else the paper's five
        from rewardhub.testing.judge_probes import JUDGE_MASTER_KEYS as keys
    except ImportError:
        keys = PAPER_MASTER_KEYS
    server.answer = honest_but_fooled_by_master_keys
    entry = rescued().reward_funcs[0]
    values = await entry(prompts=["What is 4 + 6?"] * len(keys), completions=list(keys), solution=["10"] * len(keys))
    assert values == [0.0] * len(keys)
    assert server.requests == 0
    report = await asyncio.to_thread(check_contract, entry, columns={"solution": "42"}, raise_on_failure=False)
    assert report.failures == []


class StrictRule(Reward):
    """A plugin's rule that marks its own certain failures final (returning an int 0, as plugins do)."""

    name = "strict_rule"

    def score_sample(self, text, row):
        if " or " in text:
            return Score(0, "a hedge", False, final=True)
        return Score(int(text.strip() == row["solution"]), "compared")


def test_a_plugin_rule_keeps_its_final_zeros_from_the_verifier(server, monkeypatch, clean_registry):
    clean_registry.add(StrictRule)
    server.answer = yes_to_everything
    monkeypatch.setenv(KEY_ENV, SECRET)
    params = {"mode": "verify", "base_url": server.base_url, "model": "verifier", "api_key_env": KEY_ENV}
    reward_set = rewardhub.load([{"name": "strict_rule", "rescue": {"name": "judge", "params": params, "max_share": 1}}])
    result = reward_set.evaluate(["q"] * 3, ["42", "41 or 42", "41"], solution=["42"] * 3)["strict_rule"]
    assert result.values == [1.0, 0.0, 1.0]
    assert sent_candidates(server) == ["41"]
    reward_set["strict_rule"].close()


def test_rescue_config_errors_name_the_entry_and_key():
    with pytest.raises(ConfigError, match=r"entry #1 \(math\): rescue: unknown key\(s\) 'max_shares' \(did you mean 'max_share'"):
        rewardhub.load([{"name": "math", "rescue": {"name": "judge", "max_shares": 0.5}}])
    with pytest.raises(ConfigError, match=r"'max_share' must be a share of the batch in \(0, 1\], got 2"):
        rewardhub.load([{"name": "math", "rescue": {"name": "judge", "max_share": 2}}])
    with pytest.raises(ConfigError, match="rescue needs 'name'"):
        rewardhub.load([{"name": "math", "rescue": {"params": {}}}])
