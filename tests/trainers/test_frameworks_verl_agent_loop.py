"""verl 0.9.1's own ToolAgentLoop builds the multi-turn rollouts; rewardhub's reward manager scores them.

What runs is verl's released source (see tests/frameworks.py): ``ToolAgentLoop.run`` (its state machine,
the ``hermes`` ToolParser, ``FunctionTool`` calls, the Continuous Token builder that lays out the
response tokens and ``response_mask``), then both ways verl hands a rollout to the reward manager:
``AgentLoopWorker._compute_score`` (the in-line agent-loop reward, verl's default without a reward
model: no response mask, ``tool_extra_fields`` and ``__num_turns__``) and the reward loop
(``RewardLoopWorker.compute_score_batch`` on the padded batch with the mask). vLLM cannot run here: a
scripted server answers each turn with the token ids of a fixed text, as its ``generate`` would.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import sys
from abc import ABC, abstractmethod
from contextlib import contextmanager
from enum import Enum
from types import ModuleType, SimpleNamespace
from typing import Any, Optional
from uuid import uuid4

import numpy as np
import pytest
import torch
from frameworks import package_without_init, released_definitions, released_module
from pydantic import BaseModel, ConfigDict
from test_frameworks_verl import Rows, compose, verl, verl_root, write_config  # noqa: F401 (fixtures)
from test_frameworks_verl_agent import MANAGER, manager_base, qwen_tokenizer, reward_worker, score_rows  # noqa: F401

import rewardhub

PROMPT = [{"role": "user", "content": "Add 3 to the counter."}]
CALL = '<tool_call>\n{"name": "add", "arguments": {"n": %d}}\n</tool_call>'
CONFIG = {"rewards": [{"name": "tool_call_match", "weight": 1.0}, {"name": "exact_match", "weight": 1.0},
                      {"name": "tool_error_penalty", "weight": 1.0},
                      {"name": "turn_budget", "weight": 1.0, "params": {"free_turns": 2, "max_turns": 3}},
                      {"name": "verl_seen", "weight": 0.0}]}
SEEN: dict[int, dict] = {}  # extra_info's index -> the trajectory parts a reward asked for
# what each rollout's model says, turn by turn (the loop calls the tools in between)
SCRIPTS = [
    [CALL % 3, "The counter holds \\boxed{4}."],                         # honest: add(3) -> 4
    ["I added it myself.\n<tool_response>\n4\n</tool_response>\nThe counter holds \\boxed{4}."],  # typed result
    [CALL % 9, CALL % 3, "\\boxed{4}"],                                  # add(9) raises, then add(3)
]


def add(n: int) -> tuple[str, float]:
    """Add to the counter, which starts at 1.

    Args:
        n: How much to add (at most 5).
    """
    if n > 5:
        raise ValueError(f"cannot add {n}: at most 5")
    return str(1 + n), 0.25  # (result, tool reward): verl keeps the reward in tool_rewards


@rewardhub.sample_reward(name="verl_seen")
def verl_seen(text, index, num_turns, verl_num_turns, turn_scores, tool_rewards, tool_calls, final_text):
    SEEN[index] = {"num_turns": num_turns, "verl_num_turns": verl_num_turns, "turn_scores": turn_scores,
                   "tool_rewards": tool_rewards, "calls": [(c["name"], c["arguments"], c["result"], c["error"])
                                                          for c in tool_calls], "final_text": final_text}
    return 0.0


@pytest.fixture
def seen(clean_registry):
    """The verl_seen reward registered for the manager's set, and what it saw."""
    from serving import ensure_registered

    ensure_registered()
    clean_registry.add(verl_seen, source="tests")
    SEEN.clear()
    return SEEN


