"""OpenRLHF's reward protocol: parallel ``query``/``prompts``/``labels`` lists in, ``rewards`` out.

OpenRLHF sends ``{"query": [...], "prompts": [...], "labels": [...]}`` (``query`` = prompt +
response text) to a remote reward URL, or calls ``reward_func(queries, prompts, labels, **kw)``
from a Python file; both expect ``{"rewards": [...], "scores": [...], "extra_logs": {...}}``.
``rewards`` drive the advantage, ``scores`` (in [0, 1]) drive dynamic filtering, ``extra_logs``
are per-sample values OpenRLHF averages into its logs.

OpenRLHF decodes sequences with their special tokens, so a query may start with left padding and
end with EOS/padding: those (``strip_tokens``) are removed before the prompt prefix is cut off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewardhub import Batch, SetResult

from .errors import BadRequest
from .shims import as_list, reward_set

LABEL_COLUMN = "solution"
# Padding and end-of-sequence markers of common chat models, stripped from the ends of a query.
STRIP_TOKENS = ("<pad>", "<|endoftext|>", "<|im_end|>", "</s>", "<|eot_id|>", "<|end_of_text|>", "<|end|>")


def to_batch(
    query: Any, prompts: Any = None, labels: Any = None, label_column: str = LABEL_COLUMN,
    strip_tokens: Sequence[str] = STRIP_TOKENS,
) -> Batch:
    """The rewardhub batch for an OpenRLHF request; the response is ``query`` minus its ``prompt`` prefix
    (the whole query when it does not start with the prompt), without ``strip_tokens`` at either end.

    Raises :class:`BadRequest` naming the field at fault when lists are missing, not lists of
    strings, or of different lengths.
    """
    queries = _strings("query", query)
    n = len(queries)
    prompt_list = _strings("prompts", prompts, n) if prompts is not None else [""] * n
    columns = {}
    if labels is not None:
        if not isinstance(labels, list):
            raise BadRequest(f"'labels' must be a list with one entry per query, got {type(labels).__name__}")
        _same_length("labels", labels, n)
        columns[label_column] = list(labels)
    responses = [_response(q, p, strip_tokens) for q, p in zip(queries, prompt_list, strict=True)]
    return Batch(prompt_list, responses, columns)


def _response(query: str, prompt: str, strip_tokens: Sequence[str]) -> str:
    query, prompt = _strip(query, strip_tokens, at_end=False), _strip(prompt, strip_tokens, at_end=False)
    response = query[len(prompt):] if prompt and query.startswith(prompt) else query
    return _strip(response, strip_tokens, at_end=True)


def _strip(text: str, tokens: Sequence[str], *, at_end: bool) -> str:
    """Remove any of ``tokens`` repeatedly from the start (or end) of ``text``."""
    found = True
    while found:
        found = next((t for t in tokens if t and (text.endswith(t) if at_end else text.startswith(t))), None)
        if found:
            text = text[:-len(found)] if at_end else text[len(found):]
    return text


def _strings(field: str, value: Any, n: int | None = None) -> list[str]:
    if not isinstance(value, list):
        raise BadRequest(f"{field!r} must be a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise BadRequest(f"{field!r}[{i}] must be a string, got {type(item).__name__}")
    if n is not None:
        _same_length(field, value, n)
    return value


def _same_length(field: str, value: list, n: int) -> None:
    if len(value) != n:
        raise BadRequest(f"{field!r} has {len(value)} items but 'query' has {n}: the lists must be parallel")


def to_response(scored: SetResult, weights: Sequence[float], abstain_value: float = 0.0) -> dict[str, Any]:
    """OpenRLHF's answer: numeric ``rewards`` (``abstain_value`` where every reward abstained),
    ``scores`` = weighted mean clipped to [0, 1] (exactly the weighted mean when each reward is in
    [0, 1]), and ``extra_logs`` with each component and an ``abstained`` indicator per sample."""
    total_weight = sum(weights)
    rewards = [abstain_value if t is None else t for t in scored.totals]
    scale = total_weight if total_weight > 0 else 1.0
    scores = [min(max(r / scale, 0.0), 1.0) for r in rewards]
    extra_logs: dict[str, list[float]] = {
        alias: [abstain_value if v is None else v for v in values]
        for alias, values in scored.component_values().items()
    }
    extra_logs["abstained"] = [1.0 if t is None else 0.0 for t in scored.totals]
    return {"rewards": rewards, "scores": scores, "extra_logs": extra_logs}


def reward_func(queries: Any, prompts: Any = None, labels: Any = None, **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's ``reward_func`` with the config in ``$REWARDHUB_CONFIG``; import it into a reward file.

    A plain function on purpose: OpenRLHF wraps it with ``ray.remote``, which takes only functions
    and classes (a callable object such as a :class:`RewardFunc` instance is refused).
    """
    return RewardFunc()(queries, prompts, labels, **kwargs)


class RewardFunc:
    """A callable with OpenRLHF's ``reward_func(queries, prompts, labels, **kwargs) -> dict`` signature.

    The reward set is loaded on first call (from ``config`` or ``$REWARDHUB_CONFIG``), in the
    worker process that imported the reward file. OpenRLHF needs a function, so wrap an instance
    in one: ``def reward_func(queries, prompts, labels, **kw): return scorer(queries, prompts, labels, **kw)``.
    """

    def __init__(self, config: Any = None, *, label_column: str = LABEL_COLUMN, abstain_value: float = 0.0,
                 strip_tokens: Sequence[str] = STRIP_TOKENS):
        self.config = config
        self.label_column = label_column
        self.abstain_value = abstain_value
        self.strip_tokens = tuple(strip_tokens)

    def __call__(self, queries: Any, prompts: Any = None, labels: Any = None, **kwargs: Any) -> dict[str, Any]:
        rewards = reward_set(self.config)
        batch = to_batch(as_list(queries), as_list(prompts), as_list(labels), self.label_column, self.strip_tokens)
        response = to_response(rewards.evaluate_batch(batch), rewards.reward_weights, self.abstain_value)
        return _as_tensors(response)


def _as_tensors(response: dict[str, Any]) -> dict[str, Any]:
    """The Python-file form returns tensors, as OpenRLHF's own example reward does."""
    import torch

    return {
        "rewards": torch.tensor(response["rewards"], dtype=torch.float32),
        "scores": torch.tensor(response["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in response["extra_logs"].items()},
    }
