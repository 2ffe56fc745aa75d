"""Weight schedules at cluster scale (issue 35 item 1), with real ``rewardhub route`` and ``rewardhub serve``
processes: the router counts the step once and sends it to the replicas (each replica's share scores at
the deployment's step), forwards a request's own ``step``, and a saved or given start step survives restarts.
"""

from __future__ import annotations

import json

import httpx
import pytest
from serving import route_process, serve_process

# exact_match's weight rises 0.1 per step: a row answered right totals step / 10.
SCHEDULED = {"rewards": [{"name": "exact_match", "params": {"extractors": ["whole"]}, "weight": {"schedule": "linear", "start": 0.0, "end": 1.0,
                                                            "steps": 10}}]}
QUIET = ["--no-access-log", "--log-level", "warning"]
PER_STEP = 2


@pytest.fixture(scope="module")
def config_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("schedules") / "scheduled.json"
    path.write_text(json.dumps(SCHEDULED))
    return str(path)


@pytest.fixture(scope="module")
def replicas(config_file):
    with serve_process(["--config", config_file, *QUIET]) as (a, _), \
            serve_process(["--config", config_file, *QUIET]) as (b, _):
        yield [a, b]


def one_sample(base: str, i: int, **extra) -> float:
    """Score one right answer to prompt ``i`` (OpenRLHF's one-sample request): its total."""
    body = {"query": [f"Question {i}: 2 + 2? 4"], "prompts": [f"Question {i}: 2 + 2?"], "labels": ["4"], **extra}
    reply = httpx.post(base + "/get_reward", json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    return reply.json()["rewards"][0]


def served(base: str) -> float:
    text = httpx.get(base + "/metrics", timeout=30).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("rewardhub_samples_total"))


def test_the_router_counts_the_step_once_for_all_replicas(replicas):
    with route_process(["--replicas", ",".join(replicas), "--samples-per-step", str(PER_STEP), *QUIET[1:]]) \
            as (router, _):
        totals = [one_sample(router, i) for i in range(12)]
    assert totals == pytest.approx([(i // PER_STEP) / 10 for i in range(12)])
    assert all(served(url) > 0 for url in replicas)  # both replicas scored, at the deployment's steps


def test_the_router_forwards_a_requests_own_step(replicas):
    with route_process(["--replicas", ",".join(replicas), *QUIET[1:]]) as (router, _):
        assert one_sample(router, 1, step=7) == pytest.approx(0.7)
        rows = [{"prompt": f"Question {i}: 2 + 2?", "completion": "4", "solution": "4"} for i in range(6)]
        native = httpx.post(router + "/score", json={"rows": rows, "step": 5}, timeout=120).json()
        assert native["values"] == pytest.approx([0.5] * 6)
        bad = httpx.post(router + "/score", json={"rows": rows, "step": "soon"}, timeout=120)
        assert bad.status_code == 400 and "'step'" in bad.json()["error"]


def test_a_restarted_router_goes_on_from_its_step_file(replicas, tmp_path):
    saved = tmp_path / "step.json"
    args = ["--replicas", ",".join(replicas), "--samples-per-step", str(PER_STEP), "--step-file", str(saved), *QUIET[1:]]
    with route_process(args) as (router, _):
        first = [one_sample(router, i) for i in range(5)]  # steps 0, 0, 1, 1, 2
    with route_process(args) as (router, _):
        after = one_sample(router, 5)  # the sixth sample: step 2, not 0
    assert first == pytest.approx([0.0, 0.0, 0.1, 0.1, 0.2]) and after == pytest.approx(0.2)
    with route_process([*args, "--start-step", "8"]) as (router, _):
        assert one_sample(router, 6) == pytest.approx(0.8)


def test_a_restarted_server_goes_on_from_its_step_file_or_start_step(config_file, tmp_path):
    saved = tmp_path / "server-step.json"
    args = ["--config", config_file, "--samples-per-step", str(PER_STEP), "--step-file", str(saved), *QUIET]
    with serve_process(args) as (base, _):
        assert [one_sample(base, i) for i in range(4)] == pytest.approx([0.0, 0.0, 0.1, 0.1])
    with serve_process(args) as (base, _):
        assert one_sample(base, 4) == pytest.approx(0.2)
    with serve_process(["--config", config_file, "--samples-per-step", str(PER_STEP), "--start-step", "5", *QUIET]) \
            as (base, _):
        assert one_sample(base, 0) == pytest.approx(0.5)


def test_step_options_without_samples_per_step_are_refused(config_file, tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "rewardhub.cli", "serve", "--config", config_file,
                           "--step-file", str(tmp_path / "s.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--samples-per-step" in done.stderr
