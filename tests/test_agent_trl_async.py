"""TRL 1.16's async GRPO path: environment state reaches rewards only through ``get_reward()``.

``trl.experimental.async_grpo``'s ``AsyncRolloutWorker`` needs a vLLM server to generate, which
cannot run here. What it does with a finished rollout is run as released: the environment is
drawn and reset with the row, its tool methods are called as its tool dict calls them, then
``get_reward()`` runs in the worker's tool pool (``loop.run_in_executor``) and the worker's own
``_score_group`` (of ``_AsyncRolloutLoop``, the loop the worker runs) puts it in a reward column beside the reward functions (which get the episodes'
messages but no ``environments``), sums unweighted and computes advantages.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
async_worker = pytest.importorskip("trl.experimental.async_grpo.async_rollout_worker")

from rewardhub.trainers.environments import ScoredEnvironment  # noqa: E402
from rewardhub.trainers.grpo import trainer_rewards  # noqa: E402

PROMPT = [{"role": "user", "content": "Add 3 to the counter."}]
WANT = [{"name": "add", "arguments": {"n": 3}}]


class Counter(ScoredEnvironment):
    rewardhub_config = {"rewards": [{"name": "final_state_match"}, {"name": "tool_call_match"},
                                    {"name": "tool_error_penalty", "weight": 0.5}]}

    def reset(self, **row):
        self.value = row["start"]

    def add(self, n: int) -> str:
        """Add to the counter.

        Args:
            n: How much to add.
        """
        if n < 0:
            raise ValueError("only positive amounts")
        self.value += n
        return str(self.value)


def episode(calls: list[tuple[dict, str]], final: str) -> list[dict]:
    steps = []
    for arguments, result in calls:
        steps += [{"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "add", "arguments": arguments}}]},
                  {"role": "tool", "name": "add", "content": result}]
    return [*steps, {"role": "assistant", "content": final}]


async def rollout(row: dict, calls: list[dict], pool: ThreadPoolExecutor) -> tuple[list[dict], tuple]:
    """One rollout as the worker runs it: reset, the tool calls, then get_reward in the tool pool."""
    env = Counter()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(pool, lambda: env.reset(**row))
    tools = {name: getattr(env, name) for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
             if name not in ("reset", "get_reward") and not name.startswith("_")}
    assert list(tools) == ["add"]  # the mixin's helpers stay out of the model's tools
    made = []
    for arguments in calls:
        try:
            made.append((arguments, str(tools["add"](**arguments))))
        except Exception as exc:  # as the worker reports a failed tool
            made.append((arguments, str({"error": str(exc)})))
    reward = await loop.run_in_executor(pool, env.get_reward)
    return episode(made, "Done."), (type(env), reward)


def test_get_reward_scores_each_environments_own_episode_through_the_async_worker():
    rows = [{"prompt": PROMPT, "start": s, "expected_state": {"value": s + 3}, "expected_calls": WANT}
            for s in (1, 5, 2, 0)]
    scripts = [[{"n": 3}], [{"n": 2}], [{"n": -1}, {"n": 3}], []]

    async def main():
        with ThreadPoolExecutor(2) as pool:
            return await asyncio.gather(*(rollout(r, c, pool) for r, c in zip(rows, scripts, strict=True)))

    results = asyncio.run(main())
    funcs = trainer_rewards({"rewards": [{"name": "tool_call_match"}, {"name": "turn_budget",
                                                                        "params": {"max_turns": 2}}]},
                            composite=True)["reward_funcs"]
    worker = object.__new__(async_worker._AsyncRolloutLoop)  # the rollout loop AsyncRolloutWorker runs
    worker.reward_funcs = funcs
    worker.reward_func_names = ["rewardhub", "Counter"]
    worker._env_reward_types = [Counter]
    worker._provides_rollout_reward = False
    sequence = SimpleNamespace(input_ids=[1, 2], completion_mask=[0, 1], old_log_probs=[0.0, 0.0])
    group = async_worker.RolloutGroup(
        prompts=[PROMPT] * 4, reward_kwargs={k: [r[k] for r in rows] for k in ("expected_state", "expected_calls")},
        completions=[c for c, _ in results], completions_ids=[[1]] * 4, completions_sequences=[[sequence]] * 4,
        tool_call_counts=[len(s) for s in scripts], tool_failure_counts=[0, 0, 1, 0], model_version=0, group_id=0,
        env_rewards=[r for _, r in results], rollout_rewards=[None] * 4)
    from accelerate import PartialState

    PartialState(cpu=True)  # the worker logs through accelerate's logger, as in its own process
    samples = asyncio.run(worker._score_group(group))
    env_column = [s.metrics["rewards/Counter"] for s in samples]
    # state right + calls exact = 2; wrong amount = 0; a failed call then the right one: state 1,
    # calls 0 (not exactly the expected ones), one failure -0.25; no call: state 0, calls 0, 0
    assert env_column == pytest.approx([2.0, 0.0, 0.75, 0.0])
    # the reward functions saw the messages (no environments): calls from the episode, turns counted
    assert [s.metrics["rewards/rewardhub"] for s in samples] == pytest.approx([2.0, 1.0, 0.0, 1.0])
    assert [s.metrics["reward"] for s in samples] == pytest.approx([4.0, 1.0, 0.75, 1.0])