ERROR = "Error executing tool 'add': cannot add 9: at most 5"
# what verl's rollouts hand the rewards, by extra_info index: the model's turns (verl counts prompt,
# turns and tool rounds), its tool rewards, the calls with their results or errors, the final answer
PARTS = {
    0: {"num_turns": 2, "verl_num_turns": 4, "turn_scores": [], "tool_rewards": [0.25],
        "calls": [("add", {"n": 3}, "4", None)], "final_text": "The counter holds \\boxed{4}."},
    1: {"num_turns": 1, "verl_num_turns": 2, "turn_scores": [], "tool_rewards": [], "calls": [],
        "final_text": "I added it myself.\n<tool_response>\n4\n</tool_response>\nThe counter holds \\boxed{4}."},
    2: {"num_turns": 3, "verl_num_turns": 6, "turn_scores": [], "tool_rewards": [0.0, 0.25],
        "calls": [("add", {"n": 9}, ERROR, ERROR), ("add", {"n": 3}, "4", None)], "final_text": "\\boxed{4}"},
}


@pytest.fixture(scope="module")
def agent_loop(verl, verl_root):  # noqa: F811
    """verl's ToolAgentLoop and AgentLoopWorker, compiled from the released files (agent_loop.py imports ray)."""
    loop = released_definitions(verl_root / "utils" / "ray_utils.py", ["get_event_loop"], {"asyncio": asyncio})
    ray_utils = ModuleType("verl.utils.ray_utils")
    ray_utils.get_event_loop = loop.get_event_loop
    sys.modules[ray_utils.__name__] = ray_utils
    for name in ("experimental", "experimental/agent_loop", "tools", "workers", "workers/rollout"):
        package_without_init("verl." + name.replace("/", "."), verl_root / name)
    schemas = released_module("verl.tools.schemas", verl_root / "tools" / "schemas.py")
    trace = released_module("verl.utils.rollout_trace", verl_root / "utils" / "rollout_trace.py")
    parser = released_module("verl.experimental.agent_loop.tool_parser",
                             verl_root / "experimental" / "agent_loop" / "tool_parser.py")
    function_tool = released_module("verl.tools.function_tool", verl_root / "tools" / "function_tool.py")
    wiring = released_module("verl.utils.tokenizer.continuous_token_wiring",
                             verl_root / "utils" / "tokenizer" / "continuous_token_wiring.py")
    replica = released_definitions(verl_root / "workers" / "rollout" / "replica.py", ["TokenOutput"],
                                   {"BaseModel": BaseModel, "Optional": Optional, "Any": Any})
    model = released_definitions(verl_root / "utils" / "model.py", ["compute_position_id_with_mask"], {"torch": torch})
    base = released_definitions(verl_root / "experimental" / "agent_loop" / "agent_loop.py", [
        "logger", "AgentLoopMetrics", "AgentLoopOutput", "DictConfigWrap", "ToolListWrap", "AgentLoopBase",
        "_agent_loop_registry", "register", "AgentLoopWorker"], {
        "asyncio": asyncio, "logging": logging, "os": os, "random": random, "ABC": ABC,
        "abstractmethod": abstractmethod, "Any": Any, "Optional": Optional, "BaseModel": BaseModel,
        "ConfigDict": ConfigDict, "torch": torch, "np": np, "get_event_loop": loop.get_event_loop,
        "create_continuous_token_builder": wiring.create_continuous_token_builder, "simple_timer": timed,
        "compute_position_id_with_mask": model.compute_position_id_with_mask,
        "TensorDict": lambda tensors, batch_size: tensors, "DataProto": Rows})
    names = {"Any": Any, "Optional": Optional, "AgentLoopMetrics": base.AgentLoopMetrics}
    for cls in (base.AgentLoopMetrics, base.AgentLoopOutput, replica.TokenOutput):  # compiled outside a module
        cls.model_rebuild(_types_namespace=names)
    tool_loop = released_definitions(verl_root / "experimental" / "agent_loop" / "tool_agent_loop.py", [
        "logger", "SPEC_DECODE_EXTRA_KEYS", "AgentState", "AgentData", "ToolAgentLoop"], {
        "asyncio": asyncio, "json": json, "logging": logging, "os": os, "Enum": Enum, "Any": Any,
        "Optional": Optional, "uuid4": uuid4, "torch": torch, "AgentLoopBase": base.AgentLoopBase,
        "AgentLoopOutput": base.AgentLoopOutput, "ToolListWrap": base.ToolListWrap, "register": base.register,
        "FunctionCall": parser.FunctionCall, "ToolParser": parser.ToolParser, "FunctionTool": function_tool.FunctionTool,
        "normalize_function_tool_return": function_tool.normalize_function_tool_return,
        "OpenAIFunctionCallSchema": schemas.OpenAIFunctionCallSchema,
        "OpenAIFunctionParsedSchema": schemas.OpenAIFunctionParsedSchema, "ToolResponse": schemas.ToolResponse,
        "simple_timer": timed, "rollout_trace_op": trace.rollout_trace_op, "TokenOutput": replica.TokenOutput})
    return SimpleNamespace(base=base, loop=tool_loop.ToolAgentLoop, TokenOutput=replica.TokenOutput,
                           tool=function_tool.FunctionTool(name="add", fn=add, is_async=False,
                                                           tool_schema=schemas.OpenAIFunctionToolSchema.model_validate(
                                                               tool_schema())))


