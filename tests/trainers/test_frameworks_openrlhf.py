"""OpenRLHF 0.11.2's own code driving rewardhub: its argument parser, its reward client, its sample logging.

What runs is OpenRLHF's released source (see tests/frameworks.py): the ``__main__`` block of
openrlhf/cli/train_ppo_ray.py (parser, ``hierarchize``, validation; ``train`` is where we take the
arguments), ``SingleTurnAgentExecutor`` from openrlhf/utils/agent.py (reward file loading, the HTTP
client with its retries), ``SamplesGenerator._process_response_into_experience`` from
openrlhf/trainer/ppo_utils/samples_generator.py and ``make_experience_batch`` from
openrlhf/trainer/ppo_utils/experience.py. vLLM cannot run here: ``ScriptedEngine`` stands in for the
engine's ``generate`` and returns given completions; the n samples of a prompt are executed
concurrently, as ``RolloutRayActor.generate_responses`` (openrlhf/trainer/ray/vllm_engine.py) does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from frameworks import main_block, release, released_definitions, released_module
from paths import EXAMPLES
from serving import serve_process

from rewardhub.trainers.errors import ShimConfigError

EXAMPLE = EXAMPLES / "openrlhf_reward.py"
VOTE = {"rewards": [{"name": "majority_vote", "alias": "vote", "weight": 1.0,
                     "params": {"group_size": 4, "equivalence": "string"}},
                    {"name": "exact_match", "alias": "accuracy", "weight": 1.0}]}
PROMPT = "<|im_start|>user\nWhat is {a} + {b}?<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module", params=["pinned", "newest"])
def openrlhf_root(request) -> Path:
    root = release("openrlhf", request.param)
    sys.path.append(str(root))
    yield root
    sys.path.remove(str(root))
    for name in [n for n in sys.modules if n == "openrlhf" or n.startswith("openrlhf.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def openrlhf(openrlhf_root):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    package = openrlhf_root / "openrlhf" / "trainer" / "ppo_utils"
    experience = released_module("openrlhf_released_experience", package / "experience.py")
    generator = released_definitions(package / "samples_generator.py", ["SamplesGenerator"], {
        "torch": torch, "Experience": experience.Experience})
    return SimpleNamespace(executor=SingleTurnAgentExecutor, generator=generator.SamplesGenerator,
                           make_batch=experience.make_experience_batch)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from rewardhub.testing.tiny_models import load_tokenizer, make_tokenizer

    return load_tokenizer(make_tokenizer(tmp_path_factory.mktemp("tok")))


def parse(openrlhf_root: Path, argv: list[str]):
    """Run train_ppo_ray's ``__main__`` block on ``argv``; returns the arguments ``train`` would get."""
    taken = {}
    namespace = {"__name__": "__main__", "argparse": argparse, "os": os, "datetime": datetime,
                 "train": lambda args: taken.setdefault("args", args)}
    saved = sys.argv
    sys.argv = ["train_ppo_ray", *argv]
    try:
        exec(main_block(openrlhf_root / "openrlhf" / "cli" / "train_ppo_ray.py"), namespace)
    finally:
        sys.argv = saved
    return taken["args"]


DOCUMENTED = ["--actor.model_name_or_path", "Qwen/Qwen2.5-0.5B-Instruct", "--data.prompt_data", "prompts.jsonl",
              "--data.input_key", "prompt", "--data.label_key", "solution", "--rollout.n_samples_per_prompt", "4",
              "--algo.advantage.estimator", "group_norm"]


def test_documented_command_line_parses(openrlhf_root):
    args = parse(openrlhf_root, [*DOCUMENTED, "--reward.remote_url", "http://127.0.0.1:8000/get_reward"])
    assert args.reward.remote_url == ["http://127.0.0.1:8000/get_reward"]  # split on commas for several servers
    assert args.data.label_key == "solution" and args.rollout.n_samples_per_prompt == 4
    file_args = parse(openrlhf_root, [*DOCUMENTED, "--reward.remote_url", str(EXAMPLE)])
    assert file_args.reward.remote_url == [str(EXAMPLE)]


def test_the_old_flags_are_rejected(openrlhf_root, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse(openrlhf_root, ["--remote_rm_url", "http://127.0.0.1:8000/get_reward", "--label_key", "solution"])
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --remote_rm_url" in capsys.readouterr().err


class ScriptedEngine:
    """Stands in for vLLM's engine: ``generate`` answers each prompt with its next scripted completion."""

    def __init__(self, tokenizer, completions: dict[str, list[str]]):
        self.tokenizer = tokenizer
        self.completions = {prompt: list(texts) for prompt, texts in completions.items()}

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        prompt = self.tokenizer.decode(prompt_token_ids, skip_special_tokens=False)
        text = self.completions[prompt].pop(0)
        await asyncio.sleep(0.01 * len(self.completions[prompt]))  # samples of a prompt finish at different times
        ids = self.tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"]
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)])


async def rollout(executor, tokenizer, completions: dict[str, list[str]], labels: dict[str, str]) -> list[dict]:
    """Every prompt's samples executed concurrently, as RolloutRayActor.generate_responses gathers them."""
    engine = ScriptedEngine(tokenizer, completions)
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    tasks = [executor.execute(prompt=prompt, label=labels[prompt], sampling_params=params, max_length=256,
                              hf_tokenizer=tokenizer, llm_engine=engine)
             for prompt, texts in completions.items() for _ in texts]
    return await asyncio.gather(*tasks)


