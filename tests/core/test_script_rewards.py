"""Rewards defined in the training script (``rewardhub.register``), named in a config like installed ones."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import rewardhub
from rewardhub import DuplicateRewardError, RewardContractError
from rewardhub._registry import registry


@pytest.fixture
def scratch_names():
    """Names this test registers are removed afterwards (the registry is process-wide)."""
    before = set(registry.names())
    yield
    for name in set(registry.names()) - before:
        del registry._specs[name]


def _rows(*pairs):
    return [{"prompt": "q", "completion": c, "solution": s} for c, s in pairs]


def test_a_trl_reward_function_is_named_in_a_config_next_to_builtins(scratch_names):
    calls = []

    @rewardhub.register
    def says_answer(prompts, completions, solution, **kwargs):
        calls.append((list(prompts), list(completions), list(solution), sorted(kwargs)))
        return [1.0 if s in c else 0.0 for c, s in zip(completions, solution, strict=True)]

    assert callable(says_answer) and says_answer.__name__ == "says_answer"  # returned unchanged, for TRL too
    rewards = rewardhub.load({"rewards": [{"name": "says_answer", "weight": 0.5}, {"name": "exact_match"}]})
    scored = rewards.score(_rows(("the answer is 4", "4"), ("no idea", "4")))
    assert [r["rewards"]["says_answer"] for r in scored] == [1.0, 0.0]
    assert [r["reward"] for r in scored] == [1.5, 0.0]
    assert calls == [(["q", "q"], ["the answer is 4", "no idea"], ["4", "4"], [])]
    listed = {r["name"]: r for r in rewardhub.list_rewards()}["says_answer"]
    assert listed["source"] == __name__ and listed["params"] == {
        "on_error": {"default": "none", "required": False, "type": "str"}}


def test_async_functions_factories_and_classes_register_too(scratch_names):
    @rewardhub.register(name="async_len")
    async def anything(completions, **kwargs):
        return [float(len(c)) for c in completions]

    @rewardhub.register
    @rewardhub.sample_reward(name="shouts")
    def shouts(text, *, min_ratio: float = 0.5):
        letters = [c for c in text if c.isalpha()]
        return float(bool(letters) and sum(c.isupper() for c in letters) / len(letters) >= min_ratio)

    @rewardhub.register
    class Bangs(rewardhub.Reward):
        name = "bangs"

        def score_sample(self, text, row):
            return float(text.count("!"))

    rewards = rewardhub.load([{"name": "async_len"}, {"name": "shouts", "params": {"min_ratio": 0.9}},
                              {"name": "bangs"}])
    scored = rewards.score(_rows(("HEY!!", "x"), ("hi", "x")))
    assert [r["rewards"] for r in scored] == [{"async_len": 5.0, "shouts": 1.0, "bangs": 2.0},
                                             {"async_len": 2.0, "shouts": 0.0, "bangs": 0.0}]
    assert isinstance(rewards["async_len"], rewardhub.AsyncReward)


def test_a_function_that_fails_on_one_row_loses_only_that_row(scratch_names):
    @rewardhub.register
    def picky(completions, **kwargs):
        return [1.0 / len(c) for c in completions]  # ZeroDivisionError on an empty completion

    scored = rewardhub.load([{"name": "picky"}]).score(_rows(("ab", "x"), ("", "x"), ("abcd", "x")))
    assert [r["rewards"]["picky"] for r in scored] == [0.5, None, 0.25]
    assert scored[1]["outcomes"]["picky"] == "error" and "ZeroDivisionError" in scored[1]["reasons"]["picky"]


def test_a_function_returning_the_wrong_number_of_values_is_a_contract_error(scratch_names):
    rewardhub.register(lambda completions, **kw: [1.0], name="one_value")
    with pytest.raises(RewardContractError, match="'one_value' returned 1 values for a batch of 2"):
        rewardhub.load([{"name": "one_value"}]).score(_rows(("a", "x"), ("b", "x")))


def test_names_are_checked_when_registering(scratch_names):
    def math(completions, **kwargs):
        return [0.0] * len(completions)

    with pytest.raises(DuplicateRewardError, match="'math' is already the name of a reward from 'rewardhub'"):
        rewardhub.register(math)
    with pytest.raises(TypeError, match="has no name"):
        rewardhub.register(lambda completions, **kw: [])
    with pytest.raises(TypeError, match="register takes a TRL reward function"):
        rewardhub.register(42)
    with pytest.raises(rewardhub.ConfigError, match="unknown param"):
        rewardhub.register(math, name="zeros")
        rewardhub.load([{"name": "zeros", "params": {"scale": 2}}])


def test_running_the_definition_again_replaces_it(scratch_names):
    source = "def again(completions, **kw):\n    return [{value}] * len(completions)\n"
    for value in (1.0, 2.0):  # a notebook cell run twice: same module, same name, a new function
        namespace = {"__name__": "notebook_cell"}
        exec(source.format(value=value), namespace)
        rewardhub.register(namespace["again"])
    assert rewardhub.load([{"name": "again"}]).score(_rows(("a", "x")))[0]["rewards"]["again"] == 2.0


SCRIPT = textwrap.dedent('''
    import json, multiprocessing
    import rewardhub
    from rewardhub.trainers.grpo import CompositeReward

    @rewardhub.register
    def says_yes(completions, **kwargs):
        return [1.0 if "yes" in c else 0.0 for c in completions]

    def score(reward):
        import os
        return os.getpid(), reward(prompts=["p", "p"], completions=["the answer is yes", "no"], solution=["yes", "yes"])

    if __name__ == "__main__":
        composite = CompositeReward({"rewards": [{"name": "says_yes", "weight": 2.0}, {"name": "exact_match"}]})
        here = composite(prompts=["p", "p"], completions=["the answer is yes", "no"], solution=["yes", "yes"])
        with multiprocessing.get_context("spawn").Pool(1) as pool:  # as async GRPO scores: pickled by config
            pid, there = pool.apply(score, (composite,))
        print(json.dumps({"here": here, "there": there, "child": pid != __import__("os").getpid()}))
''')


def test_a_script_reward_is_found_again_in_a_spawned_process(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"here": [3.0, 0.0], "there": [3.0, 0.0], "child": True}
