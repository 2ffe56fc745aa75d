"""Java, Go, Rust and JavaScript through the docker backend, in real containers of an image with their
toolchains (``TOOLCHAINS`` of docker_engine.py, on the session's own engine): stdin/stdout and the
compiler's first error through the ``code`` reward, and for the JVM and Go runtimes the memory limit and
the deadline with the address-space headroom the local backend gives them. Skipped with the reason where
no engine can run or the image cannot be built (no Debian mirror)."""

from __future__ import annotations

import pytest
from docker_engine import docker_engine, toolchain_image  # noqa: F401  (the session fixtures)
from test_languages import BROKEN, PROGRAMS
from toolchains import COMPILED, DOUBLE

import rewardhub
from rewardhub.sandbox import Program, get_backend

IO_TESTS = [{"input": "21\n", "output": "42"}, {"input": "-4\n", "output": "-8"}]


@pytest.fixture(scope="module")
def options(docker_engine, toolchain_image):  # noqa: F811
    """The docker backend's options; the ``code`` reward given them shares the backend and its one container
    (one: on vfs each container is a copy of the 1.5 GB image)."""
    return {"image": toolchain_image, "base_url": docker_engine.url, "workers": 1}


@pytest.mark.parametrize("language", COMPILED)
def test_code_reward_scores_a_solution_and_names_the_first_compile_error(options, language):
    broken, first_error = BROKEN[language]
    reward = rewardhub.get("code", language=language, backend="docker", backend_options=options, timeout=10.0)
    completions = [f"```{language}\n{code}\n```" for code in (DOUBLE[language], broken)]
    result = reward.evaluate(["p", "p"], completions, tests=[IO_TESTS, IO_TESTS])
    solved, failed = result.scores
    assert solved.value == 1.0, solved.reason
    assert failed.value == 0.0 and failed.reason.startswith("compile error: "), failed.reason
    assert first_error in failed.reason, failed.reason


def test_java_code_reward_pays_the_canonical_solution_only(options):
    wrong = DOUBLE["java"].replace("2 * ", "3 * ")
    reward = rewardhub.get("code", language="java", backend="docker", backend_options=options, timeout=10.0)
    result = reward.evaluate(["p", "p"], [f"```java\n{code}\n```" for code in (DOUBLE["java"], wrong)],
                             tests=[IO_TESTS, IO_TESTS])
    assert [score.value for score in result.scores] == [1.0, 0.0], [score.reason for score in result.scores]


@pytest.mark.parametrize("language", ["java", "go"])
def test_runtime_starts_under_its_memory_limit_and_is_held_to_it_and_its_deadline(options, language):
    """A 256 MB run starts its runtime (the JVM and Go reserve far more address space than they use: the
    container runner grants the local backend's headroom), but 2 GB of use fails it, and a loop times out."""
    backend = get_backend("docker", **options)
    build = backend.run(Program(PROGRAMS[language], language=language, compile_only=True))
    assert build.error is None and build.executable is not None, (build.reason, build.stderr[-500:])

    def run(stdin: str, **limits) -> object:
        return backend.run(Program(PROGRAMS[language], language=language, executable=build.executable, stdin=stdin,
                                   **limits))

    echo = run("echo 21\n", memory_mb=256)
    assert echo.ok and echo.stdout == "42\n", (echo.reason, echo.error, echo.stderr[-500:])
    memory = run("mem\n", memory_mb=256)
    assert memory.error is None and not memory.ok and "allocated" not in memory.stdout, (memory.reason, memory.stdout)
    loop = run("loop\n", timeout=1)
    assert loop.timed_out and loop.error is None and loop.reason.startswith("timeout"), loop.reason
