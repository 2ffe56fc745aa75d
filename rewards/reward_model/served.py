"""A reward model or PRM behind an inference server: the requests and answers of each server's API.

The rows are rendered into token ids here, by the in-process encoder (chat template, truncation that
keeps the end, EOS), and the ids are what is sent, so the server scores exactly the text the local
model would. ``api`` picks the server's request shape:

- ``vllm``: ``POST /classify`` with ``use_activation: false`` (the raw logit of a one-label classifier)
  and ``POST /pooling`` with ``task: token_classify`` (per-token logits of a PRM's token head);
- ``sglang``: ``POST /classify`` with ``input_ids`` (SGLang's reward-model route, ``--is-embedding``);
- ``openrlhf``: ``POST /get_reward`` of ``serve_rm`` with the rendered text (``query``); serve_rm
  tokenizes and truncates with its own settings and appends its EOS itself.

Sequences are sorted by length and sent ``batch_size`` at a time, concurrently within ``concurrency``,
through the judge's HTTP client (retries, backoff, per-request timeouts, the batch deadline). A request
that fails for good leaves its rows without a score and the reason, which abstain: an outage is never a 0.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from typing import Any

from rewardhub import ConfigError, background_loop

from ..deps import require

__all__ = ["APIS", "ServedModel", "Unscored"]

APIS = ("vllm", "sglang", "openrlhf")
_ROUTES = {"vllm": "/classify", "sglang": "/classify", "openrlhf": "/get_reward"}


class Unscored(str):
    """Why a sequence got no score from the server (the row abstains with it, outcome ``error`` or ``timeout``)."""

    timed_out = False


class _TimedOut(Unscored):
    timed_out = True


class ServedModel:
    """A model on an inference server: raw sequence scores and per-token logits for token id sequences."""

    def __init__(self, family: str, *, base_url: str, model: str, api: str, api_key_env: str, batch_size: int,
                 concurrency: int, timeout: float, max_retries: int, deadline: float | None):
        from rewardhub.rewards.judge.client import Connection, JudgeClient, Policy

        if api not in APIS:
            raise ConfigError(f"{family} api must be one of {', '.join(APIS)}; got {api!r}")
        require(family, "rm", "openai", "transformers")  # the HTTP client; the tokenizer that renders rows
        for param, value in (("concurrency", concurrency), ("timeout", timeout)):
            if not value > 0:
                raise ConfigError(f"{family} {param} must be positive; got {value}")
        if max_retries < 0 or (deadline is not None and not deadline > 0):
            raise ConfigError(f"{family} max_retries must not be negative and deadline must be positive or null; "
                              f"got {max_retries}, {deadline}")
        self.family, self.api, self.batch_size, self.deadline = family, api, batch_size, deadline
        self.connection = Connection(base_url, model, api_key_env)
        self.client = JudgeClient(self.connection, Policy(concurrency, timeout, max_retries, 0.5, 30.0),
                                  share_limits="process")

    def sequence_scores(self, sequences: Sequence[list[int]], texts: Sequence[str],
                        prompts: Sequence[str]) -> list[float | Unscored]:
        """The raw score of each sequence (``texts``/``prompts``: the same rows as text, for serve_rm)."""
        return _run(self._gather(len(sequences), [len(s) for s in sequences],
                                          lambda chunk: self._sequence_request(chunk, sequences, texts, prompts),
                                          _read_scores))

    def token_logits(self, sequences: Sequence[list[int]]) -> list[list[list[float]] | Unscored]:
        """Each sequence's per-token logits from the server's token head (``/pooling``, ``token_classify``)."""
        if self.api != "vllm":
            raise ConfigError(f"{self.family} on a server needs api 'vllm' (its /pooling token_classify route); "
                              f"{self.api!r} serves sequence scores only")
        lengths = [len(s) for s in sequences]
        body = {"model": self.connection.model, "task": "token_classify", "use_activation": False}
        return _run(self._gather(len(sequences), lengths,
                                          lambda chunk: ("/pooling", {**body, "input": [sequences[i] for i in chunk]}),
                                          lambda data, chunk: _read_token_logits(data, [lengths[i] for i in chunk])))

    def _sequence_request(self, chunk: list[int], sequences: Sequence[list[int]], texts: Sequence[str],
                          prompts: Sequence[str]) -> tuple[str, dict[str, Any]]:
        model = self.connection.model
        if self.api == "vllm":
            return "/classify", {"model": model, "input": [sequences[i] for i in chunk], "use_activation": False}
        if self.api == "sglang":
            return "/classify", {"model": model, "input_ids": [sequences[i] for i in chunk]}
        return "/get_reward", {"query": [texts[i] for i in chunk], "prompts": [prompts[i] for i in chunk]}

    async def _gather(self, n: int, lengths: list[int], request: Any, read: Any) -> list[Any]:
        """Send the sequences longest first, ``batch_size`` per request, all requests at once (the client's
        semaphore keeps ``concurrency``); each request's values, or its failure for each of its rows."""
        from rewardhub.rewards.judge.client import JudgeStats
        from rewardhub.rewards.judge.errors import JudgeRequestError

        order = sorted(range(n), key=lambda i: lengths[i], reverse=True)
        chunks = [order[start : start + self.batch_size] for start in range(0, n, self.batch_size)]
        deadline = time.monotonic() + (self.deadline or float("inf"))
        stats = JudgeStats()
        root = self.connection.root_url()

        async def one(chunk: list[int]) -> list[Any]:
            path, body = request(chunk)
            try:
                return await self.client.post(root + path, body, stats, deadline,
                                              lambda data, key: (read(data, chunk), (0, 0)))
            except JudgeRequestError as exc:
                late = time.monotonic() >= deadline
                why = (_TimedOut if late else Unscored)(f"{self.family} server unavailable: {exc}")
                return [why] * len(chunk)

        results: list[Any] = [None] * n
        for chunk, values in zip(chunks, await asyncio.gather(*(one(c) for c in chunks)), strict=True):
            for i, value in zip(chunk, values, strict=True):
                results[i] = value
        return results

    def close(self) -> None:
        self.client.close()


