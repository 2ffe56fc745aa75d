"""Composition and the hacking monitor where verl and OpenRLHF meet rewardhub: the reward server (a ``step``
field, ``GET /hacking``, normalize_then_sum over assembled groups), the PPO adapter's step, the shims' steps."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from serving import ensure_registered, running_server

import rewardhub
from rewardhub.hacking import PREFIX, RewardHackingWarning
from rewardhub.trainers.server import create_app

SCHEDULED = {"rewards": [
    {"name": "th_contains", "weight": {"schedule": "step", "start": 1.0, "end": 3.0, "steps": 5}},
    {"name": "th_async_len", "alias": "length", "weight": 0.5},
]}


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


def test_the_server_reads_scheduled_weights_at_the_requests_step():
    with running_server(create_app(rewardhub.load(SCHEDULED))) as url:
        rows = [{"prompt": "p", "completion": "it is 42 yes", "solution": "42"}]
        early = httpx.post(f"{url}/score", json={"rows": rows, "step": 2}, timeout=30).json()
        late = httpx.post(f"{url}/score", json={"rows": rows, "step": 7}, timeout=30).json()
        assert early["values"] == [pytest.approx(1.0 + 0.5 * 12 / 20)]
        assert late["values"] == [pytest.approx(3.0 + 0.5 * 12 / 20)]
        body = {"query": ["Q: it is 42"], "prompts": ["Q:"], "labels": ["42"], "step": 9}
        assert httpx.post(f"{url}/get_reward", json=body, timeout=30).json()["rewards"] == [pytest.approx(3.0 + 0.5 * 9 / 20)]
        missing = httpx.post(f"{url}/score", json={"rows": rows}, timeout=30)
        assert missing.status_code == 422 and "'weight' follows a schedule" in missing.json()["error"]
        bad = httpx.post(f"{url}/score", json={"rows": rows, "step": "three"}, timeout=30)
        assert bad.status_code == 400 and "'step' must be the trainer's step" in bad.json()["error"]


def test_samples_per_step_counts_the_step_for_callers_that_send_none():
    with running_server(create_app(rewardhub.load(SCHEDULED), samples_per_step=2)) as url:
        rows = [{"prompt": "p", "completion": "42", "solution": "42"}]
        values = [httpx.post(f"{url}/score", json={"rows": rows}, timeout=30).json()["values"][0] for _ in range(12)]
    contains = [round(v - 0.5 * 2 / 20, 6) for v in values]
    assert contains == [1.0] * 10 + [3.0] * 2  # samples 0-9 are steps 0-4, then step 5


def test_normalize_then_sum_over_groups_assembled_from_one_sample_requests():
    config = {"aggregate": "normalize_then_sum", "rewards": [
        {"name": "th_contains", "weight": 1.0}, {"name": "th_async_len", "alias": "length", "weight": 1.0}]}
    completions = ["42", "the answer is 42 for sure", "no", "nothing to see here at all"]
    with running_server(create_app(rewardhub.load(config), group_size=4, group_timeout=60)) as url:
        def one(text):
            row = {"prompt": "q", "completion": text, "solution": "42", "group": "g1"}
            return httpx.post(f"{url}/score", json={"rows": [row]}, timeout=60).json()

        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(one, completions))
    whole = rewardhub.load(config).evaluate(["q"] * 4, completions, solution=["42"] * 4)
    assert [r["values"][0] for r in replies] == pytest.approx(whole.totals)
    assert replies[0]["group_floors"]["th_contains"] == [0.0]  # the lowest of 1, 1, 0, 0


def test_the_servers_monitor_reports_alarms_over_windows_of_steps():
    config = {"monitor": {"warmup": 0}, "rewards": [{"name": "th_sometimes", "alias": "judge"}]}
    with running_server(create_app(rewardhub.load(config))) as url:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for step in range(10):
                # th_sometimes abstains on even lengths: from step 7 every second completion is even
                texts = [("ab" if step >= 7 and i % 2 else "abc") + " x" * (i % 3) for i in range(48)]
                rows = [{"prompt": f"p{i // 4}", "completion": t} for i, t in enumerate(texts)]
                assert httpx.post(f"{url}/score", json={"rows": rows, "step": step}, timeout=30).status_code == 200
        report = httpx.get(f"{url}/hacking", timeout=30).json()
        exposition = httpx.get(f"{url}/metrics", timeout=30).text
    assert report["last_step"] == 8.0 and report["open_step"] == {"step": 9, "rows": 48}
    assert [a["signal"] for a in report["alarms"]] == ["abstentions"]
    assert report["alarms"][0]["subject"] == "judge/abstained" and report["alarms"][0]["step"] == 7
    assert report["metrics"][f"{PREFIX}/abstentions"] == 1.0
    assert any(issubclass(w.category, RewardHackingWarning) for w in caught)
    gauges = _gauges(exposition)
    assert gauges['rewardhub_hacking_signal{signal="abstentions"}'] == 1.0
    assert gauges['rewardhub_hacking_signal{signal="length"}'] == 0.0
    assert gauges["rewardhub_hacking_alarms"] == 1.0 and gauges["rewardhub_hacking_steps"] == 9.0
    latest = report["metrics"][f"{PREFIX}/abstained/judge"]
    assert gauges['rewardhub_hacking_abstained{reward="judge"}'] == pytest.approx(latest) and latest > 0


def _gauges(exposition: str) -> dict[str, float]:
    """The samples of a Prometheus text exposition, by name and labels."""
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in exposition.splitlines()
            if line and not line.startswith("#")}


def test_no_monitor_means_no_hacking_endpoint():
    with running_server(create_app(rewardhub.load(SCHEDULED), monitor=False)) as url:
        assert httpx.get(f"{url}/hacking", timeout=30).status_code == 404


def test_the_ppo_adapter_takes_the_loops_step_and_reports_the_monitors_figures():
    from rewardhub.trainers.ppo import PPORewards

    rewards = PPORewards(SCHEDULED, monitor=True)
    early = rewards(["p"], ["42"], step=0, solution=["42"])
    late = rewards(["p"], ["42"], step=5, solution=["42"])
    assert float(early.total[0]) == pytest.approx(1.05) and float(late.total[0]) == pytest.approx(3.05)
    means = late.means()
    assert means["th_contains/weight"] == 3.0 and means[f"{PREFIX}/alarms"] == 0.0
    assert [s.step for s in rewards.monitor.history] == [0.0, 5.0]