def votes(a: int, b: int) -> list[str]:
    """Four completions for ``a + b``: three say the right sum, one is off by one."""
    return [rf"The answer is \boxed{{{a + b + (i == 2)}}}" for i in range(4)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``rewardhub serve`` in its own process, assembling groups of 4 (2 s to fill)."""
    config = tmp_path_factory.mktemp("serve") / "vote.json"
    config.write_text(json.dumps(VOTE))
    with serve_process(["--config", str(config), "--group-timeout", "2", "--log-level", "warning"]) as (base, proc):
        yield SimpleNamespace(url=f"{base}/get_reward", proc=proc)


def check_groups(outputs: list[dict], prompts: dict[str, tuple[int, int]]) -> None:
    for output in outputs:
        a, b = prompts[output["prompt"]]
        majority = rf"\boxed{{{a + b}}}" in output["observation_text"]
        extra = {k: _scalar(v) for k, v in output["extra_logs"].items()}
        assert extra["vote"] == (1.0 if majority else 0.0), output
        assert _scalar(output["reward"]) == (2.0 if majority else 0.0)  # vote + accuracy


def _scalar(value) -> float:
    """OpenRLHF hands on what the reward source returned: a list (HTTP) or a tensor (reward file)."""
    return float(value[0]) if isinstance(value, list) else float(value.flatten()[0])


def with_text(outputs: list[dict], tokenizer) -> list[dict]:
    for output in outputs:
        output["observation_text"] = tokenizer.decode(output["observation_tokens"], skip_special_tokens=False)
    return outputs


def test_openrlhf_http_client_gets_whole_groups_from_rewardhub_serve(openrlhf, tokenizer, server):
    prompts = {PROMPT.format(a=a, b=b): (a, b) for a, b in [(2, 3), (10, 20)]}
    executor = openrlhf.executor([server.url])  # args.reward.remote_url after the parser split it
    outputs = asyncio.run(rollout(executor, tokenizer, {p: votes(*ab) for p, ab in prompts.items()},
                                  {p: str(sum(ab)) for p, ab in prompts.items()}))
    check_groups(with_text(outputs, tokenizer), prompts)
    assert server.proc.poll() is None


def test_abstentions_reach_openrlhf_logs_as_nan_not_zero(openrlhf, tokenizer, server):
    """No labels (OpenRLHF sends "" without --data.label_key) and a group short of its size: the
    abstaining rewards become NaN in the experience info, and the abstention rates are logged."""
    prompt = PROMPT.format(a=1, b=1)
    executor = openrlhf.executor([server.url])
    outputs = asyncio.run(rollout(executor, tokenizer, {prompt: votes(1, 1)[:3]}, {prompt: ""}))
    for output in outputs:
        assert output["reward"] is not None, "the reward request failed"
    experiences = [openrlhf.generator._process_response_into_experience(None, output) for output in outputs]
    batch = openrlhf.make_batch(experiences)
    assert logged_mean(batch.info["vote/abstained"]) == 1.0  # 3 of 4 arrived within 2 s
    assert logged_mean(batch.info["accuracy/abstained"]) == 1.0
    assert math.isnan(logged_mean(batch.info["accuracy"]))  # not a 0% accuracy
    assert logged_mean(batch.info["abstained"]) == 1.0
    assert batch.rewards.flatten().tolist() == [0.0, 0.0, 0.0]  # abstain_value: OpenRLHF needs numbers


def logged_mean(values) -> float:
    """What PolicyModelActor logs for an info key: a float tensor of the values (openrlhf/trainer/ray/
    ppo_actor.py, training_step: ``torch.tensor(v, dtype=torch.float)`` for lists), then its plain mean."""
    return torch.tensor(values, dtype=torch.float).mean().item()


def test_the_reward_file_assembles_groups_in_the_engine_process(openrlhf, tokenizer, tmp_path, monkeypatch):
    config = tmp_path / "vote.json"
    config.write_text(json.dumps(VOTE))
    monkeypatch.setenv("REWARDHUB_CONFIG", str(config))
    executor = openrlhf.executor(str(EXAMPLE))  # imports the file with importlib, as each engine does
    prompt = PROMPT.format(a=4, b=4)
    outputs = asyncio.run(rollout(executor, tokenizer, {prompt: votes(4, 4)}, {prompt: "8"}))
    check_groups(with_text(outputs, tokenizer), {prompt: (4, 4)})
    experiences = [openrlhf.generator._process_response_into_experience(None, output) for output in outputs]
    assert sorted(e.info["vote"].item() for e in experiences) == [0.0, 1.0, 1.0, 1.0]


def test_the_reward_file_fails_on_import_without_a_config(openrlhf, monkeypatch):
    """Before, each call failed and OpenRLHF logged it at INFO level and trained on None rewards."""
    monkeypatch.delenv("REWARDHUB_CONFIG", raising=False)
    with pytest.raises(ShimConfigError, match="REWARDHUB_CONFIG"):
        openrlhf.executor(str(EXAMPLE))
