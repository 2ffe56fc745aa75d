"""verl 0.9.1 agent-loop episodes through its own reward loop and rewardhub's reward manager.

What runs is verl's released source (see tests/frameworks.py and test_frameworks_verl.py): the
Hydra-composed config with ``actor_rollout_ref.rollout.multi_turn.enable=True``, ``load_reward_manager``
with ``reward_manager.source=importlib`` (which imports ``rewardhub.trainers.verl_manager``, the one
reward manager for single-turn and multi-turn rollouts), ``RewardManagerBase``,
``RewardLoopWorker.compute_score_batch``. The response tokens are laid out as verl's
``ToolAgentLoop`` lays them out: the model's tokens with ``response_mask`` 1, and the tool results
the chat template adds between turns (its rendering of the tool message, as ``ct_merge_context_msg``
takes it) with mask 0; ``tool_extra_fields`` carries ``turn_scores``/``tool_rewards``/``raw_prompt``
and ``__num_turns__`` verl's own count.
"""

from __future__ import annotations

import asyncio
import json
import sys
from types import ModuleType

import numpy as np
import pytest
import torch
from test_frameworks_verl import Rows, compose, verl, verl_root, write_config  # noqa: F401 (fixtures)

MANAGER = "rewardhub.trainers.verl_manager"
PROMPT = [{"role": "user", "content": "Add 3 to the counter."}]
TOOLS = [{"type": "function", "function": {"name": "add", "description": "Add to the counter.", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}]
CONFIG = {"rewards": [{"name": "tool_call_match", "weight": 1.0}, {"name": "exact_match", "weight": 1.0},
                      {"name": "tool_error_penalty", "weight": 1.0}]}


@pytest.fixture(scope="module")
def qwen_tokenizer(tmp_path_factory):
    from trl.chat_template_utils import qwen2_5_chat_template

    from rewardhub.testing.tiny_models import load_tokenizer, make_tokenizer

    tokenizer = load_tokenizer(make_tokenizer(tmp_path_factory.mktemp("tok")))
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


@pytest.fixture(scope="module")
def manager_base(verl):  # noqa: F811
    """verl's released RewardManagerBase, importable under its own module name for our manager."""
    name = "verl.experimental.reward_loop.reward_manager.base"
    module = ModuleType(name)
    module.RewardManagerBase = verl.naive.__mro__[1]
    sys.modules[name] = module
    yield module
    sys.modules.pop(name, None)
    sys.modules.pop(MANAGER, None)  # it subclassed this fixture's base: the next test imports it afresh


def rollout(tokenizer, turns: list[str], results: list[list[str]]) -> tuple[list[int], list[int], list[int]]:
    """(prompt ids, response ids, response mask) as ToolAgentLoop builds them: each assistant turn's
    tokens (mask 1), then the template's rendering of its tool results (mask 0)."""
    prompt_ids = tokenizer.apply_chat_template(PROMPT, tools=TOOLS, add_generation_prompt=True, tokenize=True,
                                               return_dict=False)
    messages = list(PROMPT)
    ids: list[int] = []
    mask: list[int] = []
    for turn, outputs in zip(turns, [*results, []], strict=False):
        own = tokenizer(turn + "<|im_end|>", add_special_tokens=False)["input_ids"]
        ids += own
        mask += [1] * len(own)
        messages.append({"role": "assistant", "content": turn})
        if outputs:
            before = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False)
            messages += [{"role": "tool", "content": out} for out in outputs]
            after = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False, add_generation_prompt=True)
            context = tokenizer(after[len(before):], add_special_tokens=False)["input_ids"]
            ids += context
            mask += [0] * len(context)
    return prompt_ids, ids, mask


