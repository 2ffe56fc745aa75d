"""The monitor's state survives a restart: a monitor resumed from its state file raises what an uninterrupted one
raises, the reward server's ``/hacking`` resumes from the file after a restart, and a file that cannot be read back
is an error that names it and what to do."""

from __future__ import annotations

import json

import httpx
import pytest
from serving import ensure_registered, running_server

import rewardhub
from rewardhub.hacking import HackingMonitor, MonitorSettings
from rewardhub.hacking.persist import MonitorStateError
from rewardhub.testing.scripted_runs import scripted_run
from rewardhub.trainers.server import create_app


def _monitor(run, state=None) -> HackingMonitor:
    return HackingMonitor(run.roles, lambda step: run.weights, aggregate=run.aggregate,
                          settings=MonitorSettings(state=state), warn=False)


def test_a_monitor_resumed_from_its_state_file_raises_what_an_uninterrupted_one_raises(tmp_path):
    run = scripted_run("audit", 101)
    batches = list(run.batches())
    whole = _monitor(run)
    for step, batch, results in batches:
        whole.observe(step, batch, results)
    assert whole.alarms

    state = tmp_path / "state" / "hacking.json"
    first = _monitor(run, str(state))
    cut = run.start + 1  # a restart just after the hack's onset: its baseline and sums must carry over
    for step, batch, results in batches[:cut]:
        first.observe(step, batch, results)
    first.flush()
    resumed = _monitor(run, str(state))  # a new process would build it from the same config
    assert [s.step for s in resumed.history] == [s.step for s in first.history]
    assert resumed.changes.keys() == first.changes.keys()
    for step, batch, results in batches[cut:]:
        resumed.observe(step, batch, results)
    assert [(a.signal, a.subject, a.step) for a in resumed.alarms] == [(a.signal, a.subject, a.step)
                                                                        for a in whole.alarms]
    saved = json.loads(state.read_text())
    assert len(saved["history"]) == len(batches) and saved["alarms"][0]["examples"]


def test_the_servers_monitor_resumes_from_its_state_file_after_a_restart(tmp_path):
    ensure_registered()
    state = tmp_path / "hacking.json"
    config = {"monitor": {"state": str(state)}, "rewards": [{"name": "th_sometimes", "alias": "judge"}]}
    rows = [{"prompt": f"p{i // 4}", "completion": "abc" + " x" * (i % 3)} for i in range(16)]

    def post_steps(url, steps):
        for step in steps:
            assert httpx.post(f"{url}/score", json={"rows": rows, "step": step}, timeout=30).status_code == 200

    with running_server(create_app(rewardhub.load(config))) as url:
        post_steps(url, range(6))
        before = httpx.get(f"{url}/hacking", timeout=30).json()
    assert before["steps"] == 5 and before["last_step"] == 4.0  # step 5 is still open
    with running_server(create_app(rewardhub.load(config))) as url:  # the restarted server
        resumed = httpx.get(f"{url}/hacking", timeout=30).json()
        post_steps(url, range(6, 9))
        after = httpx.get(f"{url}/hacking", timeout=30).json()
    assert resumed["steps"] == 5 and resumed["last_step"] == 4.0
    assert after["steps"] == 7 and after["last_step"] == 7.0  # step 5's rows were lost with the open step


@pytest.mark.parametrize("content, says", [
    ("not json", "not a hacking-monitor state file"),
    (json.dumps({"version": 99}), "state version 99"),
    (json.dumps({"version": 1, "aliases": ["other"]}), "saved for rewards ['other']"),
])
def test_a_state_file_that_cannot_be_read_back_is_an_error_naming_it(tmp_path, content, says):
    state = tmp_path / "hacking.json"
    state.write_text(content)
    with pytest.raises(MonitorStateError, match="hacking.json") as caught:
        HackingMonitor({"r": None}, lambda step: {"r": 1.0}, settings=MonitorSettings(state=str(state)))
    assert says in str(caught.value)
