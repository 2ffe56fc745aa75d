"""The ``remote`` sandbox backend against real ``rewardhub sandbox serve`` processes: C and C++ scored as
the local backend scores them, a fleet whose members die, refuse and come back, and every way a service
can fail (5xx, timeouts, bodies that are no RunCodeResponse, SandboxError) giving abstentions, never scores.
"""

from __future__ import annotations

import shutil
import signal
import threading
import time

import pytest
from sandbox_services import FAILURES, failing_service, sandbox_serve
from serving import free_port, reuse_after_idle, running_server

import rewardhub
from rewardhub.sandbox import Program
from rewardhub.sandbox.local import isolation_problem
from rewardhub.sandbox.remote import RemoteBackend

pytestmark = pytest.mark.skipif(bool(isolation_problem()), reason=f"no local sandbox here: {isolation_problem()}")

CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}]
PROGRAMS = {
    "c": {"right": '#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b);return 0;}',
          "wrong": '#include <stdio.h>\nint main(void){puts("3");return 0;}',
          "crash": "int main(void){return 3;}", "broken": "int main( {"},
    "cpp": {"right": "#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;}",
            "wrong": "#include <iostream>\nint main(){std::cout<<3<<std::endl;}",
            "crash": "#include <cstdlib>\nint main(){std::abort();}", "broken": "int main( {"},
}


@pytest.fixture(scope="module")
def service():
    with sandbox_serve(free_port()) as (url, _):
        yield url


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_c_and_cpp_score_remotely_as_they_score_locally(service, language):
    """No separate builds on a SandboxFusion service: each case sends the source, compiled in its run."""
    if not shutil.which("gcc" if language == "c" else "g++"):
        pytest.skip(f"no compiler for {language} here")
    kinds = list(PROGRAMS[language])
    completions = [f"```{language}\n{PROGRAMS[language][kind]}\n```" for kind in kinds]
    tests = [CASES] * len(kinds)
    remote = rewardhub.get("code", language=language, backend="remote", backend_options={"urls": [service]})
    local = rewardhub.get("code", language=language, backend="local")
    got = remote.evaluate(["p"] * len(kinds), completions, tests=tests).scores
    expected = local.evaluate(["p"] * len(kinds), completions, tests=tests).scores
    assert [(s.value, s.reason, s.outcome) for s in got] == [(s.value, s.reason, s.outcome) for s in expected]
    by_kind = dict(zip(kinds, got, strict=True))
    assert by_kind["right"].value == 1.0 and by_kind["wrong"].value == 0.5 and by_kind["crash"].value == 0.0
    assert by_kind["broken"].value == 0.0 and by_kind["broken"].reason.startswith("compile error: 'main.c")


def test_every_service_failure_is_an_abstention_never_a_score():
    """A 500, a body that is no RunCodeResponse (HTML, other JSON, wrong types, a finished run without its
    return code), a run error, SandboxError and a service that never answers: the row abstains as an error."""
    release = threading.Event()
    app = failing_service(release)
    with running_server(app) as base:
        modes = [m for m in FAILURES if m != "/status503"] + ["/hang"]
        for mode in modes:
            reward = rewardhub.get("code", timeout=1.0, backend="remote",
                                   backend_options={"urls": [base + mode], "request_margin": 1.0})
            score = reward.evaluate(["p"], ["```python\nprint(3)\n```"], tests=[[CASES[0]]]).scores[0]
            assert (score.value, score.outcome) == (None, "error"), (mode, score)
            assert score.reason.startswith("sandbox failed: "), (mode, score.reason)
        release.set()
    assert all(app.state.hits[mode + "/run_code"] == 1 for mode in modes), app.state.hits


def test_a_refusing_service_is_left_out_until_its_readiness_says_so(service):
    """503 means the program never ran there: it runs on another service at once, and the refusing one
    gets no more programs while its /ready answers 503, however long past retry_after."""
    app = failing_service()
    with running_server(app) as base:
        backend = RemoteBackend(urls=[base + "/status503", service], concurrency=2, retry_after=0.2)
        try:
            first = backend.run_many([Program(f"print({i})") for i in range(4)])
            refused = app.state.hits["/status503/run_code"]  # those sent before the first refusal came back
            time.sleep(0.5)
            later = backend.run_many([Program(f"print({i})") for i in range(4)])
        finally:
            backend.close()
    assert [r.stdout for r in first + later] == [f"{i}\n" for i in range(4)] * 2
    assert 1 <= refused <= 2 and app.state.hits["/status503/run_code"] == refused
    assert app.state.hits["/status503/ready"] >= 1


def test_a_fleet_member_killed_then_restarted_is_used_again():
    """Kill one of two services: programs run on the other; start it again on its port: once it is ready
    and checked it takes programs again (shown by then killing the other). Idle connections are kept."""
    port = free_port()
    with sandbox_serve(port) as (url, proc), sandbox_serve(free_port()) as (other, other_proc):
        assert reuse_after_idle(url, 6.0) == [200, 200]  # longer than uvicorn's 5 s default keep-alive
        backend = RemoteBackend(urls=[url, other], concurrency=2, retry_after=0.2)
        try:
            assert all(r.ok for r in backend.run_many([Program("print(1)")] * 4))
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            assert all(r.ok for r in backend.run_many([Program("print(2)")] * 4))  # refused there: ran on `other`
            with sandbox_serve(port) as (_, again):
                time.sleep(0.3)  # past retry_after: the next program checks it
                assert all(r.ok for r in backend.run_many([Program("print(3)")] * 4))
                other_proc.send_signal(signal.SIGKILL)
                other_proc.wait(30)
                results = backend.run_many([Program("print(4)")] * 4)
                assert [r.stdout for r in results] == ["4\n"] * 4, results
                assert again.poll() is None
        finally:
            backend.close()


def test_builds_are_refused_with_a_message():
    backend = RemoteBackend(urls="http://127.0.0.1:9")
    try:
        assert backend.builds is False
        built = backend.run(Program("int main(){}", language="cpp", compile_only=True))
        assert built.error is not None and "compile_only" in built.error
    finally:
        backend.close()
