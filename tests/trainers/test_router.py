"""``rewardhub route`` in front of real ``rewardhub serve --group-size 4`` processes, fed the way OpenRLHF
feeds it (one sample per request, rotating over URLs, retrying on errors); replicas killed mid-run;
metrics, readiness and the SIGTERM drain of the server and the router.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter

import httpx
import pytest
from serving import DRAINED_EXIT, free_port, running_server, serve_process

from rewardhub.trainers.router import HashRing, create_router_app, merge

VOTE = {"rewards": [{"name": "majority_vote", "alias": "vote", "weight": 1.0,
                     "params": {"group_size": 4, "equivalence": "string"}},
                    {"name": "exact_match", "alias": "em", "weight": 0.5}]}
REPLICA_ARGS = ["--group-size", "4", "--no-access-log", "--log-level", "warning"]


def samples(prompts: int, size: int = 4, seed: int = 0) -> list[dict]:
    """OpenRLHF one-sample requests; prompt p's majority answer is p (3 of 4 agree)."""
    out = []
    for p in range(prompts):
        prompt = f"Question {p}: what is {p} + 0?"
        for k in range(size):
            answer = p if k else p + 100
            out.append({"query": [f"{prompt} The answer is {answer}"], "prompts": [prompt], "labels": [str(p)],
                        "majority": k != 0})
    random.Random(seed).shuffle(out)
    return out


async def post_like_openrlhf(client: httpx.AsyncClient, url: str, sample: dict, tries: int = 30) -> tuple[dict, int]:
    """OpenRLHF 0.11.2's _post_request: raise_for_status, retry on any error after 1 s (more tries here,
    as a dead replica takes a moment to be noticed). Returns the answer and the retries it took."""
    body = {k: sample[k] for k in ("query", "prompts", "labels")}
    for attempt in range(tries):
        try:
            reply = await client.post(url, json=body)
            reply.raise_for_status()
            return reply.json(), attempt
        except httpx.HTTPError:
            await asyncio.sleep(0.5)
    raise AssertionError(f"no answer after {tries} tries: {sample}")


def check_votes(batch: list[dict], answers: list[dict]) -> None:
    for sample, answer in zip(batch, answers, strict=True):
        vote = answer["extra_logs"]["vote"][0]
        assert vote == (1.0 if sample["majority"] else 0.0), (sample, answer)


def test_ring_moves_only_the_dead_replicas_keys_and_spreads_them():
    urls = [f"http://r{i}" for i in range(3)]
    ring, smaller = HashRing(urls), HashRing(urls[:2])
    keys = [f"prompt {i}" for i in range(3000)]
    owners = {k: next(ring.candidates(k)) for k in keys}
    share = Counter(owners.values())
    assert all(800 < n < 1200 for n in share.values()), share
    for key in keys:
        if owners[key] != urls[2]:
            assert next(smaller.candidates(key)) == owners[key]  # a survivor's keys stay where they were
        # the fallback of a key whose owner died is the next replica on the ring, as the smaller ring says
        assert [u for u in ring.candidates(key) if u != urls[2]][0] == next(smaller.candidates(key))


def test_merge_puts_answers_back_in_request_order():
    parts = [([0, 2], {"rewards": [1.0, 3.0], "extra_logs": {"a": [10, 30]}}),
             ([1], {"rewards": [2.0], "extra_logs": {"a": [20]}})]
    assert merge(parts, 3) == {"rewards": [1.0, 2.0, 3.0], "extra_logs": {"a": [10, 20, 30]}}


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "vote.json"
    path.write_text(json.dumps(VOTE))
    return str(path)


