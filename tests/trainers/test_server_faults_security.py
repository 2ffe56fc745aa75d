"""The reward server's surface with ``--token-env`` (issue 35 item 7), at a real ``rewardhub serve`` process
scoring with a judge on a real HTTP chat server: a health check without the token never runs a reward
(no judge call billed), ``/hacking`` needs the token, and health checks arriving together share one probe.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from judge_server import KEY_ENV, SECRET, JudgeServer
from serving import in_flight, serve_process, until

TOKEN = "reward-server-token-35"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def judge():
    with JudgeServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(judge, tmp_path_factory):
    folder = tmp_path_factory.mktemp("guarded")
    config = folder / "judge.json"
    config.write_text(json.dumps({"rewards": [{"name": "judge", "params": {
        "base_url": judge.base_url, "model": "judge-test", "api_key_env": KEY_ENV, "cache": None}}]}))
    env = {**os.environ, KEY_ENV: SECRET, "RH_SERVE_TOKEN": TOKEN}
    with serve_process(["--config", str(config), "--token-env", "RH_SERVE_TOKEN", "--no-access-log",
                        "--log-level", "warning"], env=env) as (base, _):
        yield base


def test_health_without_the_token_answers_without_running_a_reward(server, judge):
    judge.reset()
    replies = [httpx.get(server + "/health", timeout=60) for _ in range(21)]
    assert {r.status_code for r in replies} == {200}
    assert all(r.json()["rewards"] is None for r in replies)
    assert judge.requests == 0  # nothing billed for anonymous callers
    scored = httpx.get(server + "/health", headers=AUTH, timeout=60)
    assert scored.status_code == 200 and "judge" in scored.json()["rewards"]
    assert judge.requests >= 1


def test_the_hacking_report_needs_the_token(server):
    anonymous = httpx.get(server + "/hacking", timeout=60)
    assert anonymous.status_code == 401 and "bearer token" in anonymous.json()["error"]
    assert httpx.get(server + "/hacking", headers={"Authorization": "Bearer wrong"}, timeout=60).status_code == 401
    assert httpx.get(server + "/hacking", headers=AUTH, timeout=60).status_code == 200


def test_health_checks_arriving_together_share_one_probe(server, judge):
    """The judge holds the first probe's call until eight checks are in flight at the server."""
    from judge_server import marker_answer

    opened = threading.Event()

    def held(body):
        opened.wait(120)  # blocks the judge's loop: later calls (there must be none) queue behind it
        return marker_answer(body)

    judge.reset()
    judge.answer = held
    try:
        with ThreadPoolExecutor(8) as pool:
            pending = [pool.submit(httpx.get, server + "/health", headers=AUTH, timeout=180) for _ in range(8)]
            until(lambda: in_flight(server) >= 9, "eight health checks in flight")  # the /metrics request too
            opened.set()
            replies = [future.result() for future in pending]
    finally:
        opened.set()
        judge.answer = marker_answer
    assert {r.status_code for r in replies} == {200}
    assert judge.requests == 1  # one probe for the eight checks
