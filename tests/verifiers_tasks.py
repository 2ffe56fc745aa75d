"""verifiers 0.4 tasks the hub tests score with (imported inside verifiers' own environment, by import path)."""

import verifiers.v1 as vf

from rewardhub.trainers.hubs.verifiers import metric_function, reward_function

REWARDHUB = {"rewards": [
    {"name": "exact_match", "alias": "answer"},
    {"name": "format_regex", "alias": "format", "weight": 0.5, "params": {"pattern": "<answer>.*</answer>", "mode": "search"}},
]}
rewardhub_total = reward_function(REWARDHUB)
rewardhub_components = metric_function(REWARDHUB)


class MathData(vf.TaskData):
    answer: str = ""


class MathTask(vf.Task[MathData, vf.TaskConfig]):
    """Two reward functions, as a verifiers environment writes them."""

    @vf.reward(weight=1.0)
    async def correct(self, task, trace) -> float:
        return 1.0 if task.answer in trace.last_reply else 0.0

    @vf.reward(weight=0.25)
    async def called_a_tool(self, task, trace) -> float:
        return 1.0 if trace.tool_messages else 0.0


async def brevity(task, trace) -> float:
    """A reward function plugged through the task's config."""
    return 1.0 if len(trace.last_reply) <= 10 else 0.0


class SandboxTask(vf.Task[MathData, vf.TaskConfig]):
    @vf.reward
    async def tests_pass(self, task, trace, runtime) -> float:  # needs a runtime: skipped offline
        return 1.0