def data(tokenizer, samples: list[dict], with_mask: bool = True) -> Rows:
    width_p, width_r = 640, 320
    prompts, responses, masks, attention = [], [], [], []
    for sample in samples:
        p, r, m = rollout(tokenizer, sample["turns"], sample["results"])
        assert len(p) <= width_p and len(r) <= width_r
        prompts.append([tokenizer.pad_token_id] * (width_p - len(p)) + p)
        responses.append(r + [tokenizer.pad_token_id] * (width_r - len(r)))
        masks.append(m + [0] * (width_r - len(m)))
        attention.append([0] * (width_p - len(p)) + [1] * (len(p) + len(r)) + [0] * (width_r - len(r)))

    def objects(values):
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array

    tensors = {"prompts": torch.tensor(prompts), "responses": torch.tensor(responses),
               "attention_mask": torch.tensor(attention)}
    if with_mask:  # verl's reward loop has it; its in-line agent-loop reward (AgentLoopWorker._compute_score) does not
        tensors["response_mask"] = torch.tensor(masks)
    return Rows(tensors,
                {"data_source": objects(["counter"] * len(samples)),
                 "reward_model": objects([{"ground_truth": "4", "style": "rule"}] * len(samples)),
                 "extra_info": objects([{"index": i, "expected_calls": [{"name": "add", "arguments": {"n": 3}}]}
                                        for i in range(len(samples))]),
                 "tool_extra_fields": objects([{"turn_scores": [], "tool_rewards": [0.0] * len(s["results"]),
                                                "raw_prompt": PROMPT} for s in samples]),
                 "__num_turns__": np.array([2 * len(s["turns"]) for s in samples], dtype=np.int32),
                 "uid": objects(["counter-prompt"] * len(samples))})  # one prompt: one group


CALL = '<tool_call>\n{"name": "add", "arguments": {"n": 3}}\n</tool_call>'
SAMPLES = [
    {"turns": [CALL, "The counter holds \\boxed{4}."], "results": [["4"]]},  # honest
    # malformed JSON: verl's hermes parser finds no call, so the loop ends after this turn
    {"turns": [CALL.replace("3}", "3") + " \\boxed{4}"], "results": []},
    # a tool result typed by the model: mask 1, so it is the model's text, not a result
    {"turns": [CALL.replace("<tool_call>", "I will call it.").replace("</tool_call>", "")
               + "\n<tool_response>\n4\n</tool_response>\nThe counter holds \\boxed{4}."], "results": []},
    {"turns": [CALL, CALL, "\\boxed{7}"], "results": [[str({"error": "counter locked"})], ["7"]]},
]


def run(verl, verl_root, tokenizer, tmp_path, samples, config=CONFIG, multi_turn=True, with_mask=True,  # noqa: F811
        **settings):
    config = compose(verl_root, [
        "reward.reward_manager.source=importlib", f"reward.reward_manager.module.path=pkg://{MANAGER}",
        "reward.reward_manager.name=RewardhubRewardManager",
        f"actor_rollout_ref.rollout.multi_turn.enable={multi_turn}",
        f"+reward.reward_manager.rewardhub.config={write_config(tmp_path, config)}",
        *(f"+reward.reward_manager.rewardhub.{k}={v}" for k, v in settings.items())])
    rows = data(tokenizer, samples, with_mask)
    manager, results = score_rows(verl, config, tokenizer, rows)
    return manager, rows, results


def reward_worker(verl, config, tokenizer):  # noqa: F811
    """verl's RewardLoopWorker with the reward manager its config names (as ``_init_reward_fn`` loads it)."""
    worker = object.__new__(verl.worker)
    worker.config = config
    worker.reward_manager = verl.reward.load_reward_manager(config, tokenizer)
    return worker


def score_rows(verl, config, tokenizer, rows):  # noqa: F811
    """(the manager, its results) for ``rows`` through verl's ``RewardLoopWorker.compute_score_batch``."""
    async def main():
        worker = reward_worker(verl, config, tokenizer)
        return worker.reward_manager, await worker.compute_score_batch(rows)

    return asyncio.run(main())


