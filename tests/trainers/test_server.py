"""The reward server over real HTTP on 127.0.0.1: protocols, validation, auth, concurrency, load."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from serving import (
    COMPOSED,
    GATE,
    ensure_registered,
    free_port,
    reuse_after_idle,
    running_server,
    serve_process,
)

import rewardhub
from rewardhub.trainers.server import create_app

TOKEN = "s3cret-token"


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


@pytest.fixture
def url():
    with running_server(create_app(rewardhub.load(COMPOSED))) as base:
        yield base


def test_openrlhf_request_and_response_exactly(url):
    prompts = ["Q: 2+2? A:", "Q: capital of France? A:", "Q: 3*3? A:"]
    responses = [" it is 4", " Paris!!", " 10"]
    body = {"query": [p + r for p, r in zip(prompts, responses, strict=True)], "prompts": prompts, "labels": ["4", "Paris", "9"]}
    reply = httpx.post(f"{url}/get_reward", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert set(data) == {"rewards", "scores", "extra_logs"}
    # th_contains (w=1), length = min(len/20, 1) (w=0.5), th_sometimes: 0.5 on odd lengths else abstains (w=0.25)
    contains = [1.0, 1.0, 0.0]
    length = [len(r) / 20 for r in responses]
    sometimes = [0.5 if len(r) % 2 else None for r in responses]
    expected = [c + 0.5 * n + (0.25 * s if s is not None else 0.0) for c, n, s in zip(contains, length, sometimes, strict=True)]
    assert data["rewards"] == pytest.approx(expected)
    assert data["scores"] == pytest.approx([min(e / 1.75, 1.0) for e in expected])
    assert data["extra_logs"]["th_contains"] == contains
    assert data["extra_logs"]["length"] == pytest.approx(length)
    # an abstention is NaN (OpenRLHF's plain mean must not count it as 0.0), with its own indicator
    assert [math.isnan(v) for v in data["extra_logs"]["th_sometimes"]] == [s is None for s in sometimes]
    assert data["extra_logs"]["th_sometimes/abstained"] == [1.0 if s is None else 0.0 for s in sometimes]
    assert data["extra_logs"]["th_contains/abstained"] == [0.0, 0.0, 0.0]
    assert data["extra_logs"]["abstained"] == [0.0, 0.0, 0.0]
    # the root path speaks the same protocol
    assert json.dumps(httpx.post(f"{url}/", json=body, timeout=30).json()) == json.dumps(data)


def test_openrlhf_padding_and_eos_tokens_are_stripped_from_queries(url):
    prompt = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    body = {"query": ["<pad><pad>" + prompt + "four 4!<|im_end|><pad>"], "prompts": [prompt], "labels": ["4"]}
    data = httpx.post(f"{url}/get_reward", json=body, timeout=30).json()
    assert data["extra_logs"]["th_contains"] == [1.0]
    assert data["extra_logs"]["length"] == [len("four 4!") / 20]  # exactly the response, nothing else
    assert data["extra_logs"]["th_sometimes"] == [0.5]  # 7 chars: odd


def test_openrlhf_empty_labels_mean_no_label(url):
    """OpenRLHF sends "" as the label without --data.label_key: no gold answer, not a wrong one."""
    data = httpx.post(f"{url}/get_reward", json={"query": ["Q: x 5"], "prompts": ["Q:"], "labels": [""]},
                      timeout=30).json()
    assert math.isnan(data["extra_logs"]["th_contains"][0])
    assert data["extra_logs"]["th_contains/abstained"] == [1.0]


def test_openrlhf_query_without_prompts_scores_the_whole_query(url):
    data = httpx.post(f"{url}/", json={"query": ["the answer is 7"], "labels": ["7"]}, timeout=30).json()
    assert data["extra_logs"]["th_contains"] == [1.0]
    assert data["extra_logs"]["length"] == [min(len("the answer is 7") / 20, 1.0)]


def test_native_endpoint_returns_values_components_and_reasons(url):
    rows = [
        {"prompt": "p1", "completion": "abc 42", "solution": "42"},
        {"prompt": "p2", "completion": [{"role": "assistant", "content": "no"}], "solution": "42"},
        {"prompt": "p3", "completion": 12345, "solution": "42"},  # not text: abstains, others still scored
    ]
    reply = httpx.post(f"{url}/score", json={"rows": rows}, timeout=30)
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert data["components"]["th_contains"] == [1.0, 0.0, None]
    assert data["components"]["length"] == pytest.approx([6 / 20, 2 / 20, None])
    assert data["components"]["th_sometimes"] == [None, None, None]
    assert data["values"] == pytest.approx([1.0 + 0.5 * 6 / 20, 0.5 * 2 / 20, None])
    assert data["reasons"]["th_contains"][:2] == ["found the solution", "missing '42'"]
    assert data["reasons"]["th_sometimes"][0] == "even length: not applicable"
    assert "not text" in data["reasons"]["th_contains"][2]
    assert data["outcomes"]["th_contains"] == ["ok", "ok", "abstain"]
    assert data["outcomes"]["th_sometimes"] == ["abstain"] * 3


def test_health_really_scores_a_probe_row(url):
    reply = httpx.get(f"{url}/health", timeout=30)
    assert reply.status_code == 200
    data = reply.json()
    assert data["status"] == "ok"
    assert set(data["rewards"]) == {"th_contains", "length", "th_sometimes"}
    assert data["rewards"]["th_contains"] == {"value": 1.0, "reason": "found the solution", "errors": 0}


def test_health_reports_503_when_scoring_fails():
    app = create_app(rewardhub.load(["th_gate"]), probe_row={"completion": "x", "wait": "yes"}, health_timeout=0.2)
    GATE.clear()
    try:
        with running_server(app) as base:
            reply = httpx.get(f"{base}/health", timeout=30)
    finally:
        GATE.set()
    assert reply.status_code == 503
    assert "took longer than 0.2 s" in reply.json()["error"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[1, 2]", 400, "must be a JSON object"),
        (b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400, "nested too deeply"),
        (b'{"prompts": ["a"]}', 422, "missing 'query'"),
        (b'{"query": "abc"}', 422, "'query' must be a list of strings"),
        (b'{"query": ["a", 3]}', 422, "'query'[1] must be a string"),
        (b'{"query": ["a", "b"], "prompts": ["a"]}', 422, "'prompts' has 1 items but 'query' has 2"),
        (b'{"query": ["a"], "labels": ["x", "y"]}', 422, "'labels' has 2 items but 'query' has 1"),
    ],
)
def test_bad_openrlhf_requests_get_4xx_with_a_message(url, body, status, message):
    reply = httpx.post(f"{url}/get_reward", content=body, headers={"content-type": "application/json"}, timeout=30)
    assert reply.status_code == status
    assert message in reply.json()["error"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"rows": []}, "'rows' must be a non-empty list"),
        ({"rows": [1]}, "rows[0] must be an object"),
        ({"rows": [{"prompt": "p"}]}, "rows[0] has no 'completion'"),
    ],
)
def test_bad_native_requests_get_422(url, body, message):
    reply = httpx.post(f"{url}/score", json=body, timeout=30)
    assert reply.status_code == 422
    assert message in reply.json()["error"]


def test_oversize_bodies_are_refused_with_413():
    app = create_app(rewardhub.load(COMPOSED), max_body_bytes=1000)
    with running_server(app) as base:
        big = {"query": ["x" * 2000]}
        reply = httpx.post(f"{base}/get_reward", json=big, timeout=30)
        assert reply.status_code == 413
        assert "exceeds the limit of 1000 bytes" in reply.json()["error"]

        def chunks():  # no Content-Length: the limit is enforced while streaming
            for _ in range(20):
                yield b" " * 100

        reply = httpx.post(f"{base}/get_reward", content=chunks(), timeout=30)
        assert reply.status_code == 413
        assert httpx.post(f"{base}/get_reward", json={"query": ["ok"]}, timeout=30).status_code == 200


def test_bearer_token_guards_scoring_but_not_health():
    with running_server(create_app(rewardhub.load(COMPOSED), token=TOKEN)) as base:
        body = {"query": ["x"]}
        missing = httpx.post(f"{base}/get_reward", json=body, timeout=30)
        assert missing.status_code == 401
        assert "missing bearer token" in missing.json()["error"]
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = httpx.post(f"{base}/score", json={"rows": [{"completion": "x"}]},
                           headers={"Authorization": "Bearer nope"}, timeout=30)
        assert wrong.status_code == 401
        assert "invalid bearer token" in wrong.json()["error"]
        good = httpx.post(f"{base}/get_reward", json=body, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert good.status_code == 200
        assert httpx.get(f"{base}/health", timeout=30).status_code == 200


@pytest.mark.parametrize("slow_reward", ["th_gate", "th_async_gate"])
def test_a_slow_request_does_not_block_others(slow_reward):
    """A request stuck in a slow reward (sync: in a pool thread; async: on the loop) while others finish."""
    GATE.clear()
    app = create_app(rewardhub.load([slow_reward]))
    with running_server(app) as base:
        slow_result = {}

        def slow_request():
            slow_result["reply"] = httpx.post(
                f"{base}/score", json={"rows": [{"completion": "x", "wait": "yes"}]}, timeout=60
            )

        slow = threading.Thread(target=slow_request)
        slow.start()
        try:
            fast = [httpx.post(f"{base}/score", json={"rows": [{"completion": "y"}]}, timeout=30) for _ in range(5)]
            health = httpx.get(f"{base}/health", timeout=30)
            assert not slow_result, "the slow request finished before the gate opened"
            assert [r.json()["values"] for r in fast] == [[1.0]] * 5
            assert health.status_code == 200
        finally:
            GATE.set()
            slow.join(timeout=60)
        assert slow_result["reply"].json()["values"] == [1.0]


def _load_request(number: int) -> tuple[dict, list[float]]:
    """Request ``number``: 1-4 queries; query i contains the label iff bit i of ``number`` is set."""
    label = f"L{number}"
    size = 1 + number % 4
    hits = [float(number >> i & 1) for i in range(size)]
    queries = [f"Q: answer {label if hit else 'none'} #{i}" for i, hit in enumerate(hits)]
    return {"query": queries, "prompts": ["Q:"] * size, "labels": [label] * size}, hits


def test_load_32_concurrent_clients_lose_nothing(url):
    """3,200 requests from 32 clients: every request answered, each with its own values."""
    n_clients, per_client = 32, 100

    async def client(index: int, http: httpx.AsyncClient) -> int:
        correct = 0
        for j in range(per_client):
            body, expected = _load_request(index * per_client + j)
            reply = await http.post(f"{url}/get_reward", json=body)
            reply.raise_for_status()
            correct += reply.json()["extra_logs"]["th_contains"] == expected
        return correct

    async def main():
        # httpx's 5 s idle expiry is well under the server's keep-alive: the client always drops an idle
        # connection first, so no request goes out on one the server is closing.
        limits = httpx.Limits(max_connections=n_clients)
        async with httpx.AsyncClient(limits=limits, timeout=60) as http:
            start = time.perf_counter()
            counts = await asyncio.wait_for(asyncio.gather(*(client(i, http) for i in range(n_clients))), 300)
            return counts, time.perf_counter() - start

    counts, seconds = asyncio.run(main())
    assert counts == [per_client] * n_clients
    total = n_clients * per_client
    print(f"\nload: {total} requests from {n_clients} clients in {seconds:.1f} s = {total / seconds:.0f} req/s")


def test_access_log_has_one_line_per_request(caplog):
    with caplog.at_level(logging.INFO, logger="rewardhub.access"):
        with running_server(create_app(rewardhub.load(COMPOSED))) as base:
            httpx.post(f"{base}/get_reward", json={"query": ["x 5"], "labels": ["5"]}, timeout=30)
            httpx.post(f"{base}/score", content=b"{not json", timeout=30)
            httpx.get(f"{base}/health", timeout=30)
    lines = [r.getMessage() for r in caplog.records if r.name == "rewardhub.access"]
    assert len(lines) == 3
    assert lines[0].startswith("127.0.0.1:") and '"POST /get_reward" 200 ' in lines[0] and lines[0].endswith(" ms")
    assert '"POST /score" 400 ' in lines[1]
    assert '"GET /health" 200 ' in lines[2]


def test_access_log_can_be_switched_off(caplog):
    with caplog.at_level(logging.INFO, logger="rewardhub.access"):
        with running_server(create_app(rewardhub.load(COMPOSED), access_log=False)) as base:
            httpx.get(f"{base}/health", timeout=30)
    assert not [r for r in caplog.records if r.name == "rewardhub.access"]


def test_group_assembly_over_http(tmp_path):
    """Four one-query requests of one prompt, sent concurrently, are voted on as one group."""
    vote = {"rewards": [{"name": "majority_vote", "params": {"group_size": 4, "equivalence": "string"}}]}
    with running_server(create_app(rewardhub.load(vote))) as base:
        async def main():
            async with httpx.AsyncClient(timeout=60) as http:
                bodies = [{"query": [f"Q: 1+1? A: {a}"], "prompts": ["Q: 1+1? A:"]} for a in (2, 2, 3, 2)]
                return await asyncio.gather(*(http.post(f"{base}/get_reward", json=b) for b in bodies))

        replies = asyncio.run(main())
        assert [r.json()["rewards"][0] for r in replies] == [1.0, 1.0, 0.0, 1.0]
        missing = httpx.post(f"{base}/get_reward", json={"query": ["x"]}, timeout=30)
        assert missing.status_code == 422 and "missing 'prompts'" in missing.json()["error"]
        # native rows group by their 'group' field (verl's shim sends one), else by prompt
        rows = [{"completion": f"A: {a}", "group": "g1"} for a in (5, 5, 6, 5)]
        data = httpx.post(f"{base}/score", json={"rows": rows}, timeout=60).json()
        assert data["values"] == [1.0, 1.0, 0.0, 1.0]
        unkeyed = httpx.post(f"{base}/score", json={"rows": [{"completion": "A: 5"}]}, timeout=30)
        assert unkeyed.status_code == 422 and "rows[0] has neither 'group' nor 'prompt'" in unkeyed.json()["error"]


def test_serve_command_in_a_real_process(tmp_path: Path):
    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(COMPOSED))
    env = {**os.environ, "RH_TEST_TOKEN": TOKEN}
    with serve_process(["--config", str(config), "--token-env", "RH_TEST_TOKEN", "--log-level", "warning"],
                       env=env) as (base, proc):
        headers = {"Authorization": f"Bearer {TOKEN}"}
        data = httpx.post(f"{base}/get_reward", json={"query": ["x 5"], "labels": ["5"]}, headers=headers,
                          timeout=30).json()
        assert data["extra_logs"]["th_contains"] == [1.0]
        assert httpx.post(f"{base}/get_reward", json={"query": ["x"]}, timeout=30).status_code == 401
    log = proc.stderr.read()
    assert '"POST /get_reward" 200 ' in log and '"POST /get_reward" 401 ' in log  # the access log, on stderr


def test_the_server_keeps_idle_connections_longer_than_clients_do(tmp_path: Path):
    """The keep-alive race (a client reusing a connection the server is closing, which fails a request
    the server never read) cannot happen when clients always drop idle connections first: the server
    keeps them longer than httpx's and aiohttp's pools do, and longer than uvicorn's 5 s default."""
    import aiohttp

    from rewardhub.http_serving import KEEP_ALIVE_SECONDS

    async def aiohttp_idle() -> float:
        connector = aiohttp.TCPConnector()
        try:
            return connector._keepalive_timeout  # what verl's and OpenRLHF's aiohttp sessions keep idle
        finally:
            await connector.close()

    client_idle = [httpx.Limits().keepalive_expiry, asyncio.run(aiohttp_idle())]
    assert all(KEEP_ALIVE_SECONDS > seconds for seconds in client_idle), client_idle
    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(COMPOSED))
    with serve_process(["--config", str(config), "--log-level", "warning"]) as (base, _):
        assert reuse_after_idle(base, 6.0) == [200, 200]


