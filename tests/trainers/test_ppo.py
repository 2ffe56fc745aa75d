"""PPO support: scores as tensors, placement on the last token with KL shaping, GAE, and the reference loop."""

from __future__ import annotations

import math

import pytest
import torch
from serving import COMPOSED, ensure_registered

import rewardhub
from rewardhub.testing.tiny_models import load_tokenizer, make_causal_lm
from rewardhub.trainers.ppo import PPORewards, kl_shaped_rewards, last_token_index, score_on_last_token
from rewardhub.trainers.ppo_loop import PPOConfig, PPOLoop, gae, whiten


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


def test_scores_are_tensors_with_weighted_total_and_components():
    scores = PPORewards(COMPOSED)(["p", "p", "p"], ["has 7!", "nope", ""], solution=["7", "7", None])
    # "has 7!": contains 1, length 6/20, even -> sometimes abstains; "nope": 0, 4/20, abstains;
    # "": th_contains abstains (solution None), length 0, sometimes abstains
    assert scores.total.dtype == torch.float32
    assert scores.total.tolist() == pytest.approx([1.0 + 0.5 * 6 / 20, 0.5 * 4 / 20, 0.0])
    assert scores.components["th_contains"].tolist()[:2] == [1.0, 0.0]
    assert math.isnan(scores.components["th_contains"][2])
    assert torch.isnan(scores.components["th_sometimes"]).all()
    assert scores.scored.tolist() == [True, True, True]
    assert scores.reasons["th_contains"][2] == "no reference solution"
    means = scores.means()
    assert means["rewards/th_contains"] == pytest.approx(0.5)  # NaN skipped
    assert math.isnan(means["rewards/th_sometimes"])


def test_all_abstaining_sample_gets_the_abstain_value_and_is_flagged():
    scores = PPORewards(["th_sometimes"], abstain_value=-1.0)(["p", "q"], ["ab", "abc"])  # "ab"'s group: no value
    assert scores.total.tolist() == [-1.0, 0.5]
    assert scores.scored.tolist() == [False, True]


def test_score_lands_on_the_last_response_token_next_to_the_kl_penalty():
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])
    assert last_token_index(mask).tolist() == [2, 0, -1, 3]
    scores = torch.tensor([1.0, 2.0, 3.0, 4.0])
    placed = score_on_last_token(scores, mask)
    assert placed.tolist() == [[0, 0, 1, 0], [2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 4]]

    logprobs = torch.full((4, 4), -1.0)
    ref_logprobs = torch.full((4, 4), -1.5)  # kl per token = 0.5 where the mask is on
    rewards, kl = kl_shaped_rewards(scores, logprobs, ref_logprobs, mask, kl_coef=0.1)
    assert kl.tolist() == (0.5 * mask).tolist()
    assert rewards[0].tolist() == pytest.approx([-0.05, -0.05, 1.0 - 0.05, 0.0])
    assert rewards[2].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_gae_matches_a_hand_computation():
    rewards = torch.tensor([[0.0, 0.0, 1.0, 0.0]])
    values = torch.tensor([[0.5, 0.4, 0.3, 9.0]])  # the value past the end is masked out
    mask = torch.tensor([[1, 1, 1, 0]])
    gamma, lam = 0.9, 0.8
    d2 = 1.0 - 0.3
    d1 = 0.0 + gamma * 0.3 - 0.4
    d0 = 0.0 + gamma * 0.4 - 0.5
    a2 = d2
    a1 = d1 + gamma * lam * a2
    a0 = d0 + gamma * lam * a1
    advantages, returns = gae(rewards, values, mask, gamma, lam)
    assert advantages.tolist()[0] == pytest.approx([a0, a1, a2, 0.0])
    assert returns.tolist()[0] == pytest.approx([a0 + 0.5, a1 + 0.4, a2 + 0.3, 0.0])
    white = whiten(advantages, mask)
    assert float(white[0, :3].mean()) == pytest.approx(0.0, abs=1e-6)
    assert white[0, 3] == 0.0


@pytest.mark.slow
def test_reference_loop_runs_two_iterations_on_the_tiny_model(tmp_path):
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    torch.set_num_threads(1)
    path = make_causal_lm(tmp_path / "lm")
    model = AutoModelForCausalLM.from_pretrained(str(path))
    tokenizer = load_tokenizer(path)
    rows = [{"prompt": f"Add {a} and {a}:", "solution": str(2 * a)} for a in range(8)]
    config = PPOConfig(rollout_batch_size=4, minibatch_size=2, ppo_epochs=2, max_new_tokens=8, learning_rate=1e-3)
    rewards = PPORewards(COMPOSED)
    loop = PPOLoop(model, tokenizer, rewards, config)
    before = [p.detach().clone() for p in loop.policy.model.parameters()]

    history = list(loop.train(rows, iterations=2))
    assert len(history) == 2
    for stats in history:
        for key in ("loss/policy", "loss/value", "approx_kl", "clipfrac", "kl", "reward"):
            assert math.isfinite(stats[key]), key
        assert stats["response_length"] > 0

    # the rewards the loop used are rewardhub's scores of the decoded responses
    rollout = loop.last_rollout
    expected = rewardhub.load(COMPOSED).score(
        [{"prompt": r["prompt"], "completion": text, "solution": r["solution"]}
         for r, text in zip(rows[4:8], rollout.responses, strict=True)]
    )
    totals = [row["reward"] if row["reward"] is not None else 0.0 for row in expected]
    assert rollout.scores.total.tolist() == pytest.approx(totals)
    assert history[-1]["reward"] == pytest.approx(sum(totals) / len(totals))
    # ... and sit on each response's last token, next to the KL penalty
    last = last_token_index(rollout.response_mask)
    for b in range(4):
        expected_last = totals[b] - config.kl_coef * float(rollout.kl[b, last[b]])
        assert float(rollout.token_rewards[b, last[b]]) == pytest.approx(expected_last, abs=1e-5)
    # the reference stayed frozen while the policy moved
    assert any(not torch.equal(a, b) for a, b in zip(before, loop.policy.model.parameters(), strict=True))
    assert all(not p.requires_grad for p in loop.reference.parameters())
    assert all(torch.equal(a, r) for a, r in zip(before, loop.reference.parameters(), strict=True))


@pytest.mark.slow
def test_rollouts_sample_the_distribution_their_logprobs_describe(tmp_path):
    """A model's generation_config.json may reshape sampling (Qwen ships repetition_penalty, top_k...);
    the loop's log-probs are softmax(logits / temperature), so sampling must ignore those settings.
    With no_repeat_ngram_size=1 in the model's config no token could repeat anywhere in a sequence."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    torch.set_num_threads(1)
    path = make_causal_lm(tmp_path / "lm")
    model = AutoModelForCausalLM.from_pretrained(str(path))
    model.generation_config.no_repeat_ngram_size = 1
    model.generation_config.repetition_penalty = 50.0
    tokenizer = load_tokenizer(path)
    loop = PPOLoop(model, tokenizer, PPORewards(COMPOSED), PPOConfig(rollout_batch_size=8, max_new_tokens=24))
    rollout = loop.rollout([{"prompt": "Add 2 and 3:", "solution": "5"}] * 8)
    repeats = 0  # response tokens already seen earlier in their sequence (prompt or response)
    for tokens, keep in zip(rollout.sequences, rollout.attention_mask, strict=True):
        kept = tokens[keep.bool()].tolist()
        start = len(kept) - int(keep[rollout.prompt_length:].sum())
        repeats += sum(kept[i] in kept[:i] for i in range(start, len(kept)))
    assert repeats > 0
