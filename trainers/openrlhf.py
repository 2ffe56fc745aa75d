"""OpenRLHF's reward protocol: parallel ``query``/``prompts``/``labels`` lists in, ``rewards`` out.

Checked against OpenRLHF 0.11.2. Its rollout (``SingleTurnAgentExecutor`` in openrlhf/utils/agent.py)
scores each sample as soon as it is generated, one query per call: it POSTs
``{"query": [...], "prompts": [...], "labels": [...]}`` (``query`` = prompt + response, decoded with
special tokens) to ``--reward.remote_url``, or, when that is a ``.py`` file, imports the file with
importlib and runs its ``reward_func(queries, prompts, labels)`` in a thread. Both expect
``{"rewards": [...], "scores": [...], "extra_logs": {...}}``: ``rewards`` drive the advantage,
``scores`` (in [0, 1]) drive dynamic filtering, ``extra_logs`` are per-sample values OpenRLHF
averages with a plain mean into its logs.

OpenRLHF decodes sequences with their special tokens, so a query may start with left padding and
end with EOS/padding: those (``strip_tokens``) are removed before the prompt prefix is cut off.
An empty label is OpenRLHF's "no label" (``--data.label_key`` not given): it becomes ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rewardhub import Batch, SetResult

from .errors import BadRequest
from .groups import DEFAULT_GROUP_TIMEOUT
from .shims import as_list, call_scorer

__all__ = ["LABEL_COLUMN", "RewardFunc", "STRIP_TOKENS", "to_batch", "to_response"]

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
        columns[label_column] = [None if label == "" else label for label in labels]
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


def to_response(scored: SetResult, abstain_value: float = 0.0) -> dict[str, Any]:
    """OpenRLHF's answer: numeric ``rewards`` (``abstain_value`` where every reward abstained),
    ``scores`` = each row's total over the sum of the set's weights at that row's step (a scheduled
    weight counts at its value then, not TRL's fixed 1.0), clipped to [0, 1] (exactly the weighted mean
    when each reward is in [0, 1]; an abstaining component counts as 0, never more than a failure), and
    ``extra_logs``: each component, NaN where it abstained (OpenRLHF's plain mean then shows NaN rather
    than a figure diluted by zeros), ``<alias>/abstained`` (1.0/0.0, its mean is the abstention rate) and
    ``abstained`` where every reward abstained."""
    rewards = [abstain_value if t is None else t for t in scored.totals]
    scores = []
    for i, reward in enumerate(rewards):
        total_weight = math.fsum(scored.weights_of(i).values())
        scores.append(min(max(reward / (total_weight if total_weight > 0 else 1.0), 0.0), 1.0))
    extra_logs: dict[str, list[float]] = {}
    for alias, values in scored.component_values().items():
        extra_logs[alias] = [math.nan if v is None else v for v in values]
        extra_logs[f"{alias}/abstained"] = [1.0 if v is None else 0.0 for v in values]
    extra_logs["abstained"] = [1.0 if t is None else 0.0 for t in scored.totals]
    return {"rewards": rewards, "scores": scores, "extra_logs": extra_logs}


class RewardFunc:
    """OpenRLHF's ``reward_func(queries, prompts, labels, **kwargs) -> dict`` backed by a rewardhub config.

    The config (``config`` or ``$REWARDHUB_CONFIG``) is loaded when the object is made, so a reward file
    doing ``reward_func = RewardFunc()`` fails on import when the config is missing or broken: OpenRLHF
    would otherwise log each failed call at INFO level and train on ``None`` rewards. With group rewards
    (``majority_vote``, ``length_penalty`` mode group) calls of one prompt are assembled into groups of
    ``group_size`` in this process (see :mod:`rewardhub.trainers.groups`); OpenRLHF runs one reward
    file per vLLM engine, and an engine generates all samples of a prompt, so groups meet there.
    ``samples_per_step`` (rollout_batch_size * n_samples_per_prompt) counts the trainer's step for
    scheduled weights; ``monitor`` watches for reward hacking in this process (alarms are warnings).
    """

    def __init__(self, config: Any = None, *, label_column: str = LABEL_COLUMN, abstain_value: float = 0.0,
                 strip_tokens: Sequence[str] = STRIP_TOKENS, group_size: int | None = None,
                 group_timeout: float = DEFAULT_GROUP_TIMEOUT, samples_per_step: int | None = None,
                 monitor: bool = True):
        self.scorer = call_scorer(config, group_size=group_size, group_timeout=group_timeout,
                                  samples_per_step=samples_per_step, monitor=monitor)
        self.label_column = label_column
        self.abstain_value = abstain_value
        self.strip_tokens = tuple(strip_tokens)

    def __call__(self, queries: Any, prompts: Any = None, labels: Any = None, **kwargs: Any) -> dict[str, Any]:
        batch = to_batch(as_list(queries), as_list(prompts), as_list(labels), self.label_column, self.strip_tokens)
        if self.scorer.assembler is not None and prompts is None:
            raise BadRequest("group rewards need the prompts to group queries by: pass 'prompts'")
        scored = self.scorer.score(batch)
        return _as_tensors(to_response(scored, self.abstain_value))


def _as_tensors(response: dict[str, Any]) -> dict[str, Any]:
    """The Python-file form returns tensors, as OpenRLHF's own example reward does."""
    import torch

    return {
        "rewards": torch.tensor(response["rewards"], dtype=torch.float32),
        "scores": torch.tensor(response["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in response["extra_logs"].items()},
    }
