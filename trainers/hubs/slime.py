"""slime's custom reward function (``--custom-rm-path``) backed by a rewardhub config.

slime (github THUDM/slime, ``slime/rollout/rm_hub/__init__.py``) loads ``--custom-rm-path`` with
``load_function`` (a dotted path) and awaits it: ``fn(args, sample)`` for each response, or, with
``--group-rm``, ``fn(args, samples)`` for a prompt's whole group. A sample carries ``prompt`` (text or chat
messages), ``response``, ``label``, ``metadata``, ``group_index`` and ``index``::

    REWARDHUB_CONFIG=rewards.yaml python train.py ... --custom-rm-path rewardhub.trainers.hubs.slime.reward
    REWARDHUB_CONFIG=rewards.yaml python train.py ... --group-rm --custom-rm-path rewardhub.trainers.hubs.slime.group_reward

The row: ``prompt``, ``response`` as the completion, ``label`` as the ``solution`` column, the ``metadata``
keys as further columns. ``reward`` and ``group_reward`` return the weighted total (``abstain_value``, 0.0,
where every reward abstained). ``reward_details`` / ``group_reward_details`` return a dict of numbers, the
total in ``score`` and each reward's value, ``<alias>/abstained`` and ``<alias>/verdict``: pass
``--reward-key score`` with them. Group rewards (``majority_vote``, ``pass_at_k`` entries) need the group:
``--group-rm`` hands it whole; without it, the responses of a ``group_index`` are assembled in this process
(``group_size``: ``args.n_samples_per_prompt``). The config is ``args.rewardhub_config`` when slime's args
carry one, else ``$REWARDHUB_CONFIG``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from rewardhub import Batch, SetResult, evaluate_by_group, needs_groups

from ..shims import call_scorer, reward_set
from ..verl import to_results

__all__ = ["group_reward", "group_reward_details", "reward", "reward_details", "sample_row"]

LABEL_COLUMN = "solution"


def sample_row(sample: Any) -> dict[str, Any]:
    """The rewardhub row for a slime ``Sample``."""
    metadata = getattr(sample, "metadata", None)
    columns = dict(metadata) if isinstance(metadata, dict) else {}
    return {**columns, "prompt": sample.prompt, "completion": sample.response, LABEL_COLUMN: sample.label}


async def reward(args: Any, sample: Any, **kwargs: Any) -> float:
    """``--custom-rm-path rewardhub.trainers.hubs.slime.reward``: one response's weighted total."""
    return (await _score_one(args, sample))["score"]


async def reward_details(args: Any, sample: Any, **kwargs: Any) -> dict[str, float]:
    """As :func:`reward`, the total in ``score`` beside each reward's numbers (use ``--reward-key score``)."""
    return await _score_one(args, sample)


async def group_reward(args: Any, samples: Sequence[Any], **kwargs: Any) -> list[float]:
    """``--group-rm --custom-rm-path rewardhub.trainers.hubs.slime.group_reward``: a whole group's totals."""
    return [result["score"] for result in await _score_group(args, samples)]


async def group_reward_details(args: Any, samples: Sequence[Any], **kwargs: Any) -> list[dict[str, float]]:
    """As :func:`group_reward`, with each reward's numbers (use ``--reward-key score``)."""
    return await _score_group(args, samples)


async def _score_one(args: Any, sample: Any) -> dict[str, float]:
    config = getattr(args, "rewardhub_config", None)
    rewards = reward_set(config)
    grouped = any(needs_groups(member.reward) for member in rewards.members)
    size = getattr(args, "n_samples_per_prompt", None) if grouped else None
    scorer = call_scorer(config, group_size=size)
    batch = Batch.from_rows([sample_row(sample)])
    keys = [_group_key(sample)] if scorer.assembler is not None else None
    return to_results(await scorer.ascore(batch, keys), _abstain_value(args))[0]


async def _score_group(args: Any, samples: Sequence[Any]) -> list[dict[str, float]]:
    rewards = reward_set(getattr(args, "rewardhub_config", None))
    batch = Batch.from_rows([sample_row(sample) for sample in samples])
    keys = [_group_key(sample) for sample in samples]
    # off slime's event loop, which keeps generating meanwhile
    scored: SetResult = await asyncio.get_running_loop().run_in_executor(None, evaluate_by_group, rewards, batch, keys)
    return to_results(scored, _abstain_value(args))


def _group_key(sample: Any) -> str:
    group = getattr(sample, "group_index", None)
    return f"group {group}" if group is not None else repr(sample.prompt)


def _abstain_value(args: Any) -> float:
    return float(getattr(args, "rewardhub_abstain_value", 0.0) or 0.0)
