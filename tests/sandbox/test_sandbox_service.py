"""``rewardhub sandbox serve`` answering SandboxFusion's ``/run_code``, called by the ``sandbox-fusion``
client package from PyPI (0.3.7) and by verl 0.9.1's own SandboxFusion code (its released
``verl/utils/reward_score/sandbox_fusion`` package, imported as it is); and the ``remote`` backend
fanning the ``code`` reward out to several services, one of them dead, one killed mid-run.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import threading
import time

import httpx
import pytest
from frameworks import release, released_module
from sandbox_services import sandbox_serve
from serving import free_port, running_server

import rewardhub
from rewardhub.sandbox import Program
from rewardhub.sandbox.fusion import from_response, to_response
from rewardhub.sandbox.local import isolation_problem
from rewardhub.sandbox.remote import RemoteBackend
from rewardhub.sandbox.service import create_service

pytestmark = pytest.mark.skipif(bool(isolation_problem()), reason=f"no local sandbox here: {isolation_problem()}")

SUM = "a, b = map(int, input().split())\nprint(a + b)"
SUM_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}]


@pytest.fixture(scope="module")
def service():
    with running_server(create_service(backend="local", workers=2)) as url:
        yield url


def test_sandbox_fusion_client_gets_its_own_shapes(service):
    sf = pytest.importorskip("sandbox_fusion")
    ok = sf.run_code(sf.RunCodeRequest(code=SUM, stdin="2 3\n", language="python"), endpoint=service)
    assert ok.status == sf.RunStatus.Success and ok.compile_result is None
    assert ok.run_result.status == sf.CommandRunStatus.Finished and ok.run_result.return_code == 0
    assert ok.run_result.stdout == "5\n" and ok.run_result.execution_time > 0

    failed = sf.run_code(sf.RunCodeRequest(code="import sys; print('x'); sys.exit(3)", language="python"),
                         endpoint=service)
    assert failed.status == sf.RunStatus.Failed and failed.run_result.return_code == 3
    assert failed.message == "exit code 3"

    slow = sf.run_code(sf.RunCodeRequest(code="while True: pass", language="python", run_timeout=1), endpoint=service)
    assert slow.status == sf.RunStatus.Failed and slow.run_result.status == sf.CommandRunStatus.TimeLimitExceeded
    assert slow.run_result.return_code is None

    if shutil.which("g++"):
        built = sf.run_code(sf.RunCodeRequest(code="#include <cstdio>\nint main(){puts(\"hi\");}", language="cpp"),
                            endpoint=service)
        assert built.status == sf.RunStatus.Success and built.run_result.stdout == "hi\n"
        assert built.compile_result.status == sf.CommandRunStatus.Finished
        broken = sf.run_code(sf.RunCodeRequest(code="int main( {", language="cpp"), endpoint=service)
        assert broken.status == sf.RunStatus.Failed and broken.run_result is None
        assert broken.compile_result.return_code != 0 and "error" in broken.compile_result.stderr

    # A language this service cannot run is the service's failure (SandboxError), which the client raises on.
    with pytest.raises(Exception, match="SandboxError|not supported"):
        sf.run_code(sf.RunCodeRequest(code="print(1)", language="lua"), endpoint=service, max_attempts=1)


def test_files_come_as_base64_and_bad_bodies_get_422(service):
    import base64

    body = {"code": "print(open('data.txt').read().upper())", "language": "python",
            "files": {"data.txt": base64.b64encode(b"shout").decode()}}
    answer = httpx.post(service + "/run_code", json=body, timeout=30).json()
    assert answer["status"] == "Success" and answer["run_result"]["stdout"] == "SHOUT\n"
    for bad in ({"language": "python"}, {"code": "1", "language": 3}, {"code": "1", "language": "python",
                                                                       "run_timeout": -1}, [1, 2]):
        assert httpx.post(service + "/run_code", json=bad).status_code == 422, bad
    assert httpx.post(service + "/run_code", content=b"{not json").status_code == 422
    fetch = httpx.post(service + "/run_code", json={"code": "1", "language": "python", "fetch_files": ["x"]}).json()
    assert fetch["status"] == "SandboxError" and "fetch_files" in fetch["message"]
    assert httpx.get(service + "/ready").json() == {"status": "ready"}
    assert httpx.get(service + "/health").json()["status"] == "ok"


@pytest.fixture(scope="module")
def verl_sandbox_fusion():
    """verl 0.9.1's released SandboxFusion package (it imports only requests and the standard library)."""
    root = release("verl", "pinned")
    package = root / "verl" / "utils" / "reward_score" / "sandbox_fusion"
    name = "released_verl_sandbox_fusion"
    module = released_module(name, package / "__init__.py", package=True)
    yield module
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def test_verl_code_reward_scores_through_the_service(service, verl_sandbox_fusion):
    """What verl's default reward does for code data when ``reward.sandbox_fusion.url`` is set:
    compute_score(sandbox_fusion_url, semaphore, memory_limit_mb, completion, test_cases)."""
    url = service + "/run_code"
    semaphore = threading.Semaphore(4)
    cases = {"inputs": [c["input"] for c in SUM_CASES], "outputs": [c["output"] for c in SUM_CASES]}
    right = f"```python\n{SUM}\n```"
    wrong = "```python\na, b = map(int, input().split())\nprint(a * b)\n```"
    score, details = verl_sandbox_fusion.compute_score(url, semaphore, 512, right, json.dumps(cases))
    assert score == 1.0 and [d["status"] for d in details] == ["success", "success"]
    score, details = verl_sandbox_fusion.compute_score(url, semaphore, 512, wrong, json.dumps(cases))
    assert score == 0.0 and details[0]["status"] == "wrong_answer"
    looping = "```python\nwhile True: pass\n```"
    score, details = verl_sandbox_fusion.compute_score(url, semaphore, 512, looping, json.dumps(cases), timeout=1)
    assert score == 0.0 and details[0]["status"] == "timeout"


