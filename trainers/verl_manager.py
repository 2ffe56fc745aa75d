"""A verl reward manager scoring whole batches with a rewardhub config (checked against verl 0.9.1).

verl loads it through its own ``importlib`` path (``resolve_reward_manager_cls`` in
verl/trainer/ppo/reward.py); the settings sit under ``reward.reward_manager.rewardhub``::

    reward.reward_manager.source=importlib
    reward.reward_manager.name=RewardhubRewardManager
    reward.reward_manager.module.path=pkg://rewardhub.trainers.verl_manager
    +reward.reward_manager.rewardhub.config=/path/to/rewards.yaml
    +reward.reward_manager.rewardhub.actors=4          # optional: score on 4 Ray actors

verl's reward loop calls ``run_single`` once per response, all of a worker's share of the batch at
once (``RewardLoopWorker.compute_score_batch``). This manager collects the calls that arrive together
and scores them as one rewardhub batch, so every reward sees the whole batch: a group reward scores
each group the batch holds completely right away, with no waiting. Responses whose group is not all
there (verl's streaming reward loop sends them one at a time, to random workers) are assembled: in
this process, or at a ``rewardhub serve`` / ``rewardhub route`` every worker reaches (``url``).

Each response's answer is verl's ``{"reward_score", "reward_extra_info"}``: the weighted total, and
in ``reward_extra_info`` finite numbers only (see :func:`rewardhub.trainers.verl.to_results`): every
component by alias, ``<alias>/abstained``, ``<alias>/verdict``, ``abstained``, and with ``group_size`` the
dynamic-sampling signals ``flat_group`` and ``<alias>/signal`` (``flat_tolerance``, default 1e-6).

Multi-turn rollouts (verl's agent loop with tools) are scored as episodes: the response is rebuilt
from its ``response_mask`` into assistant turns and tool results (:mod:`.verl_agent`), so rewards get
the trajectory view (``tool_calls``, ``final_text``, ...), and a reward's per-turn parts
(``Score.turns``) land at each turn's last model token (``assemble_rm_scores``). That is every
response when ``actor_rollout_ref.rollout.multi_turn.enable`` (or the ``episodes`` setting) is on, and
any response whose mask holds tool tokens whatever the setting (read as one text, a tool's output
would pass for the model's). verl's in-line agent-loop reward (its default without a reward model)
sends no mask: it is recovered from the ChatML turn markers (:mod:`.chatml_mask`).
With ``actors``, the scoring runs on a pool of Ray actors holding the reward set (CPU-heavy rewards:
sandboxed code, sympy, reward models) instead of in the reward worker.

Settings (``reward.reward_manager.rewardhub.*``): ``config`` (required), ``url``, ``group_size``
(default: ``actor_rollout_ref.rollout.n`` when the set has group rewards), ``group_timeout``,
``group_by`` (``extra_info`` keys naming a prompt when verl's ``uid`` is absent), ``label_column``,
``abstain_value``, ``actors``, ``actor_cpus``, ``episodes`` (default: ``actor_rollout_ref.rollout.multi_turn.enable``),
``flat_tolerance``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from rewardhub import Batch, ConfigError, RewardSet, SetResult, evaluate_by_group, needs_groups

from .chatml_mask import ChatMLMarkers
from .groups import DEFAULT_GROUP_TIMEOUT, CallScorer, group_size_for
from .verl import FLAT_TOLERANCE, GROUP_BY, LABEL_COLUMN, group_keys, to_batch, to_results, with_group_stats
from .verl_agent import episode_batch, place_turns, turn_total

__all__ = ["RewardhubRewardManager", "SETTINGS", "settings_of"]

SETTINGS = ("config", "url", "group_size", "group_timeout", "group_by", "label_column", "abstain_value", "actors",
            "actor_cpus", "episodes", "flat_tolerance")


def settings_of(config: Any) -> dict[str, Any]:
    """``reward.reward_manager.rewardhub`` as a plain dict, checked (a typo is an error naming the keys)."""
    section = config.reward.reward_manager.get("rewardhub")
    if section is None:
        raise ConfigError("RewardhubRewardManager needs its settings: +reward.reward_manager.rewardhub.config=PATH")
    try:
        from omegaconf import OmegaConf

        settings = OmegaConf.to_container(section, resolve=True) if OmegaConf.is_config(section) else dict(section)
    except ImportError:
        settings = dict(section)
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise ConfigError(f"unknown reward.reward_manager.rewardhub key(s) {unknown}; known: {list(SETTINGS)}")
    if not settings.get("config"):
        raise ConfigError("reward.reward_manager.rewardhub.config is required: the rewardhub config to score with")
    return settings


class RewardhubRewardManager(RewardManagerBase):
    """verl's reward manager backed by a rewardhub config; see the module docstring."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, reward_router_address: Any = None,
                 reward_model_tokenizer: Any = None, **kwargs: Any):
        super().__init__(config, tokenizer, compute_score)
        settings = settings_of(config)
        self.url = settings.get("url")
        self.label_column = settings.get("label_column", LABEL_COLUMN)
        self.abstain_value = float(settings.get("abstain_value", 0.0))
        self.flat_tolerance = float(settings.get("flat_tolerance", FLAT_TOLERANCE))
        self.group_by = tuple(settings.get("group_by", GROUP_BY))
        import rewardhub

        self.rewards: RewardSet = rewardhub.load(settings["config"])
        requested = settings.get("group_size")
        if requested is None and any(needs_groups(m.reward) for m in self.rewards.members):
            requested = int(config.actor_rollout_ref.rollout.n)
        self.group_size = group_size_for(self.rewards, requested)
        timeout = float(settings.get("group_timeout", DEFAULT_GROUP_TIMEOUT))
        self.assembling = CallScorer(self.rewards, group_size=self.group_size, group_timeout=timeout) \
            if self.group_size and not self.url else None
        self.actors = None
        if settings.get("actors"):
            from rewardhub.ray import RewardActors

            self.actors = RewardActors(settings["config"], int(settings["actors"]),
                                       num_cpus=float(settings.get("actor_cpus", 1)))
        multi_turn = config.get("actor_rollout_ref", {}).get("rollout", {}).get("multi_turn", {}).get("enable")
        self.episodes = bool(settings.get("episodes", multi_turn or False))
        self.markers = ChatMLMarkers.of(tokenizer)  # where verl sends no response_mask (its in-line reward)
        # an episode's parts by turn are weighted as its total was; remote and actor results carry no weights
        self.fixed_weights = None if self.rewards.config.scheduled else self.rewards.weights_at()
        self._pending: list[tuple[Batch, str, int | None, asyncio.Future]] = []

    async def run_single(self, data: Any) -> dict:
        item = data[-1:][0]  # as verl's own managers do: the last sequence of a multi-sequence output
        batch, turns = await asyncio.get_running_loop().run_in_executor(None, self._row, item)
        uid = item.non_tensor_batch.get("uid")
        key = str(uid) if uid is not None else group_keys(batch, self.group_by)[0] if self.group_size else ""
        future = asyncio.get_running_loop().create_future()
        if not self._pending:  # the first of the calls verl issued together: score them all on the next turn
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append((batch, key, turns, future))
        return await future

    @classmethod
    def assemble_rm_scores(cls, data: Any, scores: list[float]) -> Any:
        """verl's placement (each score at the last response token), then an episode's parts by turn
        moved to each turn's last model token."""
        return place_turns(data, scores, super().assemble_rm_scores(data, scores))

    def _row(self, item: Any) -> tuple[Batch, int | None]:
        """A response's one-row batch: its episode rebuilt from the mask (and its number of assistant
        turns), or its text (and ``None``)."""
        response_ids = item.batch["responses"]
        length = int(item.batch["attention_mask"][-response_ids.shape[-1]:].sum())
        extra = item.non_tensor_batch
        info = extra.get("extra_info")
        info = dict(info) if isinstance(info, dict) else {}
        ground_truth = (extra.get("reward_model") or {}).get("ground_truth")
        ids = response_ids[:length].tolist()
        if "response_mask" in item.batch.keys():
            mask = item.batch["response_mask"][:length].tolist()
        else:  # verl's in-line agent-loop reward gives no mask: the turn markers show it
            mask = self.markers.mask(ids, extra.get("__num_turns__")) if self.markers else None
        if self.episodes or (mask is not None and 0 in mask):
            batch = episode_batch(self.tokenizer, ids, mask or [1] * length,
                                  extra.get("data_source"), ground_truth, info, extra.get("tool_extra_fields"),
                                  extra.get("__num_turns__"), self.label_column)
            return batch, batch.trajectory("num_turns")[0]
        text = self.tokenizer.decode(response_ids[:length], skip_special_tokens=True)
        return to_batch([extra.get("data_source")], [text], [ground_truth], [info], self.label_column), None

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        asyncio.ensure_future(self._answer(pending))

    async def _answer(self, pending: list[tuple[Batch, str, int | None, asyncio.Future]]) -> None:
        try:
            keys = [key for _, key, _, _ in pending]
            counts = Counter(keys)
            whole = [i for i, key in enumerate(keys) if not self.group_size or counts[key] >= self.group_size]
            taken = set(whole)
            parts = [i for i in range(len(keys)) if i not in taken]
            jobs = []
            batch = _joined([row for row, _, _, _ in pending])
            if whole:
                jobs.append((whole, self._score_whole(batch.subset(whole), [keys[i] for i in whole])))
            if parts:
                jobs.append((parts, self._score_parts(batch.subset(parts), [keys[i] for i in parts])))
            for indices, scored in zip([j[0] for j in jobs], await asyncio.gather(*(j[1] for j in jobs)), strict=True):
                # the dynamic-sampling signals need whole groups: only where groups are assembled
                tolerance = self.flat_tolerance if self.group_size else None
                results = to_results(scored, self.abstain_value, flat_tolerance=tolerance)
                for j, (i, result) in enumerate(zip(indices, results, strict=True)):
                    score = result.pop("score")
                    turns = pending[i][2]
                    if turns is not None:
                        score = turn_total(scored, j, score, turns, self.fixed_weights)
                    pending[i][3].set_result({"reward_score": score, "reward_extra_info": result})
        except BaseException as exc:  # every waiting call learns of it: none hangs
            for _, _, _, future in pending:
                if not future.done():
                    future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise

    async def _score_whole(self, batch: Batch, keys: list[str]) -> SetResult:
        """Rows whose groups are all here (or a set without group rewards): scored now, as one batch
        (group rewards one group at a time: verl's rows carry no prompt to tell groups apart)."""
        if self.actors is not None:
            return with_group_stats(self.rewards, await self.actors.ascore(batch, keys), batch, keys)
        return await asyncio.get_running_loop().run_in_executor(None, evaluate_by_group, self.rewards, batch, keys)

    async def _score_parts(self, batch: Batch, keys: list[str]) -> SetResult:
        """Rows of groups not all here: they meet the rest of their group at the server, or in this process."""
        if self.url is not None:
            from .client import score_remote

            return await score_remote(self.url, batch, keys)
        return await self.assembling.ascore(batch, keys)


def _joined(batches: list[Batch]) -> Batch:
    """One batch of the one-row batches ``to_batch`` made (their columns may differ: missing is None)."""
    names = list(dict.fromkeys(name for b in batches for name in b.columns))
    return Batch([b.prompts[0] for b in batches], [b.completions[0] for b in batches],
                 {name: [b.columns.get(name, [None])[0] for b in batches] for name in names})
