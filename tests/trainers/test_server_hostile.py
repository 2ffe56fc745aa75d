"""The reward server under hostile input and stuck rewards: 4xx or a score, never a 500, never wedged."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from serving import GATE, ensure_registered, running_server, serve_process

import rewardhub
from rewardhub.trainers.server import create_app

# exact_match echoes the answer into its reason; length_penalty reuses its verdicts (the memo keys rows).
ECHOING = [
    {"name": "exact_match", "params": {"extractors": ["whole"]}},
    {"name": "length_penalty", "params": {"mode": "cosine", "correctness": "exact_match", "max_completion_len": 10}},
]
DEEP = "[" * 900 + "]" * 900


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


@pytest.fixture(scope="module")
def url():
    with running_server(create_app(rewardhub.load(ECHOING))) as base:
        yield base


def post(url: str, path: str, raw: str) -> httpx.Response:
    return httpx.post(f"{url}{path}", content=raw.encode("utf-8"), headers={"content-type": "application/json"},
                      timeout=60)


def test_a_lone_surrogate_echoed_into_a_reason_comes_back_escaped(url):
    reply = post(url, "/score", '{"rows": [{"prompt": "q", "completion": "4\\ud800", "solution": "42"}]}')
    assert reply.status_code == 200
    body = json.loads(reply.content)  # the escape reads back as the same lone surrogate
    assert body["components"]["exact_match"] == [0.0] and "4\ud800" in body["reasons"]["exact_match"][0]
    openrlhf = post(url, "/", '{"query": ["q 4\\udfff"], "prompts": ["q"], "labels": ["42"]}')
    assert openrlhf.status_code == 200 and json.loads(openrlhf.content)["extra_logs"]["exact_match"] == [0.0]


@pytest.mark.parametrize("content", [5, {"image": "x"}, [{"type": "image_url", "image_url": {"url": "x"}}], None])
def test_chat_prompts_with_non_text_content_are_scored(url, content):
    prompt = [{"role": "user", "content": content}]
    rows = [{"prompt": prompt, "completion": c, "solution": "42"} for c in ("42", "41")]
    reply = httpx.post(f"{url}/score", json={"rows": rows}, timeout=60)
    assert reply.status_code == 200, reply.text
    assert reply.json()["components"]["exact_match"] == [1.0, 0.0]


@pytest.mark.parametrize("where", ["prompt", "completion", "solution", "extra"])
def test_bodies_nested_900_deep_get_an_answer_not_a_500(url, where):
    row = {"prompt": '"q"', "completion": '"42"', "solution": '"42"'}
    row[where] = DEEP
    raw = '{"rows": [{' + ", ".join(f'"{k}": {v}' for k, v in row.items()) + "}]}"
    reply = post(url, "/score", raw)
    assert reply.status_code in (200, 400, 422), reply.text
    assert post(url, "/score", '{"rows": [' + "[" * 5000 + "]" * 5000 + "]}").status_code == 400


def test_the_same_non_text_prompt_never_raises_out_of_a_trl_style_call():
    rewards = rewardhub.load(ECHOING)
    prompt = [{"role": "user", "content": {"image": "x"}}]
    for reward in rewards.reward_funcs:  # the dependency first calls exact_match through its memo
        assert len(reward(prompts=[prompt, prompt], completions=["42", "4"], solution=["42", "42"])) == 2


def test_stuck_requests_time_out_and_never_wedge_the_server(tmp_path: Path):
    config = tmp_path / "stuck.yaml"
    config.write_text("rewards:\n  - name: th_gate\n  - name: th_contains\n")
    stuck = {"rows": [{"completion": "x", "wait": "yes", "solution": "x"}]}
    with serve_process(["--config", str(config), "--timeout", "1", "--threads", "4"]) as (base, _):
        with ThreadPoolExecutor(8) as pool:  # more stuck requests than the server has threads: all answered
            replies = list(pool.map(lambda _: httpx.post(f"{base}/score", json=stuck, timeout=60), range(8)))
        for reply in replies:
            body = reply.json()
            assert body["outcomes"]["th_gate"] == ["timeout"] and body["components"]["th_contains"] == [1.0]
        # Still serving: the other reward scores, the stuck one times out at once while its threads run on.
        fresh = httpx.post(f"{base}/score", json={"rows": [{"completion": "x", "solution": "x"}]}, timeout=30).json()
        assert fresh["components"]["th_contains"] == [1.0] and fresh["outcomes"]["th_gate"] == ["timeout"]
        assert "still running past their 1 s deadline" in fresh["reasons"]["th_gate"][0]
        assert httpx.get(f"{base}/health", timeout=30).status_code == 200


def test_a_reward_whose_stuck_calls_return_scores_again():
    GATE.clear()
    rewards = rewardhub.load([{"name": "th_gate", "timeout": 0.5}])
    with running_server(create_app(rewards)) as base:
        for _ in range(5):
            reply = httpx.post(f"{base}/score", json={"rows": [{"completion": "x", "wait": "yes"}]}, timeout=30)
            assert reply.json()["outcomes"]["th_gate"] == ["timeout"]
        GATE.set()  # the stuck calls return
        deadline = time.monotonic() + 120  # a bound on a hang, not a timing: the calls return at once
        while time.monotonic() < deadline:
            reply = httpx.post(f"{base}/score", json={"rows": [{"completion": "x"}]}, timeout=30).json()
            if reply["values"] == [1.0]:
                break
            time.sleep(0.05)
        assert reply["values"] == [1.0] and reply["outcomes"]["th_gate"] == ["ok"]
