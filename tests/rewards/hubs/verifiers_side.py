"""Run in verifiers 0.4.0's own environment (tests/hubs.py): a verifiers Task as the verifiers_task reward, beside
verifiers scoring the same conversations itself (``await task.score(trace)``). Prints JSON."""

import asyncio
import json

from verifiers_tasks import MathData, MathTask

import rewardhub
from rewardhub.rewards.hubs.verifiers import trace_of

conversations = [
    [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
    [{"role": "user", "content": "2+2?"},
     {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                           "function": {"name": "calc", "arguments": '{"x": "2+2"}'}}]},
     {"role": "tool", "tool_call_id": "c1", "content": "4"}, {"role": "assistant", "content": "the answer is 4"}],
    [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "5"}],
]
answers = ["4", "4", "4"]


async def natively(task_config=None):
    out = []
    for conversation, answer in zip(conversations, answers, strict=True):
        data = MathData(prompt="2+2?", answer=answer)
        trace = trace_of(data, "MathTask", conversation)
        await MathTask(data, task_config).score(trace)
        out.append(trace.reward)
    return out


reward = rewardhub.get("verifiers_task", task="verifiers_tasks:MathTask")
result = reward.evaluate([c[:1] for c in conversations], [c[1:] for c in conversations], answer=answers)
out = {"values": result.values, "reasons": result.reasons, "native": asyncio.run(natively())}
plugged = {"rewards": {"brevity": {"fn": "verifiers_tasks:brevity", "weight": 2.0}}}
with_plugged = rewardhub.get("verifiers_task", task="verifiers_tasks:MathTask", config=plugged)
out["plugged"] = with_plugged.evaluate([c[:1] for c in conversations], [c[1:] for c in conversations],
                                       answer=answers).values
from verifiers.v1 import TaskConfig  # noqa: E402

out["plugged_native"] = asyncio.run(natively(TaskConfig(**plugged)))
sandbox = rewardhub.get("verifiers_task", task="verifiers_tasks:SandboxTask").evaluate(["q"], ["a"], answer=["a"])
out["sandbox"] = [sandbox.values, sandbox.reasons]
errors = []
for params in ({"task": "verifiers_tasks:brevity"}, {"task": "verifiers_tasks:MathTask", "config": {"rewardz": {}}}):
    try:
        rewardhub.get("verifiers_task", **params)
    except rewardhub.ConfigError as exc:
        errors.append(str(exc))
out["errors"] = errors
print(json.dumps(out))
