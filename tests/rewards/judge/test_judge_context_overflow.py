"""A completion padded past the judge model's context is the completion's failure, not an abstention (issue 33,
item 1): the endpoint's HTTP 400 "maximum context length" is scored 0.0 with its reason; other refusals abstain."""

from __future__ import annotations

import pytest
from judge_server import (  # noqa: F401  (fixtures)
    Reply,
    judge_fixture,
    marker_answer,
    running_server_fixture,
    server_fixture,
)

CONTEXT = 4000  # characters the scripted endpoint's model takes

OVERFLOWS = {
    "openai": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
    "vllm": "This model's maximum context length is 2048 tokens. However, you requested 2100 tokens in the messages",
    "tgi": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5000 `inputs` tokens",
    "llama.cpp": "the request exceeds the available context size, try increasing it",
}


def context_limited(message: str):
    def answer(body):
        length = sum(len(str(m["content"])) for m in body["messages"])
        return Reply(status=400, error=message) if length > CONTEXT else marker_answer(body)
    return answer


@pytest.mark.parametrize("server_says", list(OVERFLOWS))
def test_a_completion_past_the_judges_context_is_a_scored_failure(judge, server, server_says):
    server.answer = context_limited(OVERFLOWS[server_says])
    reward = judge(max_retries=2)
    honest, padded = "The answer is 41. [[3]]", "The answer is 41. " + "Indeed. " * 1000
    result = reward.evaluate(["q", "q"], [honest, padded])
    assert result.values[0] is not None and result.values[1] == 0.0
    assert result.outcomes[1] == "ok" and result.verdicts[1] is False
    assert result.reasons[1].startswith("too long for the judge: HTTP 400")
    assert len(server.bodies) == 2  # a refusal for length is never retried


def test_other_refusals_and_outages_still_abstain(judge, server):
    server.answer = lambda body: Reply(status=400, error="invalid model name")
    assert judge(max_retries=0).evaluate(["q"], ["fine [[5]]"]).scores[0].outcome == "error"
    server.answer = lambda body: Reply(status=503, error="maximum context length is busy")  # not a 400: an outage
    score = judge(max_retries=0).evaluate(["q"], ["fine [[5]]"]).scores[0]
    assert score.value is None and score.outcome == "error"