def test_groups_assemble_behind_the_router_with_one_sample_requests(config_file):
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, _), \
            serve_process(["--config", config_file, *REPLICA_ARGS]) as (b, _), \
            serve_process(["--config", config_file, *REPLICA_ARGS]) as (c, _), \
            running_server(create_router_app([a, b, c], check_interval=0.2)) as router:
        batch = samples(prompts=9)

        async def main():
            async with httpx.AsyncClient(timeout=60) as client:
                return await asyncio.gather(*(post_like_openrlhf(client, router + "/get_reward", s) for s in batch))

        answers = [answer for answer, _ in asyncio.run(main())]
        check_votes(batch, answers)
        counts = {url: httpx.get(url + "/metrics").text for url in (a, b, c)}
        served = {url: _metric(text, 'rewardhub_samples_total') for url, text in counts.items()}
        assert sum(served.values()) == 36 and sum(v > 0 for v in served.values()) >= 2  # spread, never split
        assert all(v % 4 == 0 for v in served.values())  # each replica scored whole groups only
        router_metrics = httpx.get(router + "/metrics").text
        assert _metric(router_metrics, 'rewardhub_router_forwards_total{outcome="ok"') == 36
        assert 'rewardhub_request_seconds_bucket{endpoint="/get_reward"' in router_metrics