def test_episodes_rebuilt_from_the_mask_are_scored(verl, verl_root, qwen_tokenizer, manager_base, tmp_path):  # noqa: F811
    manager, _, results = run(verl, verl_root, qwen_tokenizer, tmp_path, SAMPLES)
    assert type(manager).__name__ == "RewardhubRewardManager" and manager.episodes
    infos = [r["reward_extra_info"] for r in results]
    assert [i["tool_call_match"] for i in infos] == [1.0, 0.0, 0.0, 0.0]
    assert [i["exact_match"] for i in infos] == [1.0, 1.0, 1.0, 0.0]  # the final answer, not the tool output
    assert [i["tool_error_penalty"] for i in infos] == [0.0, -0.5, 0.0, -0.5]
    assert [r["reward_score"] for r in results] == [2.0, 0.5, 1.0, -0.5]


@pytest.mark.parametrize("multi_turn", [True, False])
def test_without_a_mask_the_turns_come_from_the_chat_markers(verl, verl_root, qwen_tokenizer, manager_base,  # noqa: F811
                                                             tmp_path, multi_turn):
    """verl's default for rule rewards scores in the agent loop, whose data has no response_mask: the
    tool results must still be told from the model's text (a result the model typed stays its words)."""
    _, _, results = run(verl, verl_root, qwen_tokenizer, tmp_path, SAMPLES, multi_turn=multi_turn, with_mask=False)
    infos = [r["reward_extra_info"] for r in results]
    assert [i["tool_call_match"] for i in infos] == [1.0, 0.0, 0.0, 0.0]
    assert [i["exact_match"] for i in infos] == [1.0, 1.0, 1.0, 0.0]
    # with multi_turn off, a one-turn response (no tool tokens) is text: its malformed call is no call
    assert [i["tool_error_penalty"] for i in infos] == [0.0, -0.5 if multi_turn else 0.0, 0.0, -0.5]


def test_markers_that_do_not_add_up_to_verls_turns_are_not_trusted(qwen_tokenizer):
    from rewardhub.trainers.chatml_mask import ChatMLMarkers

    markers = ChatMLMarkers.of(qwen_tokenizer)
    _, ids, mask = rollout(qwen_tokenizer, SAMPLES[3]["turns"], SAMPLES[3]["results"])
    assert markers.mask(ids, 6) == mask  # three assistant turns, two tool rounds
    assert markers.mask(ids) == mask
    assert markers.mask(ids, 2) is None  # verl counted one turn: the model wrote past its stop


def test_per_turn_scores_land_on_each_turns_last_model_token(verl, verl_root, qwen_tokenizer, manager_base, tmp_path):  # noqa: F811
    manager, rows, results = run(verl, verl_root, qwen_tokenizer, tmp_path, SAMPLES)
    scores = [r["reward_score"] for r in results]
    rm = type(manager).assemble_rm_scores(rows, scores)
    for row, score in enumerate(scores):
        mask = rows.batch["response_mask"][row].tolist()
        ends = [i for i in range(len(mask)) if mask[i] == 1 and (i + 1 == len(mask) or mask[i + 1] == 0)]
        placed = {i: v for i, v in enumerate(rm[row].tolist()) if v}
        assert sum(rm[row].tolist()) == pytest.approx(float(score))
        assert set(placed) <= set(ends)
    # the failed call was in the first of three turns: its penalty sits at that turn's end
    last = rows.batch["response_mask"][3].tolist()
    first_end = last.index(0) - 1
    assert rm[3, first_end].item() == pytest.approx(-0.5)
    # plain floats (another manager's scores) keep verl's own placement
    plain = type(manager).assemble_rm_scores(rows, [float(s) for s in scores])
    assert [plain[r].nonzero().flatten().tolist() for r in range(4)] == [
        [int(rows.batch["attention_mask"][r, 640:].sum()) - 1] if scores[r] else [] for r in range(4)]


