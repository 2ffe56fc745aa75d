"""The docker backend's runner builds and runs Java, Go, Rust and JavaScript where the image has their
toolchains (here: the runner as a plain process on this machine, spoken to as the backend does), and a
real engine whose image lacks a toolchain abstains naming its Debian package (the minimal Python test
image). test_sandbox_docker_languages.py runs them in real containers of an image with the toolchains."""

from __future__ import annotations

import pytest
from docker_engine import docker_engine  # noqa: F401  (the session fixture)
from test_sandbox_docker import run_runner_many
from toolchains import DOUBLE, languages

import rewardhub
from rewardhub.sandbox import Program
from rewardhub.sandbox.docker_backend import DockerBackend

BROKEN = {"java": "class Main { void f() { int x = ; } }", "go": "package main\nfunc main() { x }",
          "rust": "fn main() { let x: i32 = \"a\"; }", "javascript": "console.log(;"}


@pytest.mark.parametrize("language", languages())
def test_runner_builds_and_runs_the_language(language, tmp_path):
    source, built, broken = run_runner_many([
        Program(DOUBLE[language], language=language, stdin="21\n", timeout=10),
        Program(DOUBLE[language], language=language, compile_only=True, output_limit=64 << 20),
        Program(BROKEN[language], language=language),
    ], tmp_path)
    assert (source.stdout, source.exit_code) == ("42\n", 0), (source.reason, source.stderr[-500:])
    assert source.compile_duration > 0
    assert built.executable is not None, built.stderr[-500:]
    assert broken.reason == "compile error" and broken.error is None and broken.stderr
    again, = run_runner_many([Program("", language=language, executable=built.executable, stdin="5\n")], tmp_path)
    assert again.stdout == "10\n", (again.reason, again.stderr[-500:])


def test_an_image_without_the_toolchain_abstains_naming_the_package(docker_engine):  # noqa: F811
    backend = DockerBackend(image=docker_engine.image, base_url=docker_engine.url, workers=1)
    try:
        result = backend.run(Program(DOUBLE["java"], language="java"))
        assert result.error is not None and "'default-jdk-headless'" in result.error
        reward = rewardhub.get("code", language="go", backend="docker",
                               backend_options={"image": docker_engine.image, "base_url": docker_engine.url})
        score = reward.evaluate(["p"], [f"```go\n{DOUBLE['go']}\n```"], tests=[[{"input": "1", "output": "2"}]]).scores[0]
        assert score.value is None and "'golang-go'" in score.reason
    finally:
        backend.close()