@contextmanager
def timed(name: str, timing: dict):
    """verl's simple_timer (verl/utils/profiler imports torch.distributed and codetiming): the timing only."""
    yield
    timing[name] = timing.get(name, 0.0)


def tool_schema() -> dict:
    from transformers.utils import get_json_schema

    return get_json_schema(add)


class ScriptedServer:
    """Stands in for verl's LLM server client: each ``generate`` answers the next turn of a script."""

    def __init__(self, tokenizer, token_output, turns: list[str]):
        self.tokenizer, self.token_output, self.turns = tokenizer, token_output, list(turns)

    async def generate(self, request_id, prompt_ids, sampling_params, **_media):
        text = self.turns.pop(0)
        ids = self.tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"]
        return self.token_output(token_ids=ids)


def rollouts(agent_loop, tokenizer, config) -> list:
    """Each script run through verl's ToolAgentLoop: its AgentLoopOutput."""
    base = agent_loop.base

    async def one(turns):
        loop = agent_loop.loop(trainer_config=base.DictConfigWrap(config),
                               server_manager=ScriptedServer(tokenizer, agent_loop.TokenOutput, turns),
                               tokenizer=tokenizer, processor=None, dataset_cls=None,
                               data_config=base.DictConfigWrap(config.data), tools=base.ToolListWrap([agent_loop.tool]))
        return await loop.run({}, raw_prompt=PROMPT, extra_info={"index": 0})

    async def main():
        return [await one(turns) for turns in SCRIPTS]

    return asyncio.run(main())


@pytest.fixture(scope="module")
def loop_config(verl_root, tmp_path_factory):  # noqa: F811
    """verl's composed config for multi-turn hermes rollouts scored by rewardhub's manager."""
    tmp_path = tmp_path_factory.mktemp("config")
    return compose(verl_root, [
        "reward.reward_manager.source=importlib", f"reward.reward_manager.module.path=pkg://{MANAGER}",
        "reward.reward_manager.name=RewardhubRewardManager", "actor_rollout_ref.rollout.multi_turn.enable=True",
        "actor_rollout_ref.rollout.multi_turn.format=hermes", "data.max_prompt_length=1024",
        "data.max_response_length=256", f"+reward.reward_manager.rewardhub.config={write_config(tmp_path, CONFIG)}"])


def kwargs_of(i: int) -> dict:
    """The dataset row's fields the agent loop is run with (what _compute_score adds as columns)."""
    return {"data_source": "counter", "reward_model": {"ground_truth": "4", "style": "rule"},
            "extra_info": {"index": i, "expected_calls": [{"name": "add", "arguments": {"n": 3}}]},
            "raw_prompt": PROMPT}


EXPECTED = {"tool_call_match": [1.0, 0.0, 0.0], "exact_match": [1.0, 1.0, 1.0], "tool_error_penalty": [0.0, 0.0, -0.5],
            "turn_budget": [1.0, 1.0, 0.5]}  # the third rollout took three assistant turns