def _metric(text: str, prefix: str) -> float:
    """Sum of the samples of a Prometheus text exposition whose line starts with ``prefix``."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(prefix) and not line.startswith("#"))


def test_a_replica_killed_mid_run_loses_nothing_and_scores_nothing_wrong(config_file):
    """Groups wait half-filled at every replica; one is SIGKILLed. Its waiting requests are answered 503
    (retryable), OpenRLHF-style retries land on its groups' new replica, and every sample ends with
    its true vote: nothing lost, nothing scored on a fragment."""
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, _), \
            serve_process(["--config", config_file, *REPLICA_ARGS]) as (b, proc_b), \
            serve_process(["--config", config_file, *REPLICA_ARGS]) as (c, _), \
            running_server(create_router_app([a, b, c], check_interval=0.2)) as router:
        batch = sorted(samples(prompts=24), key=lambda s: s["prompts"][0])
        first, rest = [s for i, s in enumerate(batch) if i % 4 < 2], [s for i, s in enumerate(batch) if i % 4 >= 2]

        async def main():
            async with httpx.AsyncClient(timeout=60) as client:
                waiting = [asyncio.create_task(post_like_openrlhf(client, router + "/", s)) for s in first]
                while _metric((await client.get(b + "/metrics")).text, "rewardhub_requests_in_flight") < 2:
                    await asyncio.sleep(0.1)  # b holds half-filled groups now (besides this /metrics request)
                proc_b.send_signal(signal.SIGKILL)
                proc_b.wait(30)
                later = [asyncio.create_task(post_like_openrlhf(client, router + "/", s)) for s in rest]
                return await asyncio.gather(*waiting), await asyncio.gather(*later)

        (early, late) = asyncio.run(main())
        check_votes(first, [a for a, _ in early])
        check_votes(rest, [a for a, _ in late])
        assert sum(retries for _, retries in early) >= 1  # b's waiting requests were answered retryable
        health = httpx.get(router + "/health").json()
        assert health["replicas"][b]["up"] is False and health["replicas"][a]["up"] is True


def test_a_request_only_a_dead_replica_could_take_gets_a_retryable_503(config_file):
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, proc):
        with running_server(create_router_app([a], check_interval=0.2)) as router:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            reply = httpx.post(router + "/score", json={"rows": [{"prompt": "p", "completion": "c"}]})
            assert reply.status_code == 503 and reply.headers["retry-after"] == "1"
            assert reply.json()["retryable"] is True and "no reward server replica is up" in reply.json()["error"]
            assert httpx.get(router + "/ready").status_code == 503


def test_native_rows_route_by_their_group_field(config_file):
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, _), \
            serve_process(["--config", config_file, *REPLICA_ARGS]) as (b, _), \
            running_server(create_router_app([a, b])) as router:
        rows = [{"group": f"g{g}", "prompt": f"question {g}", "completion": f"answer {g if k else 9}",
                 "solution": str(g)} for g in range(4) for k in range(4)]
        random.Random(1).shuffle(rows)
        reply = httpx.post(router + "/score", json={"rows": rows}, timeout=60)
        assert reply.status_code == 200, reply.text
        votes = reply.json()["components"]["vote"]
        assert votes == [0.0 if row["completion"] == "answer 9" else 1.0 for row in rows]


def test_server_metrics_count_requests_outcomes_and_group_waits(config_file):
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, _):
        rows = [{"prompt": "p", "completion": f"answer {k % 2}", "solution": "1"} for k in range(4)]
        assert httpx.post(a + "/score", json={"rows": rows}, timeout=60).status_code == 200
        assert httpx.post(a + "/score", json={"rows": "nope"}).status_code == 422
        text = httpx.get(a + "/metrics").text
        assert _metric(text, 'rewardhub_requests_total{endpoint="/score",status="200"}') == 1
        assert _metric(text, 'rewardhub_requests_total{endpoint="/score",status="422"}') == 1
        assert _metric(text, 'rewardhub_reward_outcomes_total{outcome="ok",reward="em"}') == 4
        assert _metric(text, "rewardhub_group_wait_seconds_count") == 4
        assert httpx.get(a + "/ready").json() == {"status": "ready"}


def test_sigterm_drains_the_server(config_file):
    """A request is in flight (still sending its body) when SIGTERM comes: the process stops being ready,
    refuses new requests with a retryable 503, answers the one in flight (its sample's group cannot be
    completed any more: the vote abstains, never a fragment's vote), then exits."""
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, proc):
        async def main():
            port = int(a.rsplit(":", 1)[1])
            body = json.dumps({"rows": [{"prompt": "p", "completion": "The answer is 1", "solution": "1"}]}).encode()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:10])
            await writer.drain()
            async with httpx.AsyncClient(timeout=60) as client:
                while _metric((await client.get(a + "/metrics")).text, "rewardhub_requests_in_flight") < 2:
                    await asyncio.sleep(0.05)  # the half-sent request and this /metrics one
                proc.send_signal(signal.SIGTERM)
                while (ready := await client.get(a + "/ready")).status_code == 200:
                    await asyncio.sleep(0.05)
                refused = await client.post(a + "/score", json={"rows": [{"prompt": "q", "completion": "x"}]})
            writer.write(body[10:])
            await writer.drain()
            answer = await reader.read()  # the server closes the connection once it has answered
            writer.close()
            return answer, ready, refused

        answer, ready, refused = asyncio.run(main())
        assert ready.status_code == 503 and ready.json()["status"] == "draining"
        assert refused.status_code == 503 and refused.json()["retryable"] is True
        head, _, payload = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        assert b"connection: close" in head.lower()  # not kept: the process exits
        reply = json.loads(payload)
        assert reply["components"]["vote"] == [None] and reply["components"]["em"] == [1.0]
        assert "before the reward server shut down" in reply["reasons"]["vote"][0]
        assert proc.wait(30) in DRAINED_EXIT


def test_route_command_starts_and_drains(config_file):
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, _):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "rewardhub.cli", "route", "--port", str(port),
                                 "--replicas", a, "--log-level", "warning"], stderr=subprocess.PIPE, text=True,
                                env={**os.environ})
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    if httpx.get(base + "/ready").status_code == 200:
                        break
                except httpx.TransportError:
                    assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
            rows = [{"prompt": "p", "completion": f"answer {k}", "solution": "1"} for k in (1, 1, 1, 2)]
            assert httpx.post(base + "/score", json={"rows": rows}, timeout=60).json()["components"]["vote"] == \
                [1.0, 1.0, 1.0, 0.0]
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) in DRAINED_EXIT
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def test_route_command_rejects_bad_replica_lists():
    done = subprocess.run([sys.executable, "-m", "rewardhub.cli", "route", "--replicas", "localhost:1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "http(s) base URLs" in done.stderr
