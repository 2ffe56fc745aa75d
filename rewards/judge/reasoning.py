"""A reasoning model's final answer, without its thinking: what a judge's answer is parsed from.

Reasoning models think before they answer. Served with a reasoning parser (vLLM, SGLang), the thinking
arrives in ``reasoning_content`` (or ``reasoning``) and ``content`` holds the answer alone; served
without one, ``content`` starts with ``<think>...</think>`` (or, when the chat template opened the tag
in the prompt, with thinking that a lone ``</think>`` closes). A tentative score in the thinking ("maybe
a 7... no") must never be read as the verdict, so the thinking is cut off here, before parsing, before
the cache and before the reason quotes the answer; the answer's token log-probabilities are cut at the
same place.
"""

from __future__ import annotations

import re

from .response import TokenLogprobs

__all__ = ["final_answer"]

_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)


def final_answer(content: str, logprobs: TokenLogprobs | None) -> tuple[str, TokenLogprobs | None, bool]:
    """``content`` without its leading thinking, the log-probabilities of that remainder (``None`` when the
    tokens do not break where the answer starts), and whether the thinking was never closed (the model
    ran out of tokens while thinking: there is no final answer).

    Thinking is a block that opens the answer (``<think>...</think>``), or text that a ``</think>`` closes
    with no ``<think>`` before it (the chat template opened the tag in the prompt). A tag further in, after
    answer text, is something the judge quotes, not its thinking."""
    opened = _OPEN.search(content)
    leading = opened is not None and not content[: opened.start()].strip()
    closing = _CLOSE.search(content, opened.end() if leading else 0)
    if closing is None:
        return ("", None, True) if leading else (content, logprobs, False)
    if opened is not None and not leading and opened.start() < closing.start():
        return content, logprobs, False
    final = content[closing.end():]
    start = closing.end() + len(final) - len(final.lstrip())
    return final.lstrip(), _tokens_from(logprobs, start), False


def _tokens_from(logprobs: TokenLogprobs | None, start: int) -> TokenLogprobs | None:
    """The tokens from character ``start`` on, or ``None`` when no token boundary falls there."""
    if logprobs is None:
        return None
    offset = 0
    for index, (token, _) in enumerate(logprobs):
        if offset == start:
            return list(logprobs[index:])
        offset += len(token)
    return [] if offset == start else None
