"""A tiny model that really makes tool calls: overfitted on one conversation in Qwen2.5's tool format.

For tests of agent training loops (TRL's ``tools=`` / ``environment_factory=``): the 2-layer model of
:mod:`rewardhub.testing.tiny_models`, given TRL's Qwen2.5 chat template (so TRL recognises its tool
format and parses the calls itself), is trained for a few seconds on one conversation until it
repeats it: the tool call after the prompt, the final message after the tool's result.

    path = make_tool_caller(tmp_path / "agent", conversation, tools=[add])
    GRPOTrainer(model=str(path), tools=..., environment_factory=..., ...)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .tiny_models import load_tokenizer, make_tokenizer, qwen2_config

__all__ = ["make_tool_caller"]


def make_tool_caller(path: str | Path, conversation: Sequence[dict[str, Any]], tools: Sequence[Callable | dict],
                     *, steps: int = 120, seed: int = 0) -> Path:
    """Train a tiny ``Qwen2ForCausalLM`` to continue ``conversation``'s user turn with its assistant turns.

    ``conversation``: a user message, then assistant messages (with ``tool_calls``) and tool results.
    The loss covers everything after the prompt, so the model learns its calls and its final answer;
    tool results are in the loss too (harmless: at run time they come from the tools). Returns the
    folder (model and tokenizer), ready for ``from_pretrained``.
    """
    import torch
    from transformers import Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    path = Path(path)
    make_tokenizer(path)
    tokenizer = load_tokenizer(path)
    tokenizer.chat_template = qwen2_5_chat_template
    first_reply = next(i for i, m in enumerate(conversation) if m["role"] == "assistant")
    prompt_ids = tokenizer.apply_chat_template(list(conversation[:first_reply]), tools=list(tools), tokenize=True,
                                               add_generation_prompt=True, return_dict=False)
    ids = tokenizer.apply_chat_template(list(conversation), tools=list(tools), tokenize=True, return_dict=False)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(qwen2_config(tokenizer, max_position_embeddings=2 * len(ids) + 256))
    inputs = torch.tensor([ids])
    labels = inputs.clone()
    labels[0, : len(prompt_ids)] = -100
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=inputs, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