@pytest.mark.parametrize(("config", "message"), [
    (None, "no reward config: pass --config rewards.yaml or set REWARDHUB_CONFIG"),
    ("rewards: [{name: majority_vote}]\n", "majority_vote compare(s) the completions of one prompt"),
])
def test_serve_refuses_to_start_without_what_it_needs(tmp_path, config, message):
    args = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(free_port())]
    if config is not None:
        path = tmp_path / "rewards.yaml"
        path.write_text(config)
        args += ["--config", str(path)]
    clean = {k: v for k, v in os.environ.items() if k != "REWARDHUB_CONFIG"}
    result = subprocess.run(args, env=clean, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert message in result.stderr


def test_serve_takes_its_config_from_the_environment(tmp_path):
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards: [{name: majority_vote}]\n")
    result = subprocess.run([sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(free_port())],
                            env={**os.environ, "REWARDHUB_CONFIG": str(config)}, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and "majority_vote compare(s)" in result.stderr  # it read that config


def test_serve_command_refuses_an_unset_token_variable(tmp_path: Path):
    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(COMPOSED))
    env = {k: v for k, v in os.environ.items() if k != "RH_UNSET_TOKEN"}
    proc = subprocess.run(
        [sys.executable, "-m", "rewardhub.cli", "serve", "--config", str(config), "--token-env", "RH_UNSET_TOKEN"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert "RH_UNSET_TOKEN" in proc.stderr


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--threads", "0", "argument --threads: must be greater than 0, got 0"),
    ("--max-body-mb", "-1", "argument --max-body-mb: must be greater than 0, got -1"),
    ("--threads", "many", "argument --threads: not a number: 'many'"),
])
def test_serve_rejects_nonsensical_options_before_starting(tmp_path, option, value, message):
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards: [exact_match]\n")
    rh = os.path.join(os.path.dirname(sys.executable), "rewardhub")
    result = subprocess.run([rh, "serve", "--config", str(config), option, value], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert message in result.stderr
