"""A real TRL GRPOTrainer with ``environment_factory`` and ``tools``, on a tiny model that makes tool calls.

Pinned: TRL 1.16.0 (what ``.[dev]`` installs here; ``environment_factory`` is new in 1.16) with
transformers 5.x. Each rollout gets its own environment, started at its dataset row's ``start``; the
model (overfitted in the fixture) calls ``add(n=3)``. rewardhub's rewards must read each rollout's
own environment and the episode's tool calls, and the environment's ``get_reward()`` (the async-GRPO
path) must score its own episode.
"""

from __future__ import annotations

import math

import pytest

import rewardhub
from rewardhub.trainers.environments import ScoredEnvironment
from rewardhub.trainers.grpo import trainer_rewards

pytestmark = pytest.mark.slow
PROMPT = [{"role": "user", "content": "Add 3 to the counter."}]
STARTS = [1, 2, 5, 7]
SEEN: list[tuple[int, int, list]] = []  # (row's start, its environment's value, the episode's calls)


def lookup(key: str) -> str:
    """Look a value up.

    Args:
        key: What to look up.
    """
    return key


class CounterEnv(ScoredEnvironment):
    rewardhub_config = {"rewards": [{"name": "final_state_match"}, {"name": "tool_call_match"}]}

    def reset(self, **row):
        self.value = row["start"]

    def add(self, n: int) -> str:
        """Add to the counter.

        Args:
            n: How much to add.
        """
        self.value += n
        return str(self.value)


@rewardhub.sample_reward(name="trl_seen_env")
def trl_seen_env(text, start, env, tool_calls):
    SEEN.append((start, env.value, tool_calls))
    return 0.0


@rewardhub.batch_reward(name="trl_env_batch")
def trl_env_batch(texts, start, poison, environments):
    """A batch reward reading ``environments`` that cannot handle a poisoned row: the batch raises, and
    rewardhub rescores it row by row, each row with its own environment (issue 23's wrong gradient)."""
    if any(poison):
        raise ValueError("a row this scorer cannot handle")
    return [float(env.value == s + 3) for s, env in zip(start, environments, strict=True)]


@pytest.fixture(scope="module")
def tool_model(tmp_path_factory):
    import torch

    from rewardhub.testing.tool_caller import make_tool_caller

    torch.set_num_threads(1)
    conversation = [*PROMPT,
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"type": "function", "function": {"name": "add", "arguments": {"n": 3}}}]},
                    {"role": "tool", "name": "add", "content": "4"},
                    {"role": "assistant", "content": "Added."}]
    return make_tool_caller(tmp_path_factory.mktemp("agent") / "lm", conversation,
                            tools=[lookup, CounterEnv().add])


def test_grpo_with_environment_factory_scores_each_rollout_against_its_own_environment(tool_model, tmp_path,
                                                                                        clean_registry):
    import trl
    from datasets import Dataset

    clean_registry.add(trl_seen_env, source="tests")
    clean_registry.add(trl_env_batch, source="tests")
    SEEN.clear()
    # unshuffled, each step's batch is two prompts (two rollouts each), the first of them poisoned
    rows = [{"prompt": PROMPT, "start": s, "expected_state": {"value": s + 3}, "poison": s in (1, 5),
             "expected_calls": [{"name": "add", "arguments": {"n": 3}}]} for s in STARTS]
    args = trl.GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
        num_generations=2, max_completion_length=96, max_steps=2, logging_steps=1, log_completions=True,
        save_strategy="no", seed=0, learning_rate=1e-5, disable_tqdm=True, activation_checkpointing=False,
        shuffle_dataset=False,
    )
    config = {"rewards": [{"name": "final_state_match", "weight": 1.0}, {"name": "tool_call_match", "weight": 1.0},
                          {"name": "tool_error_penalty", "weight": 0.5}, {"name": "trl_seen_env", "weight": 0.0},
                          {"name": "trl_env_batch", "weight": 0.0}]}
    run = trl.GRPOTrainer(model=str(tool_model), args=args, train_dataset=Dataset.from_list(rows * 2),
                          tools=[lookup], environment_factory=CounterEnv, **trainer_rewards(config, args))
    run.train()

    called = [(start, value) for start, value, calls in SEEN if calls]
    assert len(called) >= len(SEEN) * 3 // 4 >= 6  # the model really calls its tool
    assert all(value == start + 3 for start, value in called)  # each row read its own environment
    assert all(calls == [] or (calls[0]["name"], calls[0]["arguments"]) == ("add", {"n": 3})
               for _, _, calls in SEEN)
    rewards = run._logs["rewards"]
    made = [bool(calls) for _, _, calls in SEEN[-len(rewards["final_state_match"]):]]
    assert list(rewards["final_state_match"]) == [1.0 if m else 0.0 for m in made]
    assert list(rewards["tool_call_match"]) == [1.0 if m else 0.0 for m in made]
    # TRL adds the environment's own get_reward() as a reward named after its class: the episode it recorded
    assert list(rewards["CounterEnv"]) == [2.0 if m else 0.0 for m in made]
    assert all(not math.isnan(v) for v in rewards["tool_error_penalty"])
    # the batch that raised was rescored row by row against each row's own environment
    last = SEEN[-len(rewards["trl_env_batch"]):]
    # Rows whose environment made the reward fail count at their group's floor (a failure's 0.0, never more).
    truth = [0.0 if start in (1, 5) else float(value == start + 3) for start, value, _ in last]
    got = list(rewards["trl_env_batch"])
    assert got == truth and any(start in (1, 5) for start, _, _ in last)
    # what TRL logged of rewardhub's rows (reasons, outcomes) is text: never an environment
    assert all(isinstance(v, str | None) for values in run._logs["extra"].values() for v in values)
