"""TRL 1.16's async GRPO path: environment state reaches rewards only through ``get_reward()``.

End to end on the rollout side: TRL's released rollout loop (``_AsyncRolloutLoop``, what
``AsyncRolloutWorker``'s child process runs) in a thread (``rewardhub.testing.async_grpo``), sampling
over HTTP from a vLLM-protocol completions server on 127.0.0.1 backed by the tiny tool-calling model,
running the calls on each rollout's environment and scoring with ``get_reward()`` and the reward
functions. TRL 1.16's trainer step itself needs a GPU (FlashAttention-3 tree attention, a CUDA MFU
probe at construction; see that module). A second test drives the loop's ``_score_group`` on
hand-made rollouts, for the exact values of each reward column.
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

import rewardhub  # noqa: E402
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


# ----- end to end: AsyncGRPOTrainer.train() -------------------------------------------------------------
SEEN: list[tuple[int, int, list]] = []  # (row's start, its environment's value, the calls it recorded)


@rewardhub.sample_reward(name="async_seen_env")
def async_seen_env(text, start, env, tool_calls):
    SEEN.append((start, env.value, tool_calls))
    return 0.0


class TrainedCounter(Counter):
    rewardhub_config = {"rewards": [{"name": "final_state_match"}, {"name": "tool_call_match"},
                                    {"name": "async_seen_env", "weight": 0.0}]}


@pytest.fixture(scope="module")
def tool_model(tmp_path_factory):
    import torch

    from rewardhub.testing.tool_caller import make_tool_caller

    torch.set_num_threads(1)
    conversation = [*PROMPT, {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "add", "arguments": {"n": 3}}}]},
                    {"role": "tool", "name": "add", "content": "4"}, {"role": "assistant", "content": "Added."}]
    return make_tool_caller(tmp_path_factory.mktemp("async") / "lm", conversation, tools=[TrainedCounter().add])


@pytest.mark.slow
def test_the_released_rollout_loop_generates_calls_tools_and_scores_each_environment(tool_model, clean_registry):
    """TRL's ``_AsyncRolloutLoop`` end to end: samples over HTTP from the tiny tool caller, runs its calls
    on each rollout's own environment, scores them with ``get_reward()`` and the reward functions."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl.experimental.async_grpo import AsyncGRPOConfig

    from rewardhub.testing.async_grpo import CompletionsServer, LocalRolloutWorker

    clean_registry.add(async_seen_env, source="tests")
    SEEN.clear()
    rows = [{"prompt": PROMPT, "start": s, "expected_state": {"value": s + 3}, "expected_calls": WANT}
            for s in (1, 5, 2, 0)]
    funcs = trainer_rewards({"rewards": [{"name": "tool_call_match"}, {"name": "turn_budget", "params": {
        "max_turns": 2}}]}, composite=True)["reward_funcs"]
    args = AsyncGRPOConfig(output_dir="unused", use_cpu=True, bf16=False, report_to="none", num_generations=2,
                           max_completion_length=48, max_inflight_tasks=4, max_tool_calling_iterations=2,
                           temperature=0.5)  # TRL seeds each request at random: sampling is not reproducible
    with CompletionsServer.from_pretrained(tool_model) as server:
        worker = LocalRolloutWorker.from_config(server, args, dataset=Dataset.from_list(rows * 4), reward_funcs=funcs,
                                                processing_class=AutoTokenizer.from_pretrained(tool_model),
                                                environment_factory=TrainedCounter)
        worker.start()
        try:
            samples = worker.take(16)
        finally:
            worker.stop()

    assert server.requests >= 16
    called = [(start, value) for start, value, calls in SEEN if calls]
    assert len(called) >= len(SEEN) // 2 >= 8  # the model really calls its tool through the server
    assert all(value == start + 3 for start, value in called)  # each get_reward() read its own environment
    one_call = [[c["function"] for m in s.completion for c in m.get("tool_calls") or []] == [
        {"name": "add", "arguments": {"n": 3}}] for s in samples]
    no_call = [not any(m.get("tool_calls") for m in s.completion) for s in samples]
    assert sum(one_call) >= 8  # the exact checks below have rows to check
    for sample, right, none in zip(samples, one_call, no_call, strict=True):
        # the environment's column: final_state_match + tool_call_match of the calls it recorded
        if right or none:
            assert sample.metrics["rewards/TrainedCounter"] == (2.0 if right else 0.0)
        # the reward functions saw the episode's messages (calls parsed by TRL from the model's text)
        if right:
            assert sample.metrics["rewards/rewardhub"] == 2.0  # the expected call, in 2 turns
    groups: dict[int, list] = {}
    for sample in samples:
        groups.setdefault(sample.group_id, []).append(sample.advantage)
    assert all(abs(sum(a)) < 1e-5 for a in groups.values() if len(a) == 2)  # advantages centred per group
