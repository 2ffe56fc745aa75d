"""Judges on reasoning models, and the generative verifier mode (``mode: verify``), against the scripted
OpenAI-compatible server on 127.0.0.1: thinking never reaches the parser, the reason quotes only the
final answer, the reasoning params reach the request, and verify reads A / B / C from the last box or line.
"""

from __future__ import annotations

import pytest
from judge_server import Reply, judge_fixture, running_server_fixture, server_fixture  # noqa: F401

from rewardhub import ConfigError
from rewardhub.rewards.judge.reasoning import final_answer
from rewardhub.rewards.judge.verify import read_grade

TENTATIVE = "Maybe Score: 10 at first sight... the key step is wrong, so not that high."


@pytest.mark.parametrize("content, reasoning, expected", [
    (f"<think>{TENTATIVE}</think>\nScore: 3", None, 0.3),  # thinking inline, closed
    (f"{TENTATIVE}</think>\n\nScore: 3", None, 0.3),  # the chat template opened <think> in the prompt
    ("Score: 3", TENTATIVE, 0.3),  # a reasoning parser split it off (reasoning_content)
    (f"<THINKING>{TENTATIVE}</THINKING> Final score: 3", None, 0.3),
])
def test_a_score_in_the_thinking_is_never_read(judge, server, content, reasoning, expected):
    server.answer = lambda body: Reply(content, reasoning=reasoning)
    result = judge().evaluate(["q"], ["an answer"])
    assert result.values == [pytest.approx(expected)]
    assert "10" not in result.reasons[0] and "first sight" not in result.reasons[0]  # the final answer only
    assert result.reasons[0].startswith("judge (number): ") and result.reasons[0].lower().endswith("score: 3")


@pytest.mark.parametrize("content, reasoning, field, says", [
    (f"<think>{TENTATIVE} Score: 10", None, "reasoning_content", "reasoning and no final answer"),  # never closed
    ("", TENTATIVE + " Score: 10", "reasoning_content", "it was still reasoning; raise max_tokens or set thinking_budget"),
    (None, TENTATIVE, "reasoning", "it was still reasoning"),  # vLLM 0.32's field name
])
def test_a_judge_that_ran_out_while_thinking_abstains(judge, server, content, reasoning, field, says):
    server.answer = lambda body: Reply(content, reasoning=reasoning, reasoning_field=field, finish_reason="length")
    result = judge().evaluate(["q"], ["an answer"])
    assert result.values == [None] and result.outcomes == ["error"]
    assert says in result.reasons[0]


def test_logprobs_are_read_after_the_thinking(judge, server):
    tokens = [("<think>", {"<think>": 1.0}), ("maybe", {"maybe": 1.0}), (" 9", {" 9": 1.0}), ("</think>", {"</think>": 1.0}),
              ("\n", {"\n": 1.0}), ("Score", {"Score": 1.0}), (":", {":": 1.0}), (" 4", {" 4": 0.5, " 6": 0.5})]
    server.answer = lambda body: Reply("".join(t for t, _ in tokens), logprobs=tokens)
    result = judge(logprobs=True).evaluate(["q"], ["an answer"])
    assert result.values == [pytest.approx(0.5)]  # E = (4 + 6) / 2 on 0-10, read at the final score's token
    assert "logprobs" in result.reasons[0]


def test_final_answer_keeps_a_tag_the_judge_quotes_mid_answer():
    quoted = 'The response writes "<think>x</think>" in its text. Score: 2'
    assert final_answer(quoted, None) == (quoted, None, False)


def test_reasoning_params_reach_the_request_and_are_checked(judge, server):
    server.answer = lambda body: "Score: 7"
    judge(reasoning_effort="high", thinking_budget=1024, max_tokens=8192).evaluate(["q"], ["a"])
    body = server.bodies[-1]
    assert body["reasoning_effort"] == "high" and body["max_tokens"] == 8192
    assert body["thinking_token_budget"] == 1024 and body["chat_template_kwargs"] == {"thinking_budget": 1024}
    judge().evaluate(["q"], ["b"])
    assert {"reasoning_effort", "thinking_token_budget", "chat_template_kwargs"}.isdisjoint(server.bodies[-1])
    assert server.bodies[-1]["max_tokens"] == 4096  # room for a reasoning model to think by default
    with pytest.raises(ConfigError, match="reasoning_effort must be one of"):
        judge(reasoning_effort="extreme")
    with pytest.raises(ConfigError, match="thinking_budget must be a positive number of tokens below max_tokens"):
        judge(thinking_budget=4096)


# ----- mode: verify ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer, grade", [
    ("\\boxed{A}", "A"), ("The forms are equal.\n\\boxed{B}", "B"), ("\\boxed{\\text{C}}", "C"),
    ("Both give 1/2.\nA", "A"), ("Grade: B", "B"), ("(A)", "A"), ("**C**", "C"), ("A - CORRECT", "A"),
    ("INCORRECT", "B"), ("Final verdict: invalid", "C"),
    ("\\boxed{A} ... on reflection\n\\boxed{B}", "B"),  # the last box decides
    ("A: INCORRECT", None),  # a letter and a word that disagree
    ("I think it is A but maybe B", None), ("\\boxed{12}", None), ("", None),
])
def test_read_grade(answer, grade):
    assert read_grade(answer) == grade


def test_verify_mode_grades_against_the_reference(judge, server):
    def verifier(body):
        text = body["messages"][-1]["content"]
        candidate = text.split("[Candidate's answer]\n", 1)[1].split("\n[End of candidate's answer]", 1)[0]
        reference = text.split("[Standard answer]\n", 1)[1].split("\n", 1)[0]
        if not candidate.strip() or " or " in candidate:
            return "The answer hedges.\n\\boxed{C}"
        return f"<think>Is it {reference}? Possibly \\boxed{{B}}.</think>\n\\boxed{{{'A' if reference in candidate else 'B'}}}"

    server.answer = verifier
    verify = judge(mode="verify")
    result = verify.evaluate(["Half of 1?"] * 3, ["It is 0.5", "It is 1/3", "0.5 or 1/3"], solution=["0.5"] * 3)
    assert result.values == [1.0, 0.0, 0.0]
    assert result.verdicts == [True, False, False]
    assert result.reasons == ["verifier: A (correct)", "verifier: B (incorrect)", "verifier: C (invalid)"]
    sent = server.bodies[0]["messages"][-1]["content"]
    assert "[Standard answer]\n0.5" in sent and "\\boxed{A}, \\boxed{B} or \\boxed{C}" in sent


def test_verify_mode_abstains_on_an_answer_without_a_grade(judge, server):
    server.answer = lambda body: "They look equivalent to me."
    result = judge(mode="verify").evaluate(["q"], ["5"], solution=["5"])
    assert result.values == [None] and result.outcomes == ["error"]
    assert "no grade A, B or C" in result.reasons[0]


def test_verify_mode_needs_a_template_showing_the_reference(judge):
    with pytest.raises(ConfigError, match="never shows the judge the reference"):
        judge(mode="verify", template="Is this right? {completion}")
