"""The remote backend when its only ``rewardhub sandbox serve`` goes away and comes back (issue 35 item 6):
real service processes, killed by pid and started again on the same port. The first batch after it is
back runs whole: the programs that find the service being checked wait for the check instead of failing.
"""

from __future__ import annotations

import signal
import time

import pytest
from sandbox_services import sandbox_serve
from serving import free_port

from rewardhub.sandbox import Program
from rewardhub.sandbox.local import isolation_problem
from rewardhub.sandbox.remote import RemoteBackend

pytestmark = pytest.mark.skipif(bool(isolation_problem()), reason=f"no local sandbox here: {isolation_problem()}")


def test_the_first_batch_after_the_service_comes_back_loses_no_row():
    port = free_port()
    backend = RemoteBackend(urls=[f"http://127.0.0.1:{port}"], concurrency=8, retry_after=0.2)
    try:
        with sandbox_serve(port) as (_, proc):
            assert all(r.ok for r in backend.run_many([Program("print(1)")] * 8))
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        down = backend.run_many([Program("print(2)")] * 8)
        assert all(r.error is not None and not r.ok for r in down)  # errors (abstentions), never scores
        with sandbox_serve(port):
            time.sleep(0.3)  # past retry_after: the service is due for its check
            results = backend.run_many([Program(f"print({i})") for i in range(8)])
            assert [r.stdout for r in results] == [f"{i}\n" for i in range(8)], [r.error for r in results]
    finally:
        backend.close()
