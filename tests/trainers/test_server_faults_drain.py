"""``--drain-timeout`` bounds the whole shutdown (issue 35 item 5): a client that is still sending its body
when SIGTERM comes cannot keep a real ``rewardhub serve`` or ``rewardhub route`` process alive; a request
that finishes within the drain is still answered.
"""

from __future__ import annotations

import json
import socket
import subprocess
from urllib.parse import urlsplit

import httpx
import pytest
from serving import DRAINED_EXIT, in_flight, route_process, serve_process, until

QUIET = ["--no-access-log", "--log-level", "warning"]
# Generous: the old server never exited at all. It is a bound on a hang, not a timing.
EXIT_WITHIN = 120


@pytest.fixture(scope="module")
def config_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("drain") / "em.json"
    path.write_text(json.dumps({"rewards": [{"name": "exact_match", "params": {"extractors": ["whole"]}}]}))
    return str(path)


def half_sent_request(base: str) -> socket.socket:
    """A POST whose headers promise 1,000 bytes and whose body stops after 10: the client is 'still sending'."""
    where = urlsplit(base)
    sock = socket.create_connection((where.hostname, where.port), timeout=EXIT_WITHIN)
    sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                 b'{"rows": [')
    return sock


def exits_after_sigterm(proc: subprocess.Popen) -> int:
    proc.terminate()
    return proc.wait(EXIT_WITHIN)


def test_a_client_still_sending_its_body_cannot_keep_the_server_alive(config_file):
    with serve_process(["--config", config_file, "--drain-timeout", "2", *QUIET]) as (base, proc):
        with half_sent_request(base):
            until(lambda: in_flight(base) >= 2, "the half-sent request in flight")
            assert exits_after_sigterm(proc) in DRAINED_EXIT


def test_a_client_still_sending_its_body_cannot_keep_the_router_alive(config_file):
    with serve_process(["--config", config_file, *QUIET]) as (replica, _), \
            route_process(["--replicas", replica, "--drain-timeout", "2", "--log-level", "warning"]) as (router, proc):
        row = {"prompt": "q", "completion": "4", "solution": "4"}
        assert httpx.post(router + "/score", json={"rows": [row]}, timeout=60).json()["values"] == [1.0]
        with half_sent_request(router):
            until(lambda: in_flight(router) >= 2, "the half-sent request in flight")
            assert exits_after_sigterm(proc) in DRAINED_EXIT
