"""Slow drifts of a paid reward away from the truth: a judge gamed by flattery ramping in over 300 steps is alarmed
within 40 steps of its onset, through a real set's TRL reward functions with ``trainer_rewards(..., monitor=True)``
(bench/hacking_runs.py), with what it saw; a judge whose score rises slowly with accuracy is learning and raises
nothing; a change tracker whose first baseline came out low by chance does not add that up into a change."""

from __future__ import annotations

import random

from bench_modules import load_bench

from rewardhub.hacking.changes import Change

runs = load_bench("hacking_runs")
LIMIT = 40  # steps from onset to alarm, at most


def test_a_judge_gamed_by_flattery_ramping_over_300_steps_is_alarmed_within_40_steps_with_what_it_saw():
    run = runs.ScriptedRun("judge_flattery", ramp=300, seed=21)  # a seed the bench (0..) does not play
    run.steps = run.onset + LIMIT + 1
    alarms = run.alarms()
    assert not [a for a in alarms if a.step < run.onset], f"alarms before the onset at step {run.onset}: {alarms}"
    judge = [a for a in alarms if a.signal == "divergence" and a.subject == "judge"]
    assert judge, f"flattery ramping over 300 steps from step {run.onset} raised no divergence alarm: {alarms}"
    alarm = judge[0]
    assert alarm.step - run.onset <= LIMIT
    # the figures: the judge's level before and now, its excess over what the truth explains, the truth meanwhile
    assert alarm.figures["now"] > alarm.figures["before"] and alarm.figures["excess"] > 0
    assert alarm.figures["cusum"] >= 10 and "truth_now" in alarm.figures
    assert run.onset - 10 <= alarm.since <= alarm.step  # the step the rise began, near the onset
    said = str(alarm)  # what TRL's logs and the warning show
    assert f"at step {alarm.step:g}" in said and f"since step {alarm.since:g}" in said and "'judge' rises from" in said
    assert said.count("e.g.") == 3 and len(alarm.examples) == 3
    assert any(runs.FLATTERY in example for example in alarm.examples)  # the completions that show it come first


def test_a_judge_whose_score_rises_slowly_with_accuracy_raises_nothing():
    run = runs.ScriptedRun("judge_improving", seed=21, steps=150)
    assert run.alarms() == []


def test_a_baseline_that_came_out_low_by_chance_does_not_add_up_into_a_change():
    rng = random.Random(5)
    change = Change(baseline=10, threshold=10.0)
    for step in range(10):  # the first ten steps come out 0.7 noise units below the series' true level (0)
        change.add(step, -0.7 + (-1.0) ** step, 1.0)
    assert change.settled and change.level < -0.5
    for step in range(10, 400):  # then the series goes on at its true level, with noise 1
        change.add(step, rng.gauss(0.0, 1.0), 1.0)
        assert not change.rose and not change.fell, f"a still series read as a change at step {step}"
    assert abs(change.level) < 0.2  # the baseline grew over the steps that agree with it
    for step in range(400, 440):  # a ramp of 0.1 noise units a step: found well within 40 steps
        change.add(step, 0.1 * (step - 399) + rng.gauss(0.0, 1.0), 1.0)
    assert change.rose