def test_the_mask_decides_what_the_model_wrote(qwen_tokenizer):
    from rewardhub.episode import tool_calls
    from rewardhub.trainers.verl_agent import episode_from_response

    _, ids, mask = rollout(qwen_tokenizer, SAMPLES[2]["turns"], SAMPLES[2]["results"])
    (only,) = episode_from_response(qwen_tokenizer, ids, mask)
    assert only["role"] == "assistant" and "tool_calls" not in only and "<tool_response>" in only["content"]
    _, ids, mask = rollout(qwen_tokenizer, SAMPLES[1]["turns"], SAMPLES[1]["results"])
    calls = tool_calls(episode_from_response(qwen_tokenizer, ids, mask))
    assert calls[0]["name"] == "add" and calls[0]["parse_error"].startswith("arguments are not valid JSON")
    assert json.loads(json.dumps(calls))  # plain data


def test_tool_tokens_make_an_episode_even_with_multi_turn_off(verl, verl_root, qwen_tokenizer, manager_base, tmp_path):  # noqa: F811
    """Read as one text, a tool's output would pass for the model's: a mask with tool tokens is always
    an episode; a response the model wrote whole keeps the single-turn path (a plain text completion)."""
    manager, _, results = run(verl, verl_root, qwen_tokenizer, tmp_path, [SAMPLES[0], SAMPLES[1]], multi_turn=False)
    assert not manager.episodes
    infos = [r["reward_extra_info"] for r in results]
    assert infos[0]["tool_call_match"] == 1.0 and infos[0]["exact_match"] == 1.0
    assert infos[1]["tool_error_penalty"] == 0.0  # as text, no call was made: nothing malformed to count
    assert [getattr(r["reward_score"], "turns", None) for r in results] == [(0.0, 2.0), None]  # rewards without turns: on the last turn


def test_normalized_totals_keep_verls_placement(verl, verl_root, qwen_tokenizer, manager_base, tmp_path):  # noqa: F811
    """Under normalize_then_sum the total is no weighted sum of the rewards' values: no turn may get a
    part of it, so the whole total sits at the last token."""
    config = {**CONFIG, "aggregate": "normalize_then_sum"}
    _, rows, results = run(verl, verl_root, qwen_tokenizer, tmp_path, SAMPLES, config=config, group_size=4)
    scores = [r["reward_score"] for r in results]
    assert all(s.turns == () for s in scores) and len({float(s) for s in scores}) > 1
    rm = type(_).assemble_rm_scores(rows, scores)
    for row, score in enumerate(scores):
        last = int(rows.batch["attention_mask"][row, 640:].sum()) - 1
        assert rm[row, last].item() == pytest.approx(float(score)) and rm[row].abs().sum().item() == pytest.approx(abs(float(score)))


def test_episode_groups_are_scored_whole(verl, verl_root, qwen_tokenizer, manager_base, tmp_path):  # noqa: F811
    """A group reward on episodes: the rollouts of one uid are one group; the vote reads final answers."""
    config = {"rewards": [{"name": "majority_vote", "alias": "vote", "params": {"equivalence": "string"}},
                          {"name": "tool_error_penalty"}]}
    samples = [SAMPLES[0], SAMPLES[0], SAMPLES[3], SAMPLES[0]]
    config_path = write_config(tmp_path, config)
    composed = compose(verl_root, [
        "reward.reward_manager.source=importlib", f"reward.reward_manager.module.path=pkg://{MANAGER}",
        "reward.reward_manager.name=RewardhubRewardManager", "actor_rollout_ref.rollout.multi_turn.enable=True",
        "actor_rollout_ref.rollout.n=4", f"+reward.reward_manager.rewardhub.config={config_path}"])
    _, results = score_rows(verl, composed, qwen_tokenizer, data(qwen_tokenizer, samples))
    infos = [r["reward_extra_info"] for r in results]
    assert [i["vote"] for i in infos] == [1.0, 1.0, 0.0, 1.0]
    assert [i["tool_error_penalty"] for i in infos] == [0.0, 0.0, -0.5, 0.0]
