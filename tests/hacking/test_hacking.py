"""The reward-hacking monitor, judged on runs: scripted runs drifting into each hack are flagged within a few
steps by the signal named after the hack; clean runs raise nothing. Plus its parts: signatures, text
figures, steps and joins, warnings once per signal, metrics."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest

import rewardhub
from rewardhub import Batch, BatchResult, Score
from rewardhub._set.routing import Route
from rewardhub.hacking import PREFIX, HackingMonitor, RewardHackingWarning
from rewardhub.hacking.text import duplicate_rates, shape, template_share
from rewardhub.hacking.trends import grouped_rate, trend, within_group_rank_correlation
from rewardhub.testing.scripted_runs import CLEAN, HACKS, scripted_run

MAX_DELAY = 12  # steps from the first step of the drift (over 3-8 steps) to the alarm
ROUTES = {"clean_routed": {"code": Route("data_source", ("code",)), "correct": Route("data_source", ("math",))}}


def watch(name: str, seed: int) -> tuple:
    run = scripted_run(name, seed)
    monitor = HackingMonitor(run.roles, lambda step: run.weights, aggregate=run.aggregate,
                             routes=ROUTES.get(name, {}), warn=False)
    for step, batch, results in run.batches():
        monitor.observe(step, batch, results)
    return run, monitor


@pytest.mark.parametrize("hack", HACKS)
@pytest.mark.parametrize("seed", [101, 202])  # seeds the bench (bench/hacking.py, seeds 0..) does not use
def test_a_run_drifting_into_a_hack_is_flagged_within_a_few_steps(hack, seed):
    run, monitor = watch(hack, seed)
    early = [a for a in monitor.alarms if a.step < run.start]
    assert not early, f"alarms before the drift started at step {run.start}: {early}"
    named = [a for a in monitor.alarms if a.signal == hack]
    assert named, f"{hack} drift from step {run.start} was not flagged; alarms: {monitor.alarms}"
    assert named[0].step - run.start <= MAX_DELAY
    assert named[0].figures and any(ch.isdigit() for ch in named[0].message)  # the numbers behind it


@pytest.mark.parametrize("name", CLEAN)
@pytest.mark.parametrize("seed", [101, 202, 303])
def test_a_clean_run_raises_no_alarm(name, seed):
    _, monitor = watch(name, seed)
    assert monitor.alarms == []
    assert len(monitor.history) == scripted_run(name, seed).steps


# ----- text figures and statistics ------------------------------------------------------------------------------
def test_duplicates_and_templates():
    words = " ".join(f"w{i}" for i in range(12))
    shapes = [shape(t) for t in [words, words, "a b c d e f g h i j", words, "other words entirely here now ok fine go",
                                 "x y z"]]
    within, across, counted = duplicate_rates(shapes, [[0, 1, 2], [3, 4, 5]])
    assert counted == 5  # "x y z" is too short to count
    assert within == pytest.approx(2 / 5) and across == pytest.approx(3 / 5)
    texts = [f"As an expert I verified all of it so the answer is {i} and more words {i}" for i in range(6)]
    assert template_share([shape(t) for t in texts], [[i] for i in range(6)])[0] > 0.6
    assert template_share([shape(f"{i} " + "unique " * i) for i in range(6)], [[i] for i in range(6)])[0] == 0.0


def test_trend_and_correlation_statistics():
    rising = trend([0.0, 0.1, 0.2, 0.3, 0.4, 0.5], [0.01] * 6)
    assert rising.change == pytest.approx(0.5) and rising.t > 10 and rising.now == 0.5
    flat = trend([0.5, 0.4, 0.6, 0.5, 0.45, 0.55], [0.05] * 6)
    assert abs(flat.t) < 2
    assert within_group_rank_correlation([1, 2, 3, 1, 2, 3], [10, 20, 30, 5, 6, 7], [[0, 1, 2], [3, 4, 5]]) == 1.0
    assert within_group_rank_correlation([1, 2, None], [1, 1, 2], [[0, 1, 2]]) is None
    rate, error = grouped_rate([4, 0, 0, 0], [4, 4, 4, 4])  # one group fails whole: clustered error is wide
    assert rate == 0.25 and error > 0.2


# ----- the monitor's mechanics ------------------------------------------------------------------------------------
def scored(values: dict[str, list], outcomes: dict[str, list] | None = None) -> dict[str, BatchResult]:
    return {a: BatchResult([Score(v, outcome=(outcomes or {}).get(a, [""] * len(vs))[i]) for i, v in enumerate(vs)],
                           0.0, 0) for a, vs in values.items()}


def test_a_spike_warns_once_with_its_figures_and_metrics_name_it():
    from rewardhub.hacking import MonitorSettings

    monitor = HackingMonitor({"judge": None}, lambda step: {"judge": 1.0}, settings=MonitorSettings(warmup=0))
    batch = Batch([f"p{i // 4}" for i in range(64)], [f"answer {i} with several words to count" for i in range(64)],
                  {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(10):
            fails = [step >= 7 and i % 4 < 2 for i in range(64)]  # from step 7, half of every group times out
            outcomes = ["timeout" if f else "ok" for f in fails]
            values = [None if f else 0.5 for f in fails]
            monitor.observe(step, batch, scored({"judge": values}, {"judge": outcomes}))
    hacking = [w for w in caught if issubclass(w.category, RewardHackingWarning)]
    assert len(hacking) == 1  # once, although the spike lasts three steps
    assert "'judge' fails (errors or timeouts) on 50% of its rows at step 7, up from 0%" in str(hacking[0].message)
    assert monitor.alarms[0].signal == "abstentions" and monitor.alarms[0].figures["rate"] == 0.5
    metrics = monitor.metrics()
    assert metrics[f"{PREFIX}/abstentions"] == 1.0 and metrics[f"{PREFIX}/failed/judge"] == 0.5
    assert metrics[f"{PREFIX}/alarms"] == 1.0
    assert set(metrics) <= set(monitor.metric_names)


def test_trl_calls_each_reward_on_its_own_and_the_monitor_joins_them(core_registry):
    rewards = rewardhub.load([{"name": "t_length", "params": {"per_char": 0.1}}, {"name": "t_flaky", "weight": 0.5}])
    monitor = HackingMonitor.for_set(rewards, warn=False)
    logged: dict[str, list[float]] = {}
    state = SimpleNamespace(global_step=3)
    kwargs = {"trainer_state": state, "log_metric": lambda k, v: logged.setdefault(k, []).append(v)}
    prompts, completions = ["p", "p", "q", "q"], ["one two three four five six", "skip", "a b", "seven words and more"]
    rewards.reward_funcs[0](prompts, completions, **kwargs)
    assert monitor.history == []  # t_flaky has not reported yet
    rewards.reward_funcs[1](prompts, completions, **kwargs)
    assert [s.step for s in monitor.history] == [3.0]
    assert monitor.history[0].means["abstained/t_flaky"] == 0.25
    assert logged[f"{PREFIX}/alarms"] == [0.0] and f"{PREFIX}/completion_length" in logged
    rewards.reward_funcs[0](prompts, completions, **kwargs)  # an evaluation batch at the same step: not counted
    rewards.reward_funcs[1](prompts, completions, **kwargs)
    assert monitor.late_rows == 4 and len(monitor.history) == 1


def test_the_servers_monitor_closes_a_step_when_the_next_begins():
    monitor = HackingMonitor({"r": None}, lambda step: {"r": 1.0}, eager=False, warn=False)
    batch = Batch(["p", "p"], ["a b c", "d e f"], {})
    monitor.observe(0, batch, scored({"r": [1.0, 0.0]}))
    monitor.observe(0, batch, scored({"r": [1.0, 1.0]}))
    assert monitor.history == [] and monitor.report()["open_step"] == {"step": 0, "rows": 4}
    monitor.observe(1, batch, scored({"r": [0.0, 0.0]}))
    assert [(s.step, s.rows) for s in monitor.history] == [(0.0, 4)]
    assert monitor.history[0].means["value/r"] == 0.75
    monitor.observe(0, batch, scored({"r": [1.0, 1.0]}))  # a straggler of a closed step
    assert monitor.late_rows == 2


def test_without_steps_the_server_counts_samples():
    monitor = HackingMonitor({"r": None}, lambda step: {"r": 1.0}, eager=False, samples_per_step=4, warn=False)
    batch = Batch(["p", "p"], ["a", "b"], {})
    for _ in range(5):
        monitor.observe(None, batch, scored({"r": [1.0, 0.0]}))
    assert [s.step for s in monitor.history] == [0.0, 1.0]


def test_roles_come_from_the_entry_the_weight_and_the_family(core_registry):
    rewards = rewardhub.load([
        {"name": "t_contains", "role": "correctness"}, {"name": "t_length", "weight": 0},
        {"name": "t_flaky", "alias": "fmt", "role": "format"}, {"name": "t_batch_len"},
    ])
    assert HackingMonitor.for_set(rewards).roles == {"t_contains": "correctness", "t_length": "audit",
                                                      "fmt": "format", "t_batch_len": None}


def test_disabled_signals_stay_quiet():
    run = scripted_run("length", 101)
    from rewardhub.hacking import MonitorSettings

    monitor = HackingMonitor(run.roles, lambda step: run.weights, settings=MonitorSettings(disable=("length",)),
                             warn=False)
    for step, batch, results in run.batches():
        monitor.observe(step, batch, results)
    assert "length" not in {a.signal for a in monitor.alarms}
