"""OpenRLHF 0.11.2 multi-turn agents scored by rewardhub, through OpenRLHF's own executor.

What runs is OpenRLHF's released source: ``_load_agent_executor`` (openrlhf/trainer/ray/vllm_engine.py,
compiled alone since the file imports ray) loads examples/openrlhf_agent.py as ``--train.agent_func_path``
does, and its ``MultiTurnAgentExecutor.execute`` (openrlhf/utils/agent.py) drives the episode: it
resets the instance, generates, calls ``step`` and sums the rewards. vLLM cannot run here: a
scripted engine answers each turn of each rollout.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest
from frameworks import released_definitions
from paths import EXAMPLES
from test_frameworks_openrlhf import openrlhf_root, tokenizer  # noqa: F401 (fixtures)

EXAMPLE = EXAMPLES / "openrlhf_agent.py"
CONFIG = {"rewards": [{"name": "final_state_match"}, {"name": "tool_call_match"},
                      {"name": "tool_error_penalty", "weight": 0.5}]}
PROMPT = "<|im_start|>user\nAdd 3 to the counter.<|im_end|>\n<|im_start|>assistant\n"
CALL = '<tool_call>\n{"name": "add", "arguments": {"n": 3}}\n</tool_call>'
LABEL = {"expected_state": {"value": 3}, "expected_calls": [{"name": "add", "arguments": {"n": 3}}]}


class TurnEngine:
    """Stands in for vLLM: rollout ``i`` of the prompt answers its turn ``k`` with ``scripts[i][k]``."""

    def __init__(self, tok, scripts: list[list[str]]):
        self.tokenizer, self.scripts = tok, scripts

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):  # noqa: ARG002
        text = self.tokenizer.decode(prompt_token_ids, skip_special_tokens=False)
        rollout = int(text.split("rollout ")[1].split(":")[0]) if "rollout " in text else 0
        turn = text.count("<tool_response>")
        answer = self.scripts[rollout][turn]
        ids = self.tokenizer(answer + "<|im_end|>", add_special_tokens=False)["input_ids"]
        await asyncio.sleep(0)
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, text=answer, finish_reason="stop",
                                                        logprobs=None)])


@pytest.fixture
def executor(openrlhf_root, tmp_path, monkeypatch):  # noqa: F811
    from openrlhf.utils.agent import AgentExecutorBase

    config = tmp_path / "episode.json"
    config.write_text(json.dumps(CONFIG))
    monkeypatch.setenv("REWARDHUB_CONFIG", str(config))
    engine_file = openrlhf_root / "openrlhf" / "trainer" / "ray" / "vllm_engine.py"
    loader = released_definitions(engine_file, ["_load_agent_executor"], {"AgentExecutorBase": AgentExecutorBase})
    return loader._load_agent_executor(str(EXAMPLE))


def run(executor, tokenizer, scripts, max_length=512):  # noqa: F811
    engine = TurnEngine(tokenizer, scripts)
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    tasks = [executor.execute(prompt=PROMPT.replace("Add 3", f"rollout {i}: Add 3"), label=LABEL,
                              sampling_params=params, max_length=max_length, hf_tokenizer=tokenizer,
                              llm_engine=engine) for i in range(len(scripts))]
    return asyncio.run(_gather(tasks))


async def _gather(tasks):
    return await asyncio.gather(*tasks)


def test_episodes_are_scored_at_done_and_the_sum_is_the_episode_score(executor, tokenizer):  # noqa: F811
    scripts = [
        [CALL, "Done."],                                              # honest: 1 + 1
        [CALL.replace('"n": 3', '"n": 2'), "Done."],                   # wrong amount: 0 + 0
        ["I added 3, the counter is 3 now."],                          # claims success, did nothing
        [CALL.replace('"add"', '"sub"'), CALL, "Done."],               # a failed call, then the right one
        [CALL.replace("3}}", "3}"), "Done."],                          # malformed JSON
    ]
    outputs = run(executor, tokenizer, scripts)
    # the failed call: state reached (1) but not the exact calls (0), one failure (0.5 x -0.5)
    assert [o["reward"] for o in outputs] == pytest.approx([2.0, 0.0, 0.0, 0.75, -0.25])
    assert [float(o["scores"]) for o in outputs] == pytest.approx([2.0, 0.0, 0.0, 0.75, -0.25])
    logs = {k: float(v) for k, v in outputs[3]["extra_logs"].items()}
    assert logs == {"final_state_match": 1.0, "tool_call_match": 0.0, "tool_error_penalty": -0.5}
    assert len(outputs[0]["action_ranges"]) == 2


def test_an_episode_cut_by_the_token_budget_keeps_the_score_it_had(executor, tokenizer):  # noqa: F811
    """The executor stops calling step when the budget is spent: the rewards given so far add up to
    the episode's score at its last step (here: the call made, the state reached, no final answer)."""
    prompt_len = len(tokenizer(PROMPT.replace("Add 3", "rollout 0: Add 3"), add_special_tokens=False)["input_ids"])
    first = len(tokenizer(CALL + "<|im_end|>", add_special_tokens=False)["input_ids"])
    (output,) = run(executor, tokenizer, [[CALL, "Done."]], max_length=prompt_len + first + 20)
    assert len(output["action_ranges"]) == 1
    assert output["reward"] == pytest.approx(2.0)
