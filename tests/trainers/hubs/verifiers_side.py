"""Run in verifiers 0.4.0's own environment (tests/hubs.py): a rewardhub set as a verifiers reward function,
plugged into a task's config and scored by verifiers' ``task.score(trace)``. Prints JSON."""

import asyncio
import json

from verifiers.v1 import TaskConfig
from verifiers_tasks import MathData, MathTask

from rewardhub.rewards.hubs.verifiers import trace_of

config = TaskConfig(rewards={"rewardhub": {"fn": "verifiers_tasks:rewardhub_total", "weight": 0.5}},
                    metrics={"components": {"fn": "verifiers_tasks:rewardhub_components"}})
out = []
for reply in ("<answer>4</answer>", "<answer>5</answer>", "4"):
    data = MathData(prompt="2+2?", answer="4")
    trace = trace_of(data, "MathTask", [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": reply}])
    asyncio.run(MathTask(data, config).score(trace))
    out.append({"rewards": {k: [v.score, v.weight] for k, v in trace.rewards.items()}, "total": trace.reward,
                "metrics": trace.metrics})
print(json.dumps(out))
