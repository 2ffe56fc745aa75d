"""A compact reference PPO loop (policy + value head, frozen reference, KL shaping, GAE, clipping).

Small enough to read in one sitting and driven by rewardhub rewards; each iteration:

1. **rollout** — sample responses for a batch of prompts; record the policy's log-probs and values
   and the frozen reference model's log-probs;
2. **reward** — score the decoded responses with rewardhub (:class:`~rewardhub.trainers.ppo.PPORewards`)
   and shape per-token rewards: ``-kl_coef * (logp - ref_logp)`` on every token, the score on the last;
3. **advantages** — generalised advantage estimation (GAE) over the response tokens, whitened;
4. **update** — several epochs over shuffled minibatches of the clipped policy loss plus the
   clipped value loss.

    loop = PPOLoop(model, tokenizer, PPORewards("rewards.yaml"), PPOConfig(max_new_tokens=32))
    for stats in loop.train(rows, iterations=100):   # rows: {"prompt": ..., <columns>...}
        print(stats["reward"], stats["kl"])
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .ppo import PPORewards, SequenceScores, kl_shaped_rewards

__all__ = [
    "PLAIN_SAMPLING",
    "PPOConfig",
    "PPOLoop",
    "PolicyWithValue",
    "Rollout",
    "gae",
    "masked_mean",
    "whiten",
]

# Sampling must follow softmax(logits / temperature), the distribution whose log-probs the update
# uses. ``generate`` fills unset options from the model's generation_config.json (Qwen ships
# repetition_penalty and top_k, others min_p or no_repeat_ngram_size): set every reshaping one to neutral.
PLAIN_SAMPLING: dict[str, Any] = {
    "top_k": 0, "top_p": 1.0, "min_p": 0.0, "typical_p": 1.0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0,
    "repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "min_length": 0, "min_new_tokens": 0,
    "suppress_tokens": [], "begin_suppress_tokens": [],
}


@dataclass
class PPOConfig:
    """Hyper-parameters of :class:`PPOLoop` (defaults are the usual RLHF-PPO ones)."""

    rollout_batch_size: int = 8
    minibatch_size: int = 4
    ppo_epochs: int = 2
    max_new_tokens: int = 32
    temperature: float = 1.0
    learning_rate: float = 1e-5
    kl_coef: float = 0.05
    gamma: float = 1.0
    lam: float = 0.95
    clip_range: float = 0.2
    clip_range_value: float = 0.2
    vf_coef: float = 0.5
    max_grad_norm: float = 1.0
    seed: int = 0


class PolicyWithValue(nn.Module):
    """A causal LM plus a linear value head on its last hidden state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.value_head = nn.Linear(model.config.get_text_config().hidden_size, 1)
        nn.init.zeros_(self.value_head.weight)
        nn.init.zeros_(self.value_head.bias)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.model(**_model_inputs(input_ids, attention_mask), output_hidden_states=True)
        return out.logits, self.value_head(out.hidden_states[-1]).squeeze(-1)


@dataclass
class Rollout:
    """One batch of sampled responses with everything the update needs (response tensors are (B, T))."""

    sequences: torch.Tensor
    attention_mask: torch.Tensor
    prompt_length: int
    response_mask: torch.Tensor
    responses: list[str]
    logprobs: torch.Tensor
    ref_logprobs: torch.Tensor
    values: torch.Tensor
    scores: SequenceScores
    token_rewards: torch.Tensor
    kl: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor


