"""Endpoint answers of the wrong shape or with hostile numbers, from the real OpenAI-compatible test
server: each is the endpoint's failure (the row abstains, outcome ``error``) under every ``on_error``
policy, never an exception of the reward's own and never a score; hostile logprobs are dropped and
the text is read; a score of 400 digits in the text is no score."""

from __future__ import annotations

import json
import math

import pytest
from judge_server import Reply, judge_fixture, marker_answer, rows, running_server_fixture, server_fixture  # noqa: F401

HUGE = "1" + "0" * 400  # an integer JSON reads, which overflows a float


def completion(content: object = "Score: 6", usage: object = None, logprobs: object = None) -> str:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop",
              "logprobs": logprobs}
    body = {"id": "x", "object": "chat.completion", "choices": [choice]}
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body)


HOSTILE_BODIES = {
    "prompt_tokens 1e999": completion(usage={"prompt_tokens": 1e999, "completion_tokens": 1}),
    "prompt_tokens of 400 digits": completion(usage={"prompt_tokens": 1, "completion_tokens": 1}).replace(
        '"prompt_tokens": 1', f'"prompt_tokens": {HUGE}'),
    "completion_tokens NaN": completion(usage={"prompt_tokens": 1, "completion_tokens": float("nan")}),
    "negative tokens": completion(usage={"prompt_tokens": -5, "completion_tokens": 1}),
    "tokens as booleans": completion(usage={"prompt_tokens": True, "completion_tokens": 1}),
    "tokens as a list": completion(usage={"prompt_tokens": [1], "completion_tokens": 1}),
    "usage a list": completion(usage=[1, 2]),
    "content a number": completion(content=6),
    "content a list": completion(content=["Score: 6"]),
    "message a string": json.dumps({"choices": [{"message": "Score: 6"}]}),
    "choices empty": json.dumps({"choices": []}),
    "choices of numbers": json.dumps({"choices": [1e999]}),
    "a JSON string": json.dumps("Score: 6"),
    "null": "null",
    "an integer of 5000 digits": '{"choices": [], "n": ' + "9" * 5000 + "}",
    "nested 100000 deep": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("on_error", ["none", "zero", "raise"])
def test_a_malformed_answer_is_the_endpoints_failure(server, judge, on_error):
    bodies = list(HOSTILE_BODIES.values())
    server.answer = lambda body: Reply(body=bodies[int(marker_answer(body))])
    reward = judge(on_error=on_error, max_retries=0)
    result = reward.evaluate(*rows(*map(str, range(len(bodies)))))
    for name, value, reason, outcome in zip(HOSTILE_BODIES, result.values, result.reasons, result.outcomes,
                                            strict=True):
        assert value is None and outcome == "error", (name, value, reason)
        assert reason.startswith("judge unavailable: "), (name, reason)
        assert len(reason) < 300
    server.answer = marker_answer
    assert reward.evaluate(*rows("4")).values == [0.4]  # and the next answer of the right shape scores


def token(text: str, alternatives: list[tuple[str, str]]) -> dict:
    """A logprobs entry whose numbers are JSON text as given (so that they can be out of range)."""
    return {"token": text, "logprob": 0, "top_logprobs": [{"token": a, "logprob": f"@{lp}@"} for a, lp in alternatives]}


@pytest.mark.parametrize("logprob", [HUGE, "1e999", "NaN", "5.0", "-" + HUGE])
def test_hostile_logprobs_are_dropped_and_the_text_is_read(server, judge, logprob):
    tokens = [token("Score: ", [("Score: ", "0")]), token("6", [("6", logprob), ("7", "-1.5")])]
    body = completion("Score: 6", usage={"prompt_tokens": 3, "completion_tokens": 2}, logprobs={"content": tokens})
    body = body.replace(f'"@{logprob}@"', logprob).replace('"@-1.5@"', "-1.5").replace('"@0@"', "0")
    server.answer = lambda request: Reply(body=body)
    result = judge(logprobs=True, on_error="raise").evaluate(*rows("ignored"))
    assert result.values == [0.6] and result.reasons[0] == "judge (number): Score: 6"


def test_well_formed_logprobs_still_give_the_expected_score(server, judge):
    tokens = [token("Score: ", [("Score: ", "0")]), token("6", [("6", "-0.5"), ("7", "-1.5")])]
    body = completion("Score: 6", logprobs={"content": tokens})
    body = body.replace('"@-0.5@"', "-0.5").replace('"@-1.5@"', "-1.5").replace('"@0@"', "0")
    server.answer = lambda request: Reply(body=body)
    result = judge(logprobs=True).evaluate(*rows("ignored"))
    p6, p7 = math.exp(-0.5), math.exp(-1.5)
    assert result.values[0] == pytest.approx((6 * p6 + 7 * p7) / (p6 + p7) / 10)


@pytest.mark.parametrize("on_error", ["zero", "raise"])
def test_a_score_of_400_digits_in_the_text_is_no_score(server, judge, on_error):
    server.answer = lambda body: Reply('{"score": ' + HUGE + "}")
    result = judge(parse="json", on_error=on_error).evaluate(*rows("ignored"))
    assert result.values == [None] and result.outcomes == ["error"]
    assert result.reasons[0].startswith("unparsable judge answer")


def test_a_ranking_in_other_digits_is_no_ranking(server, judge):
    server.answer = lambda body: json.dumps({"ranking": ["\u00b2", "1"]})  # a superscript two: a digit, not a number
    reward = judge(mode="groupwise", on_error="raise")
    result = reward.evaluate(["P", "P"], ["q=1", "q=2"])
    assert result.values == [None, None] and "no ranking of all 2 responses" in result.reasons[0]
