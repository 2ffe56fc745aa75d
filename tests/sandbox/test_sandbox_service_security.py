"""``rewardhub sandbox serve`` exposed (issue 35 item 7), as a real process: the bearer token of
``--token-env`` guards running programs (the remote backend sends it), a public ``--host`` is warned
about, and a body over the limit is refused by its ``Content-Length`` or while streaming, never read whole.
"""

from __future__ import annotations

import socket
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from sandbox_services import sandbox_serve
from serving import free_port

from rewardhub.sandbox import Program
from rewardhub.sandbox.local import isolation_problem
from rewardhub.sandbox.remote import RemoteBackend

pytestmark = pytest.mark.skipif(bool(isolation_problem()), reason=f"no local sandbox here: {isolation_problem()}")

TOKEN = "sandbox-token-35"
LIMIT = 8 * 1024 * 1024  # the service's body limit (--max-body-mb 8)


@pytest.fixture(scope="module")
def guarded():
    """The service bound to every interface, with a token (the warning is checked on its stderr)."""
    with sandbox_serve(free_port(), args=("--host", "0.0.0.0", "--token-env", "RH_SANDBOX_TOKEN", "--max-body-mb", "8"),
                       env={"RH_SANDBOX_TOKEN": TOKEN}) as (url, proc):
        yield url, proc


def test_the_token_guards_running_programs(guarded):
    url, _ = guarded
    body = {"code": "print(6 * 7)", "language": "python"}
    assert httpx.post(url + "/run_code", json=body, timeout=60).status_code == 401
    assert httpx.post(url + "/run_code", json=body, headers={"Authorization": "Bearer no"}, timeout=60).status_code == 401
    assert httpx.get(url + "/health", timeout=60).status_code == 401  # it runs a program too
    assert httpx.get(url + "/ready", timeout=60).status_code == 200  # probes stay open
    with closing(RemoteBackend(urls=[url], token=TOKEN)) as allowed, closing(RemoteBackend(urls=[url])) as anonymous:
        ran = allowed.run(Program("print(6 * 7)", timeout=10))
        refused = anonymous.run(Program("print(6 * 7)", timeout=10))
    assert ran.ok and ran.stdout.strip() == "42"
    assert refused.error is not None and "401" in refused.error and not refused.ok  # an error, never a score


def test_a_declared_oversized_body_is_refused_before_it_is_sent(guarded):
    url, _ = guarded
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(f"POST /run_code HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {300 * 1024 * 1024}\r\n\r\n".encode())
        answer = sock.recv(4096).decode()  # no byte of the body was sent: a service reading it first never answers
    assert answer.startswith("HTTP/1.1 413"), answer


def test_a_streamed_body_is_cut_off_at_the_limit_without_holding_it(guarded):
    url, proc = guarded
    before = _peak_rss_mb(proc.pid)
    chunk = b" " * (1024 * 1024)

    def body():  # chunked, with no Content-Length: only the stream can tell
        for _ in range(8 * LIMIT // len(chunk)):
            yield chunk

    try:
        reply = httpx.post(url + "/run_code", content=body(), timeout=120,
                           headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        assert reply.status_code == 413
    except httpx.TransportError:
        pass  # the service closed the connection under the rest of the body: also refused
    assert _peak_rss_mb(proc.pid) - before < 4 * LIMIT / 2**20  # about the limit held, never the 64 MiB body
    assert httpx.get(url + "/ready", timeout=60).status_code == 200


def test_a_public_host_is_warned_about():
    """Read once the process has stopped (its stderr is a pipe): the fixture's service, bound to 0.0.0.0."""
    with sandbox_serve(free_port(), args=("--host", "0.0.0.0", "--token-env", "RH_SANDBOX_TOKEN"),
                       env={"RH_SANDBOX_TOKEN": TOKEN}) as (_, proc):
        pass
    warning = proc.stderr.read()
    assert "warning: --host 0.0.0.0 lets every machine" in warning and "anyone can" not in warning


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")
