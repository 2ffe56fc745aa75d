"""``rewardhub sandbox serve`` runs Java, Go, Rust and JavaScript under SandboxFusion's language names (``java``,
``go``, ``rust``, ``nodejs``; ``javascript`` too), called by the ``sandbox-fusion`` client from PyPI; the
``remote`` backend sends rewardhub's ``javascript`` as ``nodejs``, so the ``code`` reward runs through it."""

from __future__ import annotations

import pytest
from serving import running_server
from toolchains import DOUBLE, languages

import rewardhub
from rewardhub.sandbox.local import isolation_problem
from rewardhub.sandbox.service import create_service

pytestmark = pytest.mark.skipif(bool(isolation_problem()), reason=f"no local sandbox here: {isolation_problem()}")

FUSION_NAMES = {"java": "java", "go": "go", "rust": "rust", "javascript": "nodejs"}  # rewardhub's -> SandboxFusion's


@pytest.fixture(scope="module")
def service():
    with running_server(create_service(backend="local", workers=2)) as url:
        yield url


@pytest.mark.parametrize("language", languages())
def test_service_runs_the_language_and_reports_compile_errors(service, language):
    sf = pytest.importorskip("sandbox_fusion")
    fusion, code = FUSION_NAMES[language], DOUBLE[language]
    ok = sf.run_code(sf.RunCodeRequest(code=code, stdin="21\n", language=fusion, compile_timeout=60), endpoint=service)
    assert ok.status == sf.RunStatus.Success and ok.run_result.stdout == "42\n", ok
    assert ok.compile_result is not None and ok.compile_result.return_code == 0
    broken = sf.run_code(sf.RunCodeRequest(code=code.replace("2 *", "2 * *", 1), language=fusion, compile_timeout=60),
                         endpoint=service)
    assert broken.status == sf.RunStatus.Failed and broken.message == "compile error"
    assert broken.compile_result is not None and broken.compile_result.stderr, broken


def test_code_reward_through_the_remote_backend_in_javascript(service):
    reward = rewardhub.get("code", language="javascript", backend="remote", backend_options={"urls": [service]})
    completions = [f"```js\n{DOUBLE['javascript']}\n```", "```js\nconsole.log(3)\n```"]
    tests = [[{"input": "4\n", "output": "8\n"}, {"input": "-1\n", "output": "-2\n"}]] * 2
    assert reward.evaluate(["p"] * 2, completions, tests=tests).values == [1.0, 0.0]
