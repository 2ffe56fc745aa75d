"""Faults at the reward server's group assembly, against real ``rewardhub serve`` processes: a client
that disconnects and retries (its abandoned completion must leave its group), directly and through
``rewardhub route``; and a SIGTERM while groups wait (they are answered at once, not at their timeout).
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
from urllib.parse import urlsplit

import httpx
import pytest
from serving import DRAINED_EXIT, counted, in_flight, running_server, serve_process, until

from rewardhub.trainers.router import create_router_app

# Groups of 8 voted on by string equality; a per-row reward beside it (it scores even in a fragment).
CONFIG = {"rewards": [{"name": "majority_vote", "alias": "vote", "params": {"group_size": 8, "equivalence": "string"}},
                      {"name": "exact_match", "alias": "em", "weight": 0.5}]}
PROMPT = "Question: what is 2 + 3?"
ARGS = ["--no-access-log", "--log-level", "warning"]


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "vote8.json"
    path.write_text(json.dumps(CONFIG))
    return str(path)


def sample(answer: int) -> dict:
    """One OpenRLHF request of one completion of PROMPT, whose label is 5."""
    return {"query": [f"{PROMPT} The answer is {answer}"], "prompts": [PROMPT], "labels": ["5"]}


def send_and_hang_up(base: str, path: str, body: dict) -> None:
    """Send one request on a raw connection and close it before any answer, as a client giving up does."""
    url = urlsplit(base)
    payload = json.dumps(body).encode()
    with socket.create_connection((url.hostname, url.port), timeout=30) as conn:
        conn.sendall(f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
        until(lambda: in_flight(base) >= 2, "the abandoned request is being served")  # it and /metrics


async def post_all(url: str, bodies: list[dict]) -> list[dict]:
    async with httpx.AsyncClient(timeout=120) as client:
        replies = await asyncio.gather(*(client.post(url, json=body) for body in bodies))
    for reply in replies:
        reply.raise_for_status()
    return [reply.json() for reply in replies]


def assert_voted_five_to_three(answers: list[dict], answers_sent: list[int]) -> None:
    assert [answer["extra_logs"]["vote/abstained"][0] for answer in answers] == [0.0] * 8  # one whole group
    votes = [answer["extra_logs"]["vote"][0] for answer in answers]
    assert votes == [1.0 if a == 5 else 0.0 for a in answers_sent]  # 5:3, each real member counted once


# A wrong answer's request is abandoned and retried with the rest of the group: 5 right, 3 wrong. Counted
# twice, it would fill the group one real member short (a 4:4 tie, or a member left to time out).
MEMBERS = [7, 7, 7, 5, 5, 5, 5, 5]


def test_a_retried_request_is_counted_once_in_its_group(config_file):
    with serve_process(["--config", config_file, "--group-timeout", "60", *ARGS]) as (base, _):
        send_and_hang_up(base, "/get_reward", sample(MEMBERS[0]))
        until(lambda: in_flight(base) == 1, "the server dropped the abandoned request")  # /metrics alone
        answers = asyncio.run(post_all(base + "/get_reward", [sample(a) for a in MEMBERS]))
        assert_voted_five_to_three(answers, MEMBERS)
        assert all(answer["extra_logs"]["em"][0] == (1.0 if a == 5 else 0.0) for answer, a in zip(answers, MEMBERS, strict=True))
        assert counted(base, 'rewardhub_requests_total{endpoint="/get_reward",status="499"}') == 1
        assert counted(base, "rewardhub_samples_total") == 8  # the abandoned completion was never scored


def test_a_retry_through_the_router_is_counted_once_at_the_replica(config_file):
    """The client hangs up on the router: the router cancels its forward, so the replica withdraws too."""
    with serve_process(["--config", config_file, "--group-timeout", "60", *ARGS]) as (replica, _), \
            running_server(create_router_app([replica], check_interval=0.2)) as router:
        send_and_hang_up(router, "/get_reward", sample(MEMBERS[0]))
        until(lambda: in_flight(replica) == 1, "the replica dropped the forwarded request")
        answers = asyncio.run(post_all(router + "/get_reward", [sample(a) for a in MEMBERS]))
        assert_voted_five_to_three(answers, MEMBERS)
        assert counted(replica, "rewardhub_samples_total") == 8


def test_sigterm_answers_waiting_groups_at_once(config_file):
    """Three groups wait for members that will never come; SIGTERM: each waiting request is answered
    (the vote abstains on its fragment, the per-row reward scores), long before the default 120 s group
    timeout, and the process exits."""
    with serve_process(["--config", config_file, *ARGS]) as (base, proc):
        rows = [{"prompt": f"{PROMPT} ({k})", "completion": "The answer is 5", "solution": "5"} for k in range(3)]

        async def main():
            async with httpx.AsyncClient(timeout=100) as client:  # a generous bound, below the 120 s timeout
                waiting = [asyncio.create_task(client.post(base + "/score", json={"rows": [row]})) for row in rows]
                while in_flight(base) < 4:  # the three waiting requests and this /metrics one
                    await asyncio.sleep(0.05)
                proc.send_signal(signal.SIGTERM)
                return await asyncio.gather(*waiting)

        answers = asyncio.run(main())
        for answer in answers:
            assert answer.status_code == 200
            body = answer.json()
            assert body["components"] == {"vote": [None], "em": [1.0]}
            assert body["reasons"]["vote"] == ["incomplete group: 1 of 8 completions of this prompt arrived before "
                                               "the reward server shut down; group rewards abstain"]
        assert proc.wait(100) in DRAINED_EXIT
