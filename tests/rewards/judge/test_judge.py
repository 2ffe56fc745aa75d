"""The judge reward against a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/judge_server.py).

Each completion carries the judge's scripted answer between ``[[`` and ``]]``; failures are
scripted per request with ``server.script``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import subprocess
import sys

import pytest
from judge_server import (  # noqa: F401
    KEY_ENV,
    SECRET,
    JudgeServer,
    Reply,
    judge_fixture,
    marker_answer,
    rows,
    running_server_fixture,
    sent,
    server_fixture,
)

import rewardhub
from rewardhub.rewards.judge.client import Answer
from rewardhub.rewards.judge.errors import JudgeConfigError


def test_scores_chatty_json_and_out_of_range_answers(server, judge):
    answers = ("7", "Score: 9 - clear and correct.", '{"score": 3}', "I'd say 12/10!", "Score: 15", "I refuse.",
               "I looked at 3 aspects of the answer and all of them are handled well.")  # fmt: skip
    result = judge().evaluate(*rows(*answers))
    assert result.values == [0.7, 0.9, 0.3, 1.0, 1.0, None, None]
    assert result.outcomes == ["ok"] * 5 + ["error"] * 2  # the judge gave no usable answer
    assert "clipped 15 to 10" in result.reasons[4]
    assert result.reasons[5] == "unparsable judge answer (no score in a score position): 'I refuse.'"
    assert result.reasons[6] == ("unparsable judge answer (no score in a score position): "
                                 "'I looked at 3 aspects of the answer and all of them are handled well.'")  # fmt: skip
    assert server.requests == 7
    body = server.bodies[0]
    assert body["model"] == "judge-test" and body["temperature"] == 0.0 and body["max_tokens"] == 4096
    assert "[Question]\nquestion 0\n" in sent(server, "completion 0")[0]["content"]


def test_unparsable_answer_reason_is_truncated(judge):
    result = judge().evaluate(*rows("blah " * 200))
    assert result.values == [None] and len(result.reasons[0]) < 300 and result.reasons[0].endswith("...'")


def test_binary_template_against_reference_column(server, judge):
    reward = judge(template="binary", reference_column="answer", system_prompt="You grade maths.")
    prompts, completions = rows("Yes", "No, it differs.", "The final answer is correct.")
    result = reward.evaluate(prompts, completions, answer=["4", "5", "6"])
    assert result.values == [1.0, 0.0, 1.0]
    assert result.verdicts == [True, False, True]
    messages = sent(server, "completion 1")
    assert messages[0] == {"role": "system", "content": "You grade maths."}
    assert "[Reference answer]\n5\n" in messages[1]["content"]


def test_custom_template_file_with_column_and_missing_column(server, judge, tmp_path):
    template = tmp_path / "rubric.txt"
    template.write_text('Level {level}. Grade: {completion}\nReply {{"score": N}} with N in 1..5', encoding="utf-8")
    reward = judge(template=str(template), parse="json", min_score=1, max_score=5)
    result = reward.evaluate(*rows('{"score": 5}', '{"score": 2}'), level=[1, 2])
    assert result.values == [1.0, 0.25]
    assert sent(server, "completion 1")[0]["content"].startswith("Level 2. Grade: completion 1")
    missing = judge(template="binary").evaluate(*rows("yes"))
    assert missing.values == [None] and "needs column 'solution'" in missing.reasons[0]


def test_one_bad_row_does_not_stop_the_others(server, judge):
    completions = ["fine [[8]]", [{"role": "assistant", "content": 42}], "also fine [[6]]"]
    result = judge().evaluate(["q1", "q2", "q3"], completions)
    assert result.values[0] == 0.8 and result.values[1] is None and result.values[2] == 0.6
    assert result.reasons[1] and server.requests == 2


def test_identical_requests_in_a_batch_are_sent_once(server, judge):
    reward = judge()
    prompts = ["same question"] * 8
    completions = ["a [[4]]"] * 4 + ["b [[6]]"] * 4  # a GRPO group with repeated completions
    assert reward.evaluate(prompts, completions).values == [0.4] * 4 + [0.6] * 4
    assert server.requests == 2
    assert reward.counters.deduplicated == 6 and reward.counters.requests == 2


def test_concurrency_limit_is_respected(server, judge):
    server.latency, server.gather = 0.2, 5  # the cap is reached however slowly the client sends; a 6th would show
    result = judge(concurrency=5, deadline=None).evaluate(*rows(*[str(i % 11) for i in range(20)]))
    assert result.values == [(i % 11) / 10 for i in range(20)]
    assert server.max_in_flight == 5


def test_retries_429_honouring_retry_after_and_500s(server, judge):
    # the backoff would wait ~100 s: only honouring Retry-After (0.2 s) lets this finish in the deadline
    server.script.extend([Reply(status=429, headers={"Retry-After": "0.2"}), Reply(status=429, headers={"retry-after-ms": "100"})])
    reward = judge(backoff=100.0, max_backoff=100.0, deadline=10.0)
    result = reward.evaluate(*rows("8"))
    assert result.values == [0.8]
    assert server.requests == 3 and reward.counters.retries == 2 and reward.counters.failures == 0

    server.reset()
    server.script.extend([Reply(status=500), Reply(status=503)])
    reward = judge()
    assert reward.evaluate(*rows("3")).values == [0.3]
    assert server.requests == 3 and reward.counters.retries == 2


def test_gives_up_after_max_retries_and_abstains(server, judge):
    server.script.extend([Reply(status=500, error="overloaded")] * 3)
    reward = judge(max_retries=2)
    result = reward.evaluate(*rows("9"))
    assert result.values == [None]
    assert result.reasons[0] == "judge unavailable: HTTP 500: overloaded after 3 attempts"
    assert server.requests == 3 and reward.counters.failures == 1


def test_retry_after_beyond_the_deadline_gives_up_at_once(server, judge):
    server.script.append(Reply(status=429, headers={"Retry-After": "30"}))
    result = judge(deadline=2.0).evaluate(*rows("9"))
    assert result.values == [None]
    assert result.reasons[0] == "judge unavailable: HTTP 429: scripted failure; no time left to retry before the batch deadline"
    assert server.requests == 1


def test_client_errors_are_not_retried(server, judge):
    server.script.append(Reply(status=400, error="bad request"))
    result = judge().evaluate(*rows("9"))
    assert result.values == [None] and "HTTP 400: bad request" in result.reasons[0]
    assert server.requests == 1


def test_hung_request_times_out_and_is_retried(server, judge):
    server.script.append(Reply(hang=True))
    reward = judge(timeout=2.0)  # the retry's answer comes well inside it; the hung request waits it out
    assert reward.evaluate(*rows("6")).values == [0.6]
    assert server.requests == 2 and reward.counters.retries == 1


def test_malformed_response_body_abstains(server, judge):
    server.script.extend([Reply(body='{"choices": [oops'), Reply(body="[1, 2]"), Reply(content=None)])
    result = judge().evaluate(*rows("1", "2", "3"))
    assert result.values == [None, None, None]
    assert all(r.startswith("judge unavailable: ") for r in result.reasons)
    assert any("invalid response" in r for r in result.reasons)
    assert any("no chat completion" in r for r in result.reasons)
    assert any("no text" in r for r in result.reasons)
    assert server.requests == 3


def test_batch_deadline_times_out_unanswered_rows_and_keeps_the_rest(server, judge, monkeypatch):
    server.answer = lambda body: Reply(hang=True) if "slow" in body["messages"][0]["content"] else marker_answer(body)
    reward = judge(deadline=1.0, timeout=30.0, on_error="zero")
    result = reward.evaluate(["q"] * 3, ["fast [[7]]", "slow one", "slow two"])
    assert result.values == [0.7, None, None] and result.outcomes == ["ok", "timeout", "timeout"]
    assert result.reasons[1] == "judge gave no answer before the batch deadline of 1 s"
    assert reward.counters.failures == 2
    # from a config too: the judge's deadline param is its own, not the core's per-entry timeout
    monkeypatch.setenv(KEY_ENV, SECRET)
    config = {"rewards": [{"name": "judge", "params": {"base_url": server.base_url, "api_key_env": KEY_ENV,
                                                       "deadline": 1.0, "timeout": 30.0}}]}  # fmt: skip
    loaded = rewardhub.load(config).reward_funcs[0]
    assert loaded.evaluate(["q"] * 2, ["fast [[7]]", "slow"]).outcomes == ["ok", "timeout"]
    loaded.close()


@pytest.mark.parametrize("on_error", ["none", "zero", "raise"])
def test_endpoint_down_abstains_under_every_error_policy(judge, on_error):
    with JudgeServer() as gone:
        url = gone.base_url
    reward = judge(base_url=url, max_retries=1, on_error=on_error)
    result = reward.evaluate(*rows("5", "6"))
    assert result.values == [None, None] and result.outcomes == ["error", "error"]
    assert all("connection error" in r and "after 2 attempts" in r for r in result.reasons)
    assert reward.counters.requests == 4 and reward.counters.retries == 2 and reward.counters.failures == 2


def test_rpm_budget_holds_back_requests(server, judge):
    # 6 requests per minute: the burst is 6, the 7th would wait 10 s, past the 8 s deadline (a deadline the
    # first six meet on a loaded machine too: counts, not timings, are what this checks)
    result = judge(rpm=6, deadline=8).evaluate(*rows(*"12345678"))
    assert server.requests == 6
    assert result.values[:6] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert result.values[6:] == [None, None] and "deadline" in result.reasons[7]


def test_tpm_budget_holds_back_requests(server, judge):
    # each request books 4 prompt tokens (18 characters / 4) + max_tokens 100: a budget of 250 fits two,
    # the third would wait (312 - 250) / (250 / 60 s) = 15 s, past the 8 s deadline. The judge writes to its
    # max_tokens, so no answer hands budget back, whenever the third request asks (on a busy machine, late)
    server.answer = lambda body: marker_answer(body) + "\n" * 400
    result = judge(tpm=250, max_tokens=100, deadline=8, template="{completion}").evaluate(*rows(*"1234"))
    assert server.requests == 2
    assert result.values == [0.1, 0.2, None, None]


def test_logprobs_expected_score(server, judge):
    server.answer = lambda body: Reply("7", logprobs=[("7", {"7": 0.6, "8": 0.3, "x": 0.1})])
    reward = judge(logprobs=True, max_tokens=1)
    result = reward.evaluate(*rows("ignored"))
    assert result.values[0] == pytest.approx((7 * 0.6 + 8 * 0.3) / 0.9 / 10)
    assert server.bodies[0]["logprobs"] is True and server.bodies[0]["top_logprobs"] == 20
    # an endpoint without logprobs still gets the parsed text
    server.answer = lambda body: Reply("Score: 4")
    assert reward.evaluate(["other"], ["x"]).values == [0.4]
    # malformed logprobs are dropped and the text is read
    tokens = [{"token": "Score: ", "top_logprobs": []}, {"token": "6", "top_logprobs": [{"token": "6", "logprob": None}]}]
    malformed = {"choices": [{"message": {"content": "Score: 6"}, "finish_reason": "stop", "logprobs": {"content": tokens}}]}
    server.answer = lambda body: Reply(body=json.dumps(malformed))
    assert reward.evaluate(["fourth"], ["x"]).values == [0.6]
    # a number token outside a score position is not a score, with or without its logprobs
    server.answer = lambda body: Reply("I checked 3 aspects", logprobs=[("I checked ", {"I checked ": 1.0}),
                                       ("3", {"3": 0.9, "4": 0.1}), (" aspects", {" aspects": 1.0})])  # fmt: skip
    result = reward.evaluate(["third"], ["x"])
    assert result.values == [None] and result.reasons[0].endswith("'I checked 3 aspects'")


async def test_trl_call_logs_counters_and_reasons(server, judge):
    reward = judge()
    metrics, extras = {}, {}
    completions = [[{"role": "assistant", "content": "a [[5]]"}], [{"role": "assistant", "content": "a [[5]]"}],
                   [{"role": "assistant", "content": "b [[x]]"}]]  # fmt: skip
    values = await reward(
        prompts=[[{"role": "user", "content": "q"}]] * 3,
        completions=completions,
        completion_ids=[[1], [1], [2]],
        log_metric=metrics.__setitem__,
        log_extra=extras.__setitem__,
    )
    assert values == [0.5, 0.5, None]
    assert metrics["judge/requests"] == 2.0 and metrics["judge/deduplicated"] == 1.0
    assert metrics["judge/failures"] == 0.0 and metrics["judge/cache_hits"] == 0.0
    assert metrics["judge/prompt_tokens"] > 0 and metrics["judge/completion_tokens"] == 2.0
    assert metrics["judge/abstained"] == pytest.approx(1 / 3)
    assert extras["judge/reason"][2].startswith("unparsable judge answer")


def test_works_across_event_loops_and_pickling(server, judge):
    reward = judge()

    async def call_once(answer: str) -> list[float | None]:
        try:
            return await reward(*rows(answer))
        finally:
            await reward.aclose()

    assert asyncio.run(call_once("2")) == [0.2]
    assert asyncio.run(call_once("3")) == [0.3]  # a fresh loop gets its own HTTP client
    assert reward.evaluate(*rows("4")).values == [0.4]
    clone = pickle.loads(pickle.dumps(reward))
    assert clone.evaluate(*rows("5")).values == [0.5]
    clone.close()


def test_in_a_reward_set_with_weights(server, judge, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    config = {"rewards": [{"name": "judge", "weight": 2.0,
                           "params": {"base_url": server.base_url, "api_key_env": KEY_ENV, "model": "m"}}]}  # fmt: skip
    rewards = rewardhub.load(config)
    scored = rewards.score([{"prompt": "q", "completion": "c [[8]]"}])
    assert scored[0]["rewards"]["judge"] == 0.8 and scored[0]["reward"] == pytest.approx(1.6)
    rewards.reward_funcs[0].close()


def test_api_key_is_sent_but_never_logged_or_reported(server, judge, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    server.script.extend([Reply(status=401, echo_key=True, error="invalid key"), Reply(status=500, echo_key=True)] + [Reply(status=500, echo_key=True)] * 2)
    reward = judge(max_retries=2)
    first = reward.evaluate(*rows("1"))
    second = reward.evaluate(*rows("2"))
    assert first.values == [None] and second.values == [None]
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"  # the key was used...
    reported = " ".join(first.reasons + second.reasons)
    assert "key used: ***" in reported
    out, err = capsys.readouterr()
    for text in (reported, caplog.text, out, err, repr(reward), str(vars(reward)), str(pickle.dumps(reward))):
        assert SECRET not in text  # ...and never shown


def test_api_key_echoed_in_answers_never_reaches_reasons_logs_or_cache(server, judge, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "judge.sqlite"
    replies = {"7": Reply("Score: 7", echo_key=True), "x": Reply("x" * 150, echo_key=True),  # the key at ~190
               "y": Reply(body='{"choices": "{authorization}"}', echo_key=True)}  # fmt: skip
    server.answer = lambda body: replies[marker_answer(body)]
    reward = judge(cache=str(path), max_retries=0)
    result = reward.evaluate(*rows("7", "x", "y"))
    assert result.values == [0.7, None, None]
    assert result.reasons[0] == "judge (number): Score: 7 (your request said Authorization: Bearer ***)"
    assert result.reasons[1].startswith("unparsable judge answer") and result.reasons[1].endswith("Bearer ***)'")
    assert result.reasons[2] == ("judge unavailable: endpoint returned no chat completion ('choices' is not a list of "
                                 "objects): {'choices': 'Bearer ***'}")
    reward.close()  # the answers are in the cache file now
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"Bearer ***" in stored and SECRET[:8].encode() not in stored
    out, err = capsys.readouterr()
    for text in (" ".join(result.reasons), caplog.text, out, err):
        assert SECRET[:8] not in text  # redacted before the cut at 200 characters, which could leave a part


def test_redacted_answers_drop_logprobs_that_spell_the_key():
    tokens = [("Score: 7 ", [("Score: 7 ", 0.0)]), (SECRET[:9], [(SECRET[:9], 0.0)]), (SECRET[9:], [(SECRET[9:], 0.0)])]
    answer = Answer(f"Score: 7 {SECRET}", tokens)
    assert answer.redacted(SECRET) == Answer("Score: 7 ***", None)
    assert answer.redacted("EMPTY") is answer and Answer("Score: 7").redacted(SECRET) == Answer("Score: 7")


def test_config_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(JudgeConfigError, match="environment variable 'OPENAI_API_KEY'"):
        rewardhub.get("judge")
    with pytest.raises(JudgeConfigError, match="parse must be one of"):
        rewardhub.get("judge", base_url="http://127.0.0.1:9/v1", parse="vibes")
    with pytest.raises(JudgeConfigError, match="greater than min_score"):
        rewardhub.get("judge", base_url="http://127.0.0.1:9/v1", min_score=5, max_score=1)
    with pytest.raises(JudgeConfigError, match="concurrency must be positive"):
        rewardhub.get("judge", base_url="http://127.0.0.1:9/v1", concurrency=0)
    with pytest.raises(rewardhub.ConfigError, match="unknown param"):
        rewardhub.get("judge", base_url="http://127.0.0.1:9/v1", api_key="sk-inline")


def test_registered_with_its_params_and_light_to_import():
    spec = rewardhub.registry.spec("judge")
    from rewardhub.rewards.judge.factory import JUDGE

    assert spec.source == "rewardhub" and spec.factory is JUDGE  # mode "pointwise" (the default) builds a JudgeReward
    assert {"base_url", "model", "api_key_env", "template", "concurrency", "max_retries", "timeout", "cache",
            "temperature", "max_tokens", "rpm", "tpm", "deadline", "logprobs"} <= set(spec.params)  # fmt: skip
    code = "import sys, rewardhub; rewardhub.list_rewards(); print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
