"""The response mask of a ChatML rollout, recovered from its turn markers where the trainer gave none.

verl 0.9.1 scores an agent loop's rollout in-line by default (``enable_agent_reward_loop``: no reward
model, or one with its own resource pool): ``AgentLoopWorker._compute_score`` hands the reward
manager prompts and responses but no ``response_mask``. In a ChatML rollout (Qwen's template, the
``hermes`` tool format) the model's turn ends at the stop token ``<|im_end|>``, which ends
generation, and the loop's context (tool results) runs from there to the next
``<|im_start|>assistant`` header. The model cannot write past its own stop token, so a tool result
it types stays inside its turn. The mask is trusted only when it has as many model turns as verl
counted (``__num_turns__``): a rollout whose stop token did not stop generation is not split.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

TURN_END = "<|im_end|>"
ASSISTANT_HEADER = "<|im_start|>assistant\n"


def chatml_mask(tokenizer: Any, ids: Sequence[int], verl_num_turns: Any = None) -> list[int] | None:
    """1 for the model's tokens, 0 for the loop's context; ``None`` when the tokenizer has no ChatML
    markers, or the model turns found are not the ones verl counted (``verl_num_turns // 2``: verl
    counts the prompt, each assistant turn and each tool round)."""
    end = _token_id(tokenizer, TURN_END)
    header = tokenizer(ASSISTANT_HEADER, add_special_tokens=False)["input_ids"]
    if end is None or not header or _token_id(tokenizer, "<|im_start|>") != header[0]:
        return None
    ids = [int(t) for t in ids]
    mask: list[int] = []
    model, turns, i = True, 1, 0
    while i < len(ids):
        if model:
            mask.append(1)
            model = ids[i] != end
            i += 1
        elif ids[i:i + len(header)] == header:
            mask += [0] * len(header)
            model, turns, i = True, turns + 1, i + len(header)
        else:
            mask.append(0)
            i += 1
    if verl_num_turns is not None and int(verl_num_turns) // 2 != turns:
        return None
    return mask


def _token_id(tokenizer: Any, token: str) -> int | None:
    """The id of a special token, ``None`` where the vocabulary has no such token."""
    found = tokenizer.convert_tokens_to_ids(token)
    if found is None or found == getattr(tokenizer, "unk_token_id", object()):
        return None
    return int(found)