def _run(coro: Any) -> Any:
    """Run ``coro`` on rewardhub's background loop, where the endpoint's HTTP client lives, and wait."""
    return asyncio.run_coroutine_threadsafe(coro, background_loop()).result()


def _rows(data: Any, expected: int) -> list[Any]:
    """The per-input items of a pooling answer (``data`` sorted by ``index``, or a bare list), checked."""
    from rewardhub.rewards.judge.response import MalformedResponse

    items = data.get("data") if isinstance(data, dict) else data
    if not isinstance(items, list) or len(items) != expected or not all(isinstance(x, dict) for x in items):
        raise MalformedResponse(f"expected a list of {expected} results")
    if all(isinstance(x.get("index"), int) for x in items):
        items = sorted(items, key=lambda x: x["index"])
    return items


def _finite(value: Any) -> float:
    from rewardhub.rewards.judge.response import MalformedResponse

    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MalformedResponse(f"a score is not a finite number: {value!r:.40}")
    return float(value)


def _read_scores(data: Any, chunk: list[int]) -> list[float]:
    """One raw score per input from vLLM's ``/classify`` (``probs``), SGLang's (``embedding``) or serve_rm's
    ``rewards``; a classifier with more than one label is an error (a reward model has one)."""
    from rewardhub.rewards.judge.response import MalformedResponse

    if isinstance(data, dict) and "rewards" in data:
        rewards = data["rewards"]
        if not isinstance(rewards, list) or len(rewards) != len(chunk):
            raise MalformedResponse(f"'rewards' is not a list of {len(chunk)} numbers")
        return [_finite(r) for r in rewards]
    scores = []
    for item in _rows(data, len(chunk)):
        values = item.get("probs", item.get("embedding"))
        if not isinstance(values, list) or len(values) != 1:
            width = len(values) if isinstance(values, list) else "no"
            raise MalformedResponse(f"the served model gave {width} values per input; a reward model is a one-label "
                                    f"classifier (one raw logit)")
        scores.append(_finite(values[0]))
    return scores


def _read_token_logits(data: Any, lengths: list[int]) -> list[list[list[float]]]:
    """Per-token logits per input from vLLM's ``/pooling`` with ``task: token_classify``."""
    from rewardhub.rewards.judge.response import MalformedResponse

    out = []
    for item, length in zip(_rows(data, len(lengths)), lengths, strict=True):
        tokens = item.get("data")
        if not isinstance(tokens, list) or len(tokens) != length:
            raise MalformedResponse(f"expected {length} per-token results, got "
                                    f"{len(tokens) if isinstance(tokens, list) else 'none'}")
        rows = [[_finite(v) for v in (t if isinstance(t, list) else [t])] for t in tokens]
        out.append(rows)
    return out
