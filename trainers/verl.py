"""verl's custom reward function: ``compute_score`` (sync) and ``compute_score_async``, one response per call.

Checked against verl 0.9.1. ``main_ppo`` reads ``config.reward.custom_reward_function`` (verl/trainer/
ppo/reward.py, ``get_custom_reward_fn``): it imports ``path``, takes ``name`` and binds
``reward_kwargs`` with ``functools.partial``. The reward-loop managers (``naive``, ``dapo``, ...) call it
once per response with ``data_source``, ``solution_str``, ``ground_truth`` and ``extra_info`` as
keywords: awaited when it is a coroutine function, else in the event loop's default thread pool::

    reward:
      custom_reward_function:
        path: /path/to/examples/verl_reward.py
        name: compute_score_async
        reward_kwargs: {rewardhub_config: /path/to/rewards.yaml}   # a new key: '+reward...' on the command line

Each call returns a dict of finite numbers (verl casts every value with ``float()``; DAPO's dynamic
sampling, ``algorithm.filter_groups``, tests each group's ``std == 0``): ``score`` (the weighted total;
``abstain_value`` where every reward abstained), ``abstained`` (1.0/0.0), and per reward alias its own
unweighted value (``abstain_value`` where it abstained), ``<alias>/abstained`` and ``<alias>/verdict``
(1.0 where the reward's verdict passed: filter on the raw outcome, not on a shaped total). Where whole prompt
groups are scored (group assembly), ``flat_group`` and ``<alias>/signal`` too, within ``flat_tolerance``
(default 1e-6): see :func:`to_results`. ``ground_truth`` becomes the ``solution`` column
(``label_column``), ``data_source`` a column of its own, and the keys of ``extra_info`` further
columns (``extra_info["prompt"]`` the prompt).

With ``gdpo: true`` in ``reward_kwargs`` an abstaining alias is its prompt group's floor instead, for
verl's GDPO estimator (``algorithm.adv_estimator=gdpo``; :func:`gdpo_overrides` gives the overrides and
docs/composition.md explains the fill). ``samples_per_step`` counts the trainer's step for scheduled
weights; the hacking monitor watches in this process unless ``monitor: false``.

Group rewards need the completions of a prompt together. verl spreads a batch's responses over
``reward.num_workers`` processes at random, so pass ``rewardhub_url`` (a ``rewardhub serve`` every
worker reaches) to meet there; in one process (``reward.num_workers=1``) the async function assembles
groups itself. Responses are grouped by ``data_source`` plus the ``extra_info`` keys in ``group_by``
(default ``("split", "index")``, which verl's data preprocessing scripts write).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from rewardhub import Batch, RewardSet, SetResult, group_key

from .errors import ShimConfigError
from .groups import DEFAULT_GROUP_TIMEOUT
from .shims import as_list, call_scorer, reward_set

__all__ = [
    "FLAT_TOLERANCE",
    "GROUP_BY",
    "LABEL_COLUMN",
    "check_gdpo",
    "compute_score",
    "compute_score_async",
    "gdpo_overrides",
    "group_keys",
    "to_batch",
    "to_results",
    "with_group_stats",
]

LABEL_COLUMN = "solution"
GROUP_BY = ("split", "index")
# A group whose rewards vary by no more than this is flat: no signal for dynamic sampling to keep.
FLAT_TOLERANCE = 1e-6


def compute_score(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, *,
    rewardhub_config: Any = None, label_column: str = LABEL_COLUMN, abstain_value: float = 0.0,
    group_size: int | None = None, group_timeout: float = DEFAULT_GROUP_TIMEOUT, group_by: Sequence[str] = GROUP_BY,
    gdpo: bool = False, samples_per_step: int | None = None, monitor: bool = True,
    flat_tolerance: float = FLAT_TOLERANCE, **kwargs: Any,
) -> dict[str, float]:
    """Score one response, blocking the calling thread (and, with group rewards, until its group is in)."""
    scorer = _scorer(rewardhub_config, group_size, group_timeout, gdpo, samples_per_step, monitor)
    batch = to_batch([data_source], [solution_str], [ground_truth], [extra_info], label_column)
    keys = group_keys(batch, group_by) if scorer.assembler is not None else None
    return to_results(scorer.score(batch, keys), abstain_value, gdpo=gdpo, flat_tolerance=flat_tolerance)[0]


async def compute_score_async(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, *,
    rewardhub_config: Any = None, rewardhub_url: str | None = None, label_column: str = LABEL_COLUMN,
    abstain_value: float = 0.0, group_size: int | None = None, group_timeout: float = DEFAULT_GROUP_TIMEOUT,
    group_by: Sequence[str] = GROUP_BY, gdpo: bool = False, samples_per_step: int | None = None,
    monitor: bool = True, flat_tolerance: float = FLAT_TOLERANCE, **kwargs: Any,
) -> dict[str, float]:
    """Score one response without holding a thread while its group fills; with ``rewardhub_url`` the
    reward server scores it (and assembles groups across verl's reward workers)."""
    batch = to_batch([data_source], [solution_str], [ground_truth], [extra_info], label_column)
    if rewardhub_url is not None:
        from .client import score_remote

        try:  # the server decides whether it assembles groups; without a key it refuses to, with the reason
            keys: list[str] | None = group_keys(batch, group_by)
        except ShimConfigError:
            keys = None
        return to_results(await score_remote(rewardhub_url, batch, keys), abstain_value, gdpo=gdpo,
                          flat_tolerance=flat_tolerance)[0]
    scorer = _scorer(rewardhub_config, group_size, group_timeout, gdpo, samples_per_step, monitor)
    keys = group_keys(batch, group_by) if scorer.assembler is not None else None
    return to_results(await scorer.ascore(batch, keys), abstain_value, gdpo=gdpo, flat_tolerance=flat_tolerance)[0]


def _scorer(config: Any, group_size: int | None, group_timeout: float, gdpo: bool, samples_per_step: int | None,
            monitor: bool):
    scorer = call_scorer(config, group_size=group_size, group_timeout=group_timeout,
                         samples_per_step=samples_per_step, monitor=monitor)
    if gdpo:
        check_gdpo(scorer.rewards, assembled=scorer.assembler is not None)
    return scorer


def check_gdpo(rewards: RewardSet, *, assembled: bool) -> None:
    """GDPO mode's preconditions, as a :class:`ShimConfigError` saying what to change."""
    scheduled = [e.alias for e in rewards.entries if e.schedule is not None]
    if scheduled:
        raise ShimConfigError(
            f"gdpo: verl's GDPO weights its components with the fixed algorithm.gdpo_reward_weights and normalises "
            f"each one, which would undo a schedule; give {', '.join(map(repr, scheduled))} a fixed weight, or "
            f"leave gdpo off (rewardhub then applies the schedule to 'score')")
    if not assembled:
        raise ShimConfigError(
            "gdpo: an abstaining component is filled with its prompt group's floor, so the group must be assembled: "
            "set reward_kwargs.group_size to actor_rollout_ref.rollout.n (or score through rewardhub_url with a "
            "server started with --group-size)")


def gdpo_overrides(config: Any) -> list[str]:
    """The verl command-line overrides that train on ``config``'s rewards with verl's GDPO estimator.

    ``gdpo_reward_keys`` are the paid aliases (weight-0 audit entries stay out of the advantage) and
    ``gdpo_reward_weights`` their weights, in config order.
    """
    rewards = config if isinstance(config, RewardSet) else reward_set(config)
    paid = [e for e in rewards.entries if e.schedule is not None or e.weight != 0]
    keys = ",".join(e.alias for e in paid)
    weights = ",".join(f"{e.weight:g}" for e in paid)
    # verl 0.9.1's ppo_trainer.yaml has no gdpo_* keys (only its AlgoConfig dataclass does): hence the '+'
    return ["algorithm.adv_estimator=gdpo", f"+algorithm.gdpo_reward_keys=[{keys}]",
            f"+algorithm.gdpo_reward_weights=[{weights}]", "+reward.custom_reward_function.reward_kwargs.gdpo=true"]


def to_batch(
    data_sources: list[Any], solutions: list[str], ground_truths: list[Any], extra_infos: list[Any] | None,
    label_column: str = LABEL_COLUMN,
) -> Batch:
    """The rewardhub batch for verl's per-response arguments (lists, one entry per response)."""
    n = len(solutions)
    infos = [dict(info) if isinstance(info, Mapping) else {} for info in (as_list(extra_infos) or [None] * n)]
    prompts = [info.pop("prompt", None) for info in infos]
    columns: dict[str, list[Any]] = {}
    for key in dict.fromkeys(k for info in infos for k in info):
        columns[key] = [info.get(key) for info in infos]
    columns["data_source"] = list(data_sources)
    columns[label_column] = list(ground_truths)
    return Batch(prompts, list(solutions), columns)


def group_keys(batch: Batch, group_by: Sequence[str] = GROUP_BY) -> list[str]:
    """Each response's group: its data source and its ``extra_info`` values under ``group_by``, or else
    its prompt (``extra_info["prompt"]``)."""
    if any(key in batch.columns for key in group_by):
        columns = ["data_source", *group_by]
        values = [batch.columns.get(c, [None] * len(batch)) for c in columns]
        return [str(group_key("\x1f".join(repr(column[i]) for column in values), None, i)) for i in range(len(batch))]
    if all(prompt is not None for prompt in batch.prompts):
        return [str(group_key(None, prompt, i)) for i, prompt in enumerate(batch.prompts)]
    raise ShimConfigError(
        f"group rewards need to know which responses share a prompt, but extra_info has neither 'prompt' nor "
        f"any of {list(group_by)} (it has {sorted(k for k in batch.columns if k != 'data_source')}): write an "
        f"index into extra_info when preparing the data, or set reward_kwargs.group_by to keys it has"
    )


def to_results(scored: SetResult, abstain_value: float = 0.0, *, gdpo: bool = False,
               flat_tolerance: float | None = None) -> list[dict[str, float]]:
    """One verl result dict per response, every value a finite number (verl casts each with ``float()``).

    Per reward alias: ``<alias>`` its own value, unweighted (where it abstained: ``abstain_value``, or with
    ``gdpo`` its prompt group's floor, the lowest value scored in the group and at most 0.0, so that abstaining
    never earns a better advantage than the group's worst scored row), ``<alias>/abstained`` (1.0/0.0) and
    ``<alias>/verdict`` (1.0 where the reward's own verdict passed: a correct answer, however the total is
    shaped). Then ``abstained`` (every reward abstained) and ``score``. With ``flat_tolerance`` and whole prompt
    groups scored (``group_ranges``), the dynamic-sampling signals: ``flat_group`` (1.0 when no reward varies
    by more than the tolerance within the group) and ``<alias>/signal``, the value with a flat group's members
    all set to the group's lowest, so that verl's exact ``std == 0`` test drops exactly the groups without signal.
    """
    if gdpo and scored.group_floors is None:
        raise ShimConfigError("gdpo needs the scored prompt groups (group assembly) to fill abstentions")
    signals = flat_tolerance is not None and scored.group_ranges is not None
    results = []
    for i, total in enumerate(scored.totals):
        result: dict[str, float] = {}
        flat = True
        for alias, component in scored.components.items():
            score = component.scores[i]
            if score.value is not None:
                value = score.value
            elif gdpo:
                floor = scored.group_floors[alias][i]
                value = 0.0 if floor is None else floor
            else:
                value = abstain_value
            result[alias] = value
            result[f"{alias}/abstained"] = 1.0 if score.value is None else 0.0
            result[f"{alias}/verdict"] = 1.0 if score.verdict else 0.0
            if signals:
                span = scored.group_ranges[alias][i]
                still = span is None or span[1] - span[0] <= flat_tolerance
                flat = flat and still
                low = abstain_value if span is None else span[0]
                result[f"{alias}/signal"] = low if still or score.value is None else score.value
        if signals:
            result["flat_group"] = 1.0 if flat else 0.0
        result["abstained"] = 1.0 if total is None else 0.0
        result["score"] = abstain_value if total is None else total  # last: an alias never hides it
        results.append(result)
    return results


def with_group_stats(rewards: RewardSet, scored: SetResult, batch: Batch, keys: Sequence[Hashable]) -> SetResult:
    """``scored`` (``batch`` scored by ``rewards`` elsewhere: Ray actors) with each reward's group floors and
    ranges over the rows sharing a key, where it has none (whole groups scored together: the keys are the groups)."""
    if scored.group_floors is not None and scored.group_ranges is not None:
        return scored
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return rewards.combine(scored.components, batch, step=scored.step, groups=list(groups.values()))