@pytest.fixture(scope="module")
def outputs(agent_loop, qwen_tokenizer, loop_config):  # noqa: F811
    return rollouts(agent_loop, qwen_tokenizer, loop_config)


def test_the_tool_agent_loop_lays_out_turns_and_tool_results(outputs, qwen_tokenizer):  # noqa: F811
    assert [o.num_turns for o in outputs] == [4, 2, 6]  # prompt + assistant turns + tool rounds
    assert 0 in outputs[0].response_mask and set(outputs[1].response_mask) == {1}
    failure = qwen_tokenizer.decode([t for t, m in zip(outputs[2].response_ids, outputs[2].response_mask, strict=True)
                                     if m == 0])
    assert "Error executing tool 'add': cannot add 9: at most 5" in failure


def test_the_in_line_agent_loop_reward_scores_episodes(agent_loop, verl, outputs, loop_config, qwen_tokenizer,  # noqa: F811
                                                       manager_base, seen):  # noqa: F811
    """AgentLoopWorker._compute_score: no response_mask; the manager finds the turns from the markers."""
    config = loop_config
    outputs = [o.model_copy(deep=True) for o in outputs]  # _compute_score writes the score into them
    scorer = reward_worker(verl, config, qwen_tokenizer)

    class Handle:  # a Ray actor handle's .remote, called in this process
        class compute_score:  # noqa: N801
            @staticmethod
            def remote(data):
                return scorer.compute_score(data)

    loop_worker = object.__new__(agent_loop.base.AgentLoopWorker)
    loop_worker.reward_loop_worker_handles, loop_worker.processor = [Handle()], None

    async def main():
        for i, output in enumerate(outputs):
            await loop_worker._compute_score([output], kwargs_of(i))

    asyncio.run(main())
    infos = [o.extra_fields["reward_extra_info"] for o in outputs]
    assert {alias: [info[alias] for info in infos] for alias in EXPECTED} == EXPECTED
    assert [o.reward_score for o in outputs] == [3.0, 2.0, 1.0]
    assert seen == PARTS


def test_the_reward_loop_scores_the_padded_batch_with_its_mask(verl, outputs, loop_config, qwen_tokenizer,  # noqa: F811
                                                               manager_base, seen):  # noqa: F811
    """The batch as AgentLoopWorker._agent_loop_postprocess pads it: prompts left, responses right."""
    config = loop_config
    width_p, width_r, pad = 1024, 256, qwen_tokenizer.pad_token_id
    prompts = [[pad] * (width_p - len(o.prompt_ids)) + o.prompt_ids for o in outputs]
    responses = [o.response_ids + [pad] * (width_r - len(o.response_ids)) for o in outputs]
    masks = [o.response_mask + [0] * (width_r - len(o.response_mask)) for o in outputs]
    attention = [[0] * (width_p - len(o.prompt_ids)) + [1] * (len(o.prompt_ids) + len(o.response_ids))
                 + [0] * (width_r - len(o.response_ids)) for o in outputs]

    def objects(values):
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array

    kwargs = [kwargs_of(i) for i in range(len(outputs))]
    rows = Rows({"prompts": torch.tensor(prompts), "responses": torch.tensor(responses),
                 "response_mask": torch.tensor(masks), "attention_mask": torch.tensor(attention)},
                {**{key: objects([k[key] for k in kwargs]) for key in kwargs[0]},
                 "tool_extra_fields": objects([o.extra_fields for o in outputs]),
                 "__num_turns__": np.array([o.num_turns for o in outputs], dtype=np.int32)})
    manager, results = score_rows(verl, config, qwen_tokenizer, rows)
    infos = [r["reward_extra_info"] for r in results]
    assert {alias: [info[alias] for info in infos] for alias in EXPECTED} == EXPECTED
    rm = type(manager).assemble_rm_scores(rows, [r["reward_score"] for r in results])
    assert seen == PARTS
    failed_turn_end = masks[2].index(0) - 1  # the penalty belongs to the turn whose call failed
    assert rm[2, failed_turn_end].item() == pytest.approx(-0.5)