class PPOLoop:
    """PPO on a causal LM with rewardhub rewards: ``step(rows)`` runs one rollout and one update."""

    def __init__(self, model: nn.Module, tokenizer: Any, rewards: PPORewards, config: PPOConfig | None = None):
        self.config = config or PPOConfig()
        self.tokenizer = tokenizer
        self.rewards = rewards
        self.policy = PolicyWithValue(model)
        self.reference = copy.deepcopy(model).eval().requires_grad_(False)
        self.optimizer = torch.optim.AdamW(self.policy.parameters(), lr=self.config.learning_rate)
        self.generator = torch.Generator().manual_seed(self.config.seed)
        self.steps_done = 0  # the step scheduled weights and the hacking monitor read

    def train(self, rows: Sequence[dict[str, Any]], iterations: int) -> Iterable[dict[str, float]]:
        """Yield the stats of ``iterations`` steps, cycling through ``rows`` in rollout-sized batches."""
        size = self.config.rollout_batch_size
        for i in range(iterations):
            start = (i * size) % len(rows)
            yield self.step([rows[(start + j) % len(rows)] for j in range(size)])

    def step(self, rows: Sequence[dict[str, Any]]) -> dict[str, float]:
        self.policy.eval()  # no dropout: the update must see the same distribution that sampled
        rollout = self.rollout(rows)
        stats = self.update(rollout)
        stats.update(rollout.scores.means())
        stats["kl"] = float((rollout.kl.sum(1)).mean())
        stats["response_length"] = float(rollout.response_mask.sum(1).float().mean())
        self.last_rollout = rollout
        self.steps_done += 1
        return stats

    # ----- 1-3: rollout, rewards, advantages --------------------------------------------------------
    @torch.no_grad()
    def rollout(self, rows: Sequence[dict[str, Any]]) -> Rollout:
        cfg = self.config
        prompts = [row["prompt"] for row in rows]
        encoded = self.tokenizer(
            [self._prompt_text(p) for p in prompts], return_tensors="pt", padding=True, padding_side="left",
            add_special_tokens=False,
        )
        prompt_length = encoded["input_ids"].shape[1]
        sequences = self.policy.model.generate(
            **encoded, **PLAIN_SAMPLING, do_sample=True, max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature, pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
        response = sequences[:, prompt_length:]
        response_mask = _until_first_eos(response, self.tokenizer.eos_token_id)
        attention_mask = torch.cat([encoded["attention_mask"], response_mask], dim=1)

        logprobs, values = self._logprobs_and_values(self.policy, sequences, attention_mask, prompt_length)
        ref_logits = self.reference(**_model_inputs(sequences, attention_mask)).logits
        ref_logprobs = _response_logprobs(ref_logits, sequences, prompt_length, cfg.temperature)

        kept = [tokens[keep.bool()] for tokens, keep in zip(response, response_mask, strict=True)]
        texts = self.tokenizer.batch_decode(kept, skip_special_tokens=True)
        columns = {k: [row.get(k) for row in rows] for k in rows[0] if k != "prompt"}
        scores = self.rewards(prompts, texts, step=self.steps_done, **columns)
        token_rewards, kl = kl_shaped_rewards(scores.total, logprobs, ref_logprobs, response_mask, cfg.kl_coef)
        advantages, returns = gae(token_rewards, values, response_mask, cfg.gamma, cfg.lam)
        return Rollout(sequences, attention_mask, prompt_length, response_mask, texts, logprobs, ref_logprobs,
                       values, scores, token_rewards, kl, whiten(advantages, response_mask), returns)

    # ----- 4: update ------------------------------------------------------------------------------------
    def update(self, rollout: Rollout) -> dict[str, float]:
        cfg = self.config
        totals: dict[str, float] = {"loss/policy": 0.0, "loss/value": 0.0, "clipfrac": 0.0, "approx_kl": 0.0}
        n_updates = 0
        batch_size = rollout.sequences.shape[0]
        for _ in range(cfg.ppo_epochs):
            order = torch.randperm(batch_size, generator=self.generator)
            for start in range(0, batch_size, cfg.minibatch_size):
                idx = order[start:start + cfg.minibatch_size]
                mask = rollout.response_mask[idx].float()
                logprobs, values = self._logprobs_and_values(
                    self.policy, rollout.sequences[idx], rollout.attention_mask[idx], rollout.prompt_length
                )
                advantages, old_logprobs = rollout.advantages[idx], rollout.logprobs[idx]
                ratio = torch.exp(logprobs - old_logprobs)
                clipped_ratio = ratio.clamp(1 - cfg.clip_range, 1 + cfg.clip_range)
                policy_loss = masked_mean(torch.max(-advantages * ratio, -advantages * clipped_ratio), mask)

                old_values, returns = rollout.values[idx], rollout.returns[idx]
                clipped_values = old_values + (values - old_values).clamp(-cfg.clip_range_value, cfg.clip_range_value)
                value_loss = 0.5 * masked_mean(torch.max((values - returns) ** 2, (clipped_values - returns) ** 2), mask)

                loss = policy_loss + cfg.vf_coef * value_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.policy.parameters(), cfg.max_grad_norm)
                self.optimizer.step()

                totals["loss/policy"] += policy_loss.item()
                totals["loss/value"] += value_loss.item()
                totals["clipfrac"] += float(masked_mean(((ratio - 1).abs() > cfg.clip_range).float(), mask))
                totals["approx_kl"] += float(masked_mean(old_logprobs - logprobs.detach(), mask))
                n_updates += 1
        return {k: v / max(n_updates, 1) for k, v in totals.items()}

    # ----- helpers --------------------------------------------------------------------------------------
    def _prompt_text(self, prompt: Any) -> str:
        if isinstance(prompt, str):
            return prompt
        return self.tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)

    def _logprobs_and_values(self, policy: PolicyWithValue, sequences: torch.Tensor, attention_mask: torch.Tensor,
                             prompt_length: int) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values = policy(sequences, attention_mask)
        # position t-1 predicts response token t: its value estimates the return from generating it
        return (_response_logprobs(logits, sequences, prompt_length, self.config.temperature),
                values[:, prompt_length - 1:-1])


def _model_inputs(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """Inputs with position ids that skip left padding (as ``generate`` computes them)."""
    position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "position_ids": position_ids}


def _response_logprobs(logits: torch.Tensor, sequences: torch.Tensor, prompt_length: int,
                       temperature: float) -> torch.Tensor:
    logits = logits[:, prompt_length - 1:-1] / temperature
    tokens = sequences[:, prompt_length:]
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def _until_first_eos(response: torch.Tensor, eos_token_id: int) -> torch.Tensor:
    """1 for response tokens up to and including the first EOS, 0 after it."""
    is_eos = (response == eos_token_id).long()
    return ((is_eos.cumsum(dim=1) - is_eos) == 0).long()


def gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float,
        lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns over (B, T) response tokens (0 beyond the mask)."""
    mask = mask.to(values.dtype)
    values = values * mask
    advantages = torch.zeros_like(rewards)
    running = torch.zeros(rewards.shape[0], dtype=rewards.dtype, device=rewards.device)
    length = rewards.shape[1]
    for t in reversed(range(length)):
        next_value = values[:, t + 1] if t + 1 < length else torch.zeros_like(running)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = (delta + gamma * lam * running) * mask[:, t]
        advantages[:, t] = running
    return advantages, (advantages + values) * mask


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum().clamp(min=1)


def whiten(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Normalise to mean 0 and variance 1 over the masked entries (0 elsewhere)."""
    mask = mask.to(values.dtype)
    mean = masked_mean(values, mask)
    variance = masked_mean((values - mean) ** 2, mask)
    return (values - mean) * torch.rsqrt(variance + 1e-8) * mask
