"""``rewardhub serve --strict`` (issue 35): a real server stops at the first reward that is not scoring
(a column it needs is missing) instead of warning once and serving on without it; without ``--strict``
it warns and serves on."""

from __future__ import annotations

import json

import httpx
import pytest
from serving import serve_process

QUIET = ["--no-access-log", "--log-level", "warning"]
ROWS = {"rows": [{"prompt": "q", "completion": "4"}]}  # exact_match needs 'solution'


@pytest.fixture(scope="module")
def config_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("strict") / "em.json"
    path.write_text(json.dumps({"rewards": [{"name": "exact_match"}, {"name": "format_regex",
                                                                     "params": {"pattern": "\\d"}}]}))
    return str(path)


def test_strict_stops_the_server_at_a_reward_that_is_not_scoring(config_file):
    with serve_process(["--config", config_file, "--strict", *QUIET]) as (base, proc):
        reply = httpx.post(base + "/score", json=ROWS, timeout=60)
        assert reply.status_code == 500
        assert "not scoring" in reply.json()["error"] and "'solution'" in reply.json()["error"]
        assert proc.wait(120) == 2  # it drains and exits on its own
    assert "stopped at a reward that is not scoring (--strict)" in proc.stderr.read()


def test_without_strict_the_server_warns_and_scores_on(config_file):
    with serve_process(["--config", config_file, *QUIET]) as (base, proc):
        for _ in range(2):
            reply = httpx.post(base + "/score", json=ROWS, timeout=60)
            assert reply.status_code == 200 and reply.json()["components"]["format_regex"] == [1.0]
        assert proc.poll() is None
