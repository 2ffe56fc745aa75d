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
from dataclasses import dataclass
from typing import Any

__all__ = ["ASSISTANT_HEADER", "ChatMLMarkers", "TURN_END"]

TURN_END = "<|im_end|>"
ASSISTANT_HEADER = "<|im_start|>assistant\n"


@dataclass(frozen=True)
class ChatMLMarkers:
    """A tokenizer's ids for the end of a turn and for the header that starts the model's next turn."""

    turn_end: int
    assistant_header: tuple[int, ...]

    @classmethod
    def of(cls, tokenizer: Any) -> ChatMLMarkers | None:
        """The tokenizer's markers, ``None`` when its vocabulary has no ChatML special tokens."""
        end, start = _token_id(tokenizer, TURN_END), _token_id(tokenizer, "<|im_start|>")
        header = tuple(tokenizer(ASSISTANT_HEADER, add_special_tokens=False)["input_ids"])
        if end is None or start is None or not header or header[0] != start:
            return None
        return cls(end, header)

    def mask(self, ids: Sequence[int], verl_num_turns: Any = None) -> list[int] | None:
        """1 for the model's tokens, 0 for the loop's context; ``None`` when the model turns found are
        not the ones verl counted (``verl_num_turns // 2``: verl counts the prompt, each assistant turn
        and each tool round)."""
        ids = [int(t) for t in ids]
        mask: list[int] = []
        model, turns, i, width = True, 1, 0, len(self.assistant_header)
        while i < len(ids):
            if model:
                mask.append(1)
                model = ids[i] != self.turn_end
                i += 1
            elif tuple(ids[i:i + width]) == self.assistant_header:
                mask += [0] * width
                model, turns, i = True, turns + 1, i + width
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
