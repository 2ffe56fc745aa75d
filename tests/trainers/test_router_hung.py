"""A hung replica behind ``rewardhub route`` (issue 35 item 4): real ``rewardhub serve --group-size 4`` processes,
one frozen with SIGSTOP (it accepts connections and never answers). Readiness checks that time out in a row
mark it down, clients that give up retry onto a live replica, a forward gives up before the client's budget,
and every sample still gets its true vote: nothing lost, nothing made up.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal

import httpx
import pytest
from serving import in_flight, route_process, serve_process, until
from test_router import REPLICA_ARGS, VOTE, check_votes, post_like_openrlhf, samples

ROUTER_ARGS = ["--check-interval", "0.2", "--check-timeout", "1", "--log-level", "warning"]


@pytest.fixture
def config_file(tmp_path):
    import json

    path = tmp_path / "vote.json"
    path.write_text(json.dumps(VOTE))
    return str(path)


@contextlib.contextmanager
def frozen(proc):
    """SIGSTOP ``proc`` for the block (SIGCONT after it, whatever happens)."""
    proc.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        proc.send_signal(signal.SIGCONT)


def replica_state(router: str, url: str) -> dict:
    return httpx.get(router + "/health", timeout=30).json()["replicas"][url]


def test_a_hung_replica_is_marked_down_and_its_clients_retries_land_elsewhere(config_file):
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, _), \
            serve_process(["--config", config_file, *REPLICA_ARGS]) as (b, proc_b), \
            route_process(["--replicas", f"{a},{b}", *ROUTER_ARGS]) as (router, _):
        batch = sorted(samples(prompts=16), key=lambda s: s["prompts"][0])
        first, rest = [s for i, s in enumerate(batch) if i % 4 < 2], [s for i, s in enumerate(batch) if i % 4 >= 2]

        async def main():
            # The clients give up after 15 s (as OpenRLHF after its 180 s) and retry; the router would wait longer.
            async with httpx.AsyncClient(timeout=15) as client:
                waiting = [asyncio.create_task(post_like_openrlhf(client, router + "/", s, tries=60)) for s in first]
                await asyncio.to_thread(until, lambda: in_flight(b) >= 3, "b holding half-filled groups")
                with frozen(proc_b):
                    await asyncio.to_thread(until, lambda: not replica_state(router, b)["up"], "b marked down")
                    later = [asyncio.create_task(post_like_openrlhf(client, router + "/", s, tries=60)) for s in rest]
                    answers = await asyncio.gather(*waiting), await asyncio.gather(*later)
                    down = replica_state(router, b)
                return answers, down

        (early, late), down = asyncio.run(main())
        check_votes(first, [answer for answer, _ in early])
        check_votes(rest, [answer for answer, _ in late])
        assert "readiness checks in a row" in down["reason"]
        until(lambda: replica_state(router, b)["up"], "b back up once it answers again")


def test_a_forward_to_a_hung_replica_gives_up_before_the_client_does(config_file):
    with serve_process(["--config", config_file, *REPLICA_ARGS]) as (a, proc_a), \
            route_process(["--replicas", a, "--request-timeout", "2", "--check-interval", "60",
                           "--log-level", "warning"]) as (router, _):
        rows = [{"prompt": "p", "completion": f"answer {k}", "solution": "1"} for k in (1, 1, 1, 2)]
        with frozen(proc_a):
            reply = httpx.post(router + "/score", json={"rows": rows}, timeout=120)  # the client's budget: 120 s
        assert reply.status_code == 503 and reply.json()["retryable"] is True, reply.text
        assert "ReadTimeout" in reply.json()["error"]
        retried = httpx.post(router + "/score", json={"rows": rows}, timeout=120)
        assert retried.status_code == 200 and retried.json()["components"]["vote"] == [1.0, 1.0, 1.0, 0.0]
