"""What a hand-written PPO loop needs from rewardhub: per-sequence scores as tensors, and per-token rewards.

    rewards = PPORewards("rewards.yaml", monitor=True)
    scores = rewards(prompts, responses, step=i, solution=solutions)   # .total (B,), .components, .reasons
    token_rewards, kl = kl_shaped_rewards(scores.total, logprobs, ref_logprobs, response_mask, kl_coef=0.05)

The sequence score lands on the last response token; every response token also carries the
per-token KL penalty ``-kl_coef * (logprob - ref_logprob)``, as in the classic RLHF PPO setup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rewardhub import Batch, RewardSet, load

__all__ = ["PPORewards", "SequenceScores", "kl_shaped_rewards", "last_token_index", "score_on_last_token"]

if TYPE_CHECKING:
    import torch


@dataclass
class SequenceScores:
    """Scores of a batch of responses as tensors of shape (B,).

    ``total``: the set's total (``abstain_value`` where every reward abstained); ``components``: each
    alias's values (NaN where it abstained); ``scored``: False where every reward abstained;
    ``metrics``: scheduled weights (``<alias>/weight``) and the hacking monitor's ``rewardhub/hacking/...``.
    """

    total: torch.Tensor
    components: dict[str, torch.Tensor]
    scored: torch.Tensor
    reasons: dict[str, list[str]]
    metrics: dict[str, float] = field(default_factory=dict)

    def means(self) -> dict[str, float]:
        """NaN-skipping batch means of the total and each component, and ``metrics`` (for logging)."""
        out = {"reward": float(self.total.mean())}
        for alias, values in self.components.items():
            out[f"rewards/{alias}"] = float(values.nanmean())
        out.update(self.metrics)
        return out


class PPORewards:
    """A reward set called as ``(prompts, responses, step=..., **columns) -> SequenceScores``.

    ``step`` (the loop's iteration) is where scheduled weights are read; ``monitor=True`` watches the
    set for reward hacking (one step per call) and puts its figures in ``SequenceScores.metrics``.
    """

    def __init__(self, config: Any, *, abstain_value: float = 0.0, device: Any = None, monitor: bool = False):
        self.rewards = config if isinstance(config, RewardSet) else load(config)
        self.abstain_value = abstain_value
        self.device = device
        self.monitor = None
        if monitor:
            from rewardhub.hacking import HackingMonitor

            self.monitor = HackingMonitor.for_set(self.rewards)

    def __call__(self, prompts: Sequence[Any], responses: Sequence[Any], *, step: int | None = None,
                 **columns: Sequence[Any]) -> SequenceScores:
        import torch

        batch = Batch(list(prompts), list(responses), {k: list(v) for k, v in columns.items()})
        scored = self.rewards.evaluate_batch(batch, step=step)
        metrics: dict[str, float] = {}
        self.rewards.log_weights(scored.weights, metrics.__setitem__)
        self.rewards.notify(step, batch, scored.components, metrics.__setitem__)
        nan = float("nan")
        total = [self.abstain_value if t is None else t for t in scored.totals]
        return SequenceScores(
            total=torch.tensor(total, dtype=torch.float32, device=self.device),
            components={
                alias: torch.tensor([nan if v is None else v for v in values], dtype=torch.float32, device=self.device)
                for alias, values in scored.component_values().items()
            },
            scored=torch.tensor([t is not None for t in scored.totals], dtype=torch.bool, device=self.device),
            reasons=scored.component_reasons(),
            metrics=metrics,
        )


def last_token_index(response_mask: torch.Tensor) -> torch.Tensor:
    """Index of the last 1 in each row of a (B, T) 0/1 mask (-1 for an empty row)."""
    import torch

    positions = torch.arange(response_mask.shape[1], device=response_mask.device).expand_as(response_mask)
    return torch.where(response_mask.bool(), positions, torch.full_like(positions, -1)).max(dim=1).values


def score_on_last_token(scores: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
    """A (B, T) tensor that is zero except ``scores[b]`` on row b's last response token."""
    import torch

    placed = torch.zeros(response_mask.shape, dtype=scores.dtype, device=scores.device)
    last = last_token_index(response_mask)
    rows = torch.nonzero(last >= 0, as_tuple=True)[0]  # a response with no tokens gets no score
    placed[rows, last[rows]] = scores[rows]
    return placed


def kl_shaped_rewards(
    scores: torch.Tensor,
    logprobs: torch.Tensor,
    ref_logprobs: torch.Tensor,
    response_mask: torch.Tensor,
    kl_coef: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token rewards ``-kl_coef * kl + score on the last token`` and the per-token ``kl`` (both masked)."""
    mask = response_mask.to(logprobs.dtype)
    kl = (logprobs - ref_logprobs) * mask
    return -kl_coef * kl + score_on_last_token(scores.to(logprobs.dtype), response_mask), kl
