"""Read an endpoint's chat completion defensively: every type checked, every number finite and in range.

The endpoint's answer is input from outside (a proxy, a misconfigured server, a hostile one): a
shape it should not have is :class:`MalformedResponse`, which the client turns into a judge error
(the row abstains), never an exception of the reward's own (``OverflowError`` from
``prompt_tokens: 1e999``, a ``TypeError`` from a list where text belongs) and never a score.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "LOGPROB_SLACK",
    "MAX_TOKENS",
    "MalformedResponse",
    "TokenLogprobs",
    "logprob",
    "read_completion",
    "read_logprobs",
    "stored_logprobs",
    "token_count",
]

MAX_TOKENS = 10**12  # no request uses more: a larger count is not a count
LOGPROB_SLACK = 1e-4  # a log-probability is <= 0; servers round a certain token's to a hair above


class MalformedResponse(ValueError):
    """The endpoint's answer is not a chat completion of the expected shape; the message says what."""


TokenLogprobs = list[tuple[str, list[tuple[str, float]]]]


def read_completion(data: Any) -> tuple[str | None, Any, tuple[int, int]]:
    """The first choice's text (``None`` when it has none), the choice itself (for ``finish_reason`` and
    logprobs) and the (prompt, completion) token usage; raises :class:`MalformedResponse`."""
    if not isinstance(data, dict):
        raise MalformedResponse(f"the answer is a JSON {_kind(data)}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse("'choices' is not a list of objects")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedResponse("'choices[0].message' is not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponse(f"'choices[0].message.content' is a JSON {_kind(content)}, not text")
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise MalformedResponse("'usage' is not an object")
    return content, choice, (token_count(usage, "prompt_tokens"), token_count(usage, "completion_tokens"))


def token_count(usage: dict[str, Any], name: str) -> int:
    """``usage[name]`` as a whole number of tokens (0 when absent); raises :class:`MalformedResponse`."""
    value = usage.get(name)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise MalformedResponse(f"'usage.{name}' is not a count of tokens")
    return value


def read_logprobs(choice: dict[str, Any]) -> TokenLogprobs | None:
    """Each token with its top alternatives' log-probabilities from a choice's ``logprobs``; ``None``
    when absent or of another shape (the answer's text is then read alone)."""
    section = choice.get("logprobs")
    if section is None:
        return None
    try:
        tokens = section.get("content") if isinstance(section, dict) else None
        if not tokens:
            return None
        return [(_text(t["token"]), [(_text(a["token"]), logprob(a["logprob"])) for a in t.get("top_logprobs") or []])
                for t in tokens]  # fmt: skip
    except (MalformedResponse, KeyError, TypeError, AttributeError):
        return None


def stored_logprobs(stored: Any) -> TokenLogprobs | None:
    """Logprobs as an answer's ``to_json`` stored them (a cache entry), checked like an endpoint's."""
    if stored is None:
        return None
    try:
        return [(_text(token), [(_text(alt), logprob(lp)) for alt, lp in alts]) for token, alts in stored]
    except (MalformedResponse, TypeError, ValueError):
        raise MalformedResponse("stored logprobs are not (token, [(alternative, log-probability)]) pairs") from None


def logprob(value: Any) -> float:
    """``value`` as a log-probability: a finite number <= 0; raises :class:`MalformedResponse`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedResponse("a log-probability is not a number")
    if isinstance(value, int) and value.bit_length() > 64:  # float() of it would overflow
        raise MalformedResponse("a log-probability is out of range")
    value = float(value)
    if not math.isfinite(value) or value > LOGPROB_SLACK:
        raise MalformedResponse("a log-probability is not a finite number <= 0")
    return min(value, 0.0)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise MalformedResponse("a token is not text")
    return value


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")