def test_result_shapes_round_trip_through_the_remote_mapping():
    program = Program("print(1)", timeout=2)
    from rewardhub.sandbox import SandboxResult

    for result in (SandboxResult(stdout="1\n", exit_code=0, duration=0.1),
                   SandboxResult(stdout="", exit_code=None, timed_out=True, reason="timeout after 2 s"),
                   SandboxResult(stderr="boom", exit_code=1, reason="exit code 1"),
                   SandboxResult(exit_code=-9, reason="memory limit exceeded")):
        back = from_response(program, json.loads(json.dumps(to_response(program, result))))
        assert (back.stdout, back.exit_code, back.timed_out, back.reason, back.ok) == \
               (result.stdout, result.exit_code, result.timed_out, result.reason, result.ok)
    failed = from_response(program, to_response(program, SandboxResult.failed("zygote died")))
    assert failed.error is not None and "zygote died" in failed.error
    assert from_response(program, {"nonsense": 1}).error is not None


@pytest.fixture
def second_service():
    """``rewardhub sandbox serve`` in its own process: the command as a user runs it."""
    with sandbox_serve(free_port()) as (url, proc):
        yield url, proc


def code_rows(n: int) -> tuple[list[str], list[list[dict]]]:
    good, bad = f"```python\n{SUM}\n```", "```python\nprint(0)\n```"
    return [good if i % 3 else bad for i in range(n)], [SUM_CASES] * n


def test_code_reward_fans_out_to_a_fleet_with_a_dead_member(service, second_service):
    url, _ = second_service
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    reward = rewardhub.get("code", timeout=5.0, backend="remote",
                           backend_options={"urls": [service, url, dead], "concurrency": 4})
    completions, tests = code_rows(12)
    remote = reward.evaluate(["p"] * 12, completions, tests=tests).scores
    local = rewardhub.get("code", timeout=5.0).evaluate(["p"] * 12, completions, tests=tests).scores
    assert [s.value for s in remote] == [s.value for s in local] == [0.0 if i % 3 == 0 else 1.0 for i in range(12)]
    assert [s.reason for s in remote] == [s.reason for s in local]


def test_a_service_killed_mid_run_gives_errors_never_scores(second_service):
    url, proc = second_service
    backend = RemoteBackend(urls=[url], concurrency=2)
    try:
        futures = [backend.submit(Program("import time; time.sleep(30)", timeout=40)) for _ in range(2)]
        time.sleep(1.0)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        results = [f.result(timeout=60) for f in futures]
        assert all(r.error is not None and not r.ok for r in results), results
        later = backend.run(Program("print(1)"))
        assert later.error is not None and "no sandbox service took the program" in later.error
    finally:
        backend.close()


def test_remote_backend_needs_urls_and_takes_source_programs(monkeypatch):
    monkeypatch.delenv("REWARDHUB_SANDBOX_URLS", raising=False)
    with pytest.raises(rewardhub.sandbox.SandboxUnavailableError, match="REWARDHUB_SANDBOX_URLS"):
        RemoteBackend()
    backend = RemoteBackend(urls="http://127.0.0.1:9")
    try:
        built = backend.run(Program("int main(){}", language="cpp", compile_only=True))
        assert built.error is not None and "compile_only" in built.error
    finally:
        backend.close()
