"""verl's custom reward function: ``compute_score`` (one sample) and ``compute_score_batch`` (lists).

In a verl config::

    custom_reward_function:
      path: /path/to/examples/verl_reward.py     # or any file importing these
      name: compute_score                        # compute_score_batch with reward_model.reward_manager=batch
      reward_kwargs: {rewardhub_config: /path/to/rewards.yaml}

Each call returns a dict: ``score`` (the weighted total; ``abstain_value`` where every reward
abstained) plus one number per reward alias and ``abstained`` (1.0/0.0), which verl logs.
``ground_truth`` becomes the ``solution`` column (``label_column``), ``data_source`` a column of
its own, and the keys of ``extra_info`` further columns (``extra_info["prompt"]`` the prompt).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardhub import Batch, SetResult

from .shims import as_list, reward_set

LABEL_COLUMN = "solution"


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    rewardhub_config: Any = None,
    label_column: str = LABEL_COLUMN,
    abstain_value: float = 0.0,
    **kwargs: Any,
) -> dict[str, float]:
    """Score one response the way verl's naive reward manager calls it."""
    return compute_score_batch(
        [data_source], [solution_str], [ground_truth], [extra_info],
        rewardhub_config=rewardhub_config, label_column=label_column, abstain_value=abstain_value,
    )[0]


def compute_score_batch(
    data_sources: Any,
    solution_strs: Any,
    ground_truths: Any,
    extra_infos: Any = None,
    *,
    rewardhub_config: Any = None,
    label_column: str = LABEL_COLUMN,
    abstain_value: float = 0.0,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """Score parallel lists the way verl's batch reward manager calls it (one dict per response)."""
    rewards = reward_set(rewardhub_config)
    batch = to_batch(
        as_list(data_sources), as_list(solution_strs), as_list(ground_truths), as_list(extra_infos), label_column
    )
    return to_results(rewards.evaluate_batch(batch), abstain_value)


def to_batch(
    data_sources: list[Any], solutions: list[str], ground_truths: list[Any], extra_infos: list[Any] | None,
    label_column: str = LABEL_COLUMN,
) -> Batch:
    n = len(solutions)
    infos = [dict(info) if isinstance(info, Mapping) else {} for info in (extra_infos or [None] * n)]
    prompts = [info.pop("prompt", None) for info in infos]
    columns: dict[str, list[Any]] = {}
    for key in dict.fromkeys(k for info in infos for k in info):
        columns[key] = [info.get(key) for info in infos]
    columns["data_source"] = list(data_sources)
    columns[label_column] = list(ground_truths)
    return Batch(prompts, list(solutions), columns)


def to_results(scored: SetResult, abstain_value: float = 0.0) -> list[dict[str, float]]:
    results = []
    for i, total in enumerate(scored.totals):
        result = {}
        for alias, component in scored.components.items():
            value = component.scores[i].value
            result[alias] = abstain_value if value is None else value
        result["abstained"] = 1.0 if total is None else 0.0
        result["score"] = abstain_value if total is None else total  # last: an alias never hides it
        results.append(result)
    return results
