"""An OpenRLHF agent file (``--train.agent_func_path``) whose episodes rewardhub scores (OpenRLHF 0.11.2).

The environment is a counter with one tool, ``add(n)``, called in the hermes format
(``<tool_call>{"name": "add", "arguments": {"n": 3}}</tool_call>``); the episode ends on a turn without
a call. rewardhub scores it with the config in ``$REWARDHUB_CONFIG``, e.g.::

    rewards:
      - name: final_state_match      # the counter's value vs the label's expected_state
      - name: tool_call_match        # the calls made vs the label's expected_calls
      - name: tool_error_penalty
        weight: 0.5

    python -m openrlhf.cli.train_ppo_ray ... --train.agent_func_path examples/openrlhf_agent.py \\
        --data.label_key task      # a dataset column of objects: {"expected_state": ..., "expected_calls": ...}
"""

import json
import re

from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

from rewardhub.trainers.openrlhf_agent import scored_agent

CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


class Counter(AgentInstanceBase):
    def __init__(self, *args, **kwargs):
        self.value = 0

    def add(self, n: int) -> str:
        self.value += int(n)
        return str(self.value)

    async def step(self, states, **kwargs):
        calls = CALL.findall(states["action_text"])
        if not calls:
            return {"environment_feedback": "", "done": True}
        results = []
        for block in calls:
            try:
                call = json.loads(block)
                results.append(getattr(self, call["name"])(**call["arguments"]) if call["name"] == "add"
                               else {"error": f"no tool {call['name']!r}"})
            except Exception as exc:  # a bad call is the model's mistake: report it, as a tool loop does
                results.append({"error": str(exc)})
        feedback = "".join(f"<tool_response>\n{r}\n</tool_response>" for r in results)
        return {"environment_feedback": f"<|im_end|>\n<|im_start|>user\n{feedback}<|im_end|>\n<|im_start|>assistant\n",
                "done": False}


class AgentExecutor(MultiTurnAgentExecutor):
    def __init__(self):
        super().__init__(scored_agent(Counter))
