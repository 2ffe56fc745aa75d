"""Slow drifts of a paid reward away from the truth: a judge gamed by flattery ramping in over 300 steps is alarmed
within 40 steps of its onset, through a real set's TRL reward functions with ``trainer_rewards(..., monitor=True)``
(bench/hacking_runs.py), with what it saw; a judge whose score rises slowly with accuracy is learning and raises
nothing; the other paid rewards drifting slowly (a format paid without reasoning, a keyword bonus) are alarmed within 40
steps too. A change tracker whose first baseline came out low by chance does not add that up into a change, while its
baseline, which grows only with steps ``baseline`` steps old, does not absorb a change that begins right after it, nor
a slow one; a bonus nobody earned while the baseline was taken counts one completion's worth in its own range."""

from __future__ import annotations

import math
import random

import pytest
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


@pytest.mark.parametrize("name, subject", [("format_only", "format"), ("keyword_bonus", "keywords")])
def test_a_paid_reward_drifting_from_the_truth_over_300_steps_is_alarmed_within_40_steps(name, subject):
    run = runs.ScriptedRun(name, ramp=300, seed=22)  # a seed the bench (0..) does not play
    run.steps = run.onset + LIMIT + 1
    alarms = run.alarms()
    assert not [a for a in alarms if a.step < run.onset], f"alarms before the onset at step {run.onset}: {alarms}"
    named = [a for a in alarms if a.subject == subject]
    assert named and named[0].step - run.onset <= LIMIT, f"{name} from step {run.onset}: {alarms}"
    assert named[0].figures["now"] > named[0].figures["before"] and named[0].figures["excess"] > 0


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


def _settled(rng: random.Random, steps: int = 30) -> Change:
    """A tracker fed ``steps`` steps of a still series (level 0, noise 1): settled, its probation over."""
    change = Change(baseline=10, threshold=10.0)
    for step in range(steps):
        change.add(step, rng.gauss(0.0, 1.0), 1.0)
    assert change.settled and abs(change.level) < 1.0
    return change


def test_a_change_right_after_the_baseline_is_measured_against_the_level_from_before_it():
    rng = random.Random(7)
    change = _settled(rng)
    before = change.level
    for step in range(30, 36):  # a jump of 2 noise units: found within a few steps, before any of it joins the level
        change.add(step, 2.0 + rng.gauss(0.0, 1.0), 1.0)
        if change.rose:
            break
    assert change.rose and change.up_from is not None and 25 <= change.up_from <= step <= 35  # its run, near the jump
    assert abs(change.level - before) < 0.1  # only still steps from before the jump joined it


def test_a_slow_ramp_is_found_within_40_steps_and_barely_moves_the_level():
    rng = random.Random(8)
    change = _settled(rng, steps=80)
    before = change.level
    found = None
    for step in range(80, 160):  # 0.05 noise units more each step: 2 noise units after 40 steps
        change.add(step, 0.05 * (step - 79) + rng.gauss(0.0, 1.0), 1.0)
        if change.rose and found is None:
            found = step
    assert found is not None and found - 80 < 40
    assert change.level - before < 0.1  # only its first steps, 10 steps late and before it was found, joined


def test_a_bonus_nobody_earned_counts_a_completion_in_its_own_range():
    rows = 64
    floor = math.sqrt(0.05 * 0.95 / rows)  # the tracker's floor (relations.tracker), for values ranging over 1
    small, stray = Change(baseline=10, threshold=10.0, floor=floor), Change(baseline=10, threshold=10.0, floor=floor)
    for step in range(20):  # nobody earns the bonus: every value 0, no range
        small.add(step, 0.0, 0.0, 0.0)
        stray.add(step, 0.0, 0.0, 0.0)
    assert small.noise == stray.noise == pytest.approx(floor)  # unknown range: that of a rate
    for step in range(20, 60):  # then a bonus worth 0.3 earned by one completion more every 8 steps
        earned = (step - 20) // 8 + 1
        small.add(step, 0.3 * earned / rows, 0.0, 0.3)
        stray.add(step, 0.3 * (step % 2) / rows, 0.0, 0.3)  # one completion every other step, no more
    assert small.noise == pytest.approx(0.3 * floor)  # in the range the bonus spans
    assert small.rose and not stray.rose
