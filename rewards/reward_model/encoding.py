"""Render (prompt, completion) pairs into token ids as ``RewardTrainer`` trained on them, and score them in batches."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub.completions import is_conversational

from .loading import LoadedModel

__all__ = ["Encoded", "Encoder", "pad_right", "score_sequences", "sigmoid"]


@dataclass(frozen=True)
class Encoded:
    """One scored sequence: its token ids (already truncated) and what truncation dropped."""

    ids: list[int]
    total: int
    dropped_prompt: int = 0
    dropped_completion: int = 0

    def truncation_note(self) -> str:
        if self.total == len(self.ids):
            return ""
        return (
            f"; truncated to the last {len(self.ids)} of {self.total} tokens, keeping the end of the completion "
            f"(dropped {self.dropped_prompt} prompt and {self.dropped_completion} completion tokens)"
        )


def _messages(prompt: Any, completion: Any, text: str) -> list[dict]:
    """The conversation to score: prompt messages (a plain prompt becomes a user turn) plus the completion."""
    if is_conversational(prompt):
        head = [dict(m) for m in prompt]
    elif prompt:
        head = [{"role": "user", "content": str(prompt)}]
    else:
        head = []
    if is_conversational(completion):
        return head + [dict(m) for m in completion]
    return head + [{"role": "assistant", "content": text}]


class Encoder:
    """Turns (prompt, completion) pairs into token ids the way ``RewardTrainer`` trained on them."""

    def __init__(self, tokenizer: Any, max_length: int, chat_template: bool | None, append_eos: bool):
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.chat_template = chat_template
        self.append_eos = append_eos

    def wants_chat(self, prompt: Any, completion: Any) -> bool:
        if self.chat_template is not None:
            return self.chat_template
        return is_conversational(prompt) or is_conversational(completion)

    def encode(self, prompt: Any, completion: Any, text: str) -> Encoded:
        """Token ids of one pair; raises ``ValueError`` with the per-row reason when it cannot be rendered."""
        if self.wants_chat(prompt, completion):
            ids, prompt_ids = self._chat_ids(prompt, completion, text)
        else:
            ids, prompt_ids = self._plain_ids(prompt, text)
        if not ids:
            raise ValueError("nothing to score: prompt and completion are empty")
        if len(ids) <= self.max_length:
            return Encoded(ids, len(ids))
        dropped = len(ids) - self.max_length
        prompt_len = _common_prefix(prompt_ids(), ids)
        return Encoded(ids[dropped:], len(ids), min(dropped, prompt_len), max(0, dropped - prompt_len))

    def _plain_ids(self, prompt: Any, text: str) -> tuple[list[int], Any]:
        if prompt is not None and not isinstance(prompt, str):
            hint = " (conversational rows need chat_template null or true)" if is_conversational(prompt) else ""
            raise ValueError(f"prompt is a {type(prompt).__name__}, not text{hint}")
        prefix = prompt or ""
        full = prefix + text
        eos = self.tokenizer.eos_token
        if self.append_eos and eos and not full.endswith(eos):
            full += eos
        ids = self.tokenizer(full)["input_ids"]
        return ids, lambda: self.tokenizer(prefix)["input_ids"] if prefix else []

    def _chat_ids(self, prompt: Any, completion: Any, text: str) -> tuple[list[int], Any]:
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("conversational row but the reward model's tokenizer has no chat template")
        if prompt is not None and not isinstance(prompt, str) and not is_conversational(prompt):
            raise ValueError(f"prompt is a {type(prompt).__name__}, neither text nor chat messages")
        messages = _messages(prompt, completion, text)
        ids = self._template(messages)
        head = messages[:-1] if not is_conversational(completion) else messages[: len(messages) - len(completion)]
        return ids, lambda: self._template(head, add_generation_prompt=True) if head else []

    def _template(self, messages: list[dict], add_generation_prompt: bool = False) -> list[int]:
        rendered = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=add_generation_prompt
        )
        return self.tokenizer(rendered, add_special_tokens=False)["input_ids"]


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large negative ``x``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def score_sequences(loaded: LoadedModel, sequences: Sequence[Sequence[int]], batch_size: int) -> list[float]:
    """Scalar scores of token sequences, run longest-first in length-sorted batches, in input order.

    Sorting puts sequences of similar length together, so padding wastes little compute; right padding
    with an attention mask keeps every row's score independent of its batch mates.
    """
    import torch

    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]), reverse=True)
    scores = [0.0] * len(sequences)
    pad_id = loaded.tokenizer.pad_token_id
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            input_ids, attention_mask = pad_right([sequences[i] for i in chunk], pad_id, loaded.device)
            logits = loaded.model(input_ids=input_ids, attention_mask=attention_mask).logits
            for i, value in zip(chunk, logits[:, 0].float().cpu().tolist(), strict=True):
                scores[i] = value
    return scores


def pad_right(sequences: Sequence[Sequence[int]], pad_id: int, device: str) -> tuple[Any, Any]:
    """Right-padded ``input_ids`` and ``attention_mask`` tensors for a list of token id lists."""
    import torch

    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, ids in enumerate(sequences):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention_mask[row, : len(ids)] = 1
    return input_ids.to(device), attention_mask.to(device)
