"""The ``reward_model`` reward on a tiny local sequence classifier: batching, truncation, chat, transforms, errors."""

from __future__ import annotations

import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rewardhub
from rewardhub.rewards.reward_model import RewardModelLoadError, RewardModelReward
from rewardhub.testing.tiny_models import load_tokenizer, make_causal_lm, make_seq_classifier

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def rm_dir(tmp_path_factory) -> Path:
    return make_seq_classifier(tmp_path_factory.mktemp("rm") / "rm", seed=3)


@pytest.fixture(scope="module")
def direct(rm_dir):
    """Score token ids with the model directly, one sequence at a time (the reference the reward must match)."""
    model = transformers.AutoModelForSequenceClassification.from_pretrained(rm_dir).eval()
    tokenizer = load_tokenizer(rm_dir)

    def score(ids: list[int]) -> float:
        with torch.inference_mode():
            return model(input_ids=torch.tensor([ids])).logits[0, 0].item()

    score.tokenizer = tokenizer
    return score


def completions_of_mixed_length(n: int = 11) -> list[str]:
    return [" ".join(["word"] * (1 + (i * 7) % 23)) + f" end {i}" for i in range(n)]


def test_scores_match_one_at_a_time_after_length_sorting(rm_dir, direct):
    completions = completions_of_mixed_length()
    prompts = [f"Question {i}:" for i in range(len(completions))]
    reward = RewardModelReward(model=str(rm_dir), batch_size=3)
    values = reward(prompts, completions)
    eos = direct.tokenizer.eos_token
    expected = [direct(direct.tokenizer(p + c + eos)["input_ids"]) for p, c in zip(prompts, completions, strict=True)]
    assert values == pytest.approx(expected, abs=1e-5)
    assert len(set(round(v, 6) for v in values)) == len(values)  # distinct inputs, distinct scores: order matters


def test_matches_trl_direct_path_without_eos(rm_dir):
    """append_eos=False reproduces what GRPOTrainer computes for a model reward: p + c, one padded batch."""
    completions = completions_of_mixed_length(9)
    prompts = ["Say something:"] * len(completions)
    tokenizer = load_tokenizer(rm_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(rm_dir).eval()
    inputs = tokenizer(
        text=[p + c for p, c in zip(prompts, completions, strict=True)],
        return_tensors="pt", padding=True, padding_side="right", add_special_tokens=False,
    )
    with torch.inference_mode():
        expected = model(**inputs).logits[:, 0].tolist()
    values = RewardModelReward(model=str(rm_dir), batch_size=4, append_eos=False)(prompts, completions)
    assert values == pytest.approx(expected, abs=1e-5)


def test_truncation_keeps_the_end_of_the_completion(rm_dir, direct):
    tok = direct.tokenizer
    prompt = "A long question about many things:"
    completion = "first part " + "filler words " * 40 + "final verdict yes"
    reward = RewardModelReward(model=str(rm_dir), max_length=16)
    result = reward.evaluate([prompt], [completion])
    full = tok(prompt + completion + tok.eos_token)["input_ids"]
    prompt_len = len(tok(prompt)["input_ids"])
    assert result.values[0] == pytest.approx(direct(full[-16:]), abs=1e-5)
    assert (
        f"truncated to the last 16 of {len(full)} tokens, keeping the end of the completion "
        f"(dropped {prompt_len} prompt and {len(full) - 16 - prompt_len} completion tokens)"
    ) in result.reasons[0]
    # The start of the completion is outside the window, its end inside.
    changed_start = reward.evaluate([prompt], ["other part " + completion[len("first part "):]])
    changed_end = reward.evaluate([prompt], [completion.replace("verdict yes", "verdict no")])
    assert changed_start.values[0] == pytest.approx(result.values[0], abs=1e-6)
    assert changed_end.values[0] != pytest.approx(result.values[0], abs=1e-6)


def test_truncation_drops_prompt_before_completion(rm_dir, direct):
    tok = direct.tokenizer
    prompt = "context " * 30
    completion = "short answer"
    result = RewardModelReward(model=str(rm_dir), max_length=12).evaluate([prompt], [completion])
    full = tok(prompt + completion + tok.eos_token)["input_ids"]
    assert f"(dropped {len(full) - 12} prompt and 0 completion tokens)" in result.reasons[0]
    untouched = RewardModelReward(model=str(rm_dir)).evaluate([prompt], [completion])
    assert "truncated" not in untouched.reasons[0]


def test_chat_template_for_conversational_rows(rm_dir, direct):
    tok = direct.tokenizer
    prompt = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "2 + 2?"}]
    completion = [{"role": "assistant", "content": "4"}]
    reward = RewardModelReward(model=str(rm_dir))
    value = reward([prompt], [completion])[0]
    rendered = tok.apply_chat_template(prompt + completion, tokenize=False)
    assert rendered.startswith("<|im_start|>system\nbe brief<|im_end|>")
    assert value == pytest.approx(direct(tok(rendered, add_special_tokens=False)["input_ids"]), abs=1e-5)
    # A plain completion after a chat prompt becomes the assistant turn; chat_template=True wraps plain prompts.
    assert reward([prompt], ["4"])[0] == pytest.approx(value, abs=1e-6)
    never = RewardModelReward(model=str(rm_dir), chat_template=False).evaluate([prompt], [completion])
    assert never.values == [None] and "conversational rows need chat_template null or true" in never.reasons[0]
    forced = RewardModelReward(model=str(rm_dir), chat_template=True)
    assert forced(["2 + 2?"], ["4"])[0] == pytest.approx(
        direct(tok(tok.apply_chat_template(
            [{"role": "user", "content": "2 + 2?"}, {"role": "assistant", "content": "4"}], tokenize=False
        ), add_special_tokens=False)["input_ids"]), abs=1e-5
    )


def test_conversational_row_without_chat_template_abstains_others_scored(tmp_path):
    folder = make_seq_classifier(tmp_path / "rm")
    (folder / "chat_template.jinja").unlink()
    reward = RewardModelReward(model=str(folder))
    result = reward.evaluate([[{"role": "user", "content": "hi"}], "plain prompt", 7], ["hello", "fine", "x"])
    assert result.values[0] is None and "no chat template" in result.reasons[0]
    assert isinstance(result.values[1], float)
    assert result.values[2] is None and "prompt is a int" in result.reasons[2]


def test_fixed_normalisation_and_sigmoid(rm_dir):
    prompts, completions = ["p"] * 5, completions_of_mixed_length(5)
    raw = RewardModelReward(model=str(rm_dir))(prompts, completions)
    fixed = RewardModelReward(model=str(rm_dir), normalize="fixed", mean=0.5, std=2.0)(prompts, completions)
    assert fixed == pytest.approx([(r - 0.5) / 2.0 for r in raw], abs=1e-6)
    squashed = RewardModelReward(model=str(rm_dir), normalize="fixed", mean=0.5, std=2.0, sigmoid=True)
    assert squashed(prompts, completions) == pytest.approx([1 / (1 + math.exp(-f)) for f in fixed], abs=1e-6)


def test_running_normalisation_uses_all_scores_seen(rm_dir):
    completions = completions_of_mixed_length(8)
    raw = RewardModelReward(model=str(rm_dir))(["p"] * 8, completions)
    running = RewardModelReward(model=str(rm_dir), normalize="running")
    running(["p"] * 4, completions[:4])
    second = running(["p"] * 4, completions[4:])
    mean = sum(raw) / 8
    std = math.sqrt(sum((r - mean) ** 2 for r in raw) / 7)
    assert second == pytest.approx([(r - mean) / std for r in raw[4:]], abs=1e-5)
    assert running.stats.count == 8


def test_margin_against_reference_column(rm_dir):
    reward = RewardModelReward(model=str(rm_dir))
    raw = reward(["q", "q", "q"], ["mine", "other answer", "ref"])
    margin = RewardModelReward(model=str(rm_dir), margin_column="solution")
    result = margin.evaluate(["q", "q", "q"], ["mine", "other answer", "x"], solution=["ref", "ref", None])
    assert result.values[0] == pytest.approx(raw[0] - raw[2], abs=1e-5)
    assert result.values[1] == pytest.approx(raw[1] - raw[2], abs=1e-5)
    assert result.values[2] is None and "no reference completion in column 'solution'" in result.reasons[2]
    assert "minus reference score" in result.reasons[0]
    missing = margin.evaluate(["q"], ["mine"])
    assert missing.values == [None] and "needs column 'solution'" in missing.reasons[0]


def test_construction_is_cheap_and_pickles_without_the_model(rm_dir):
    reward = rewardhub.get("reward_model", model=str(rm_dir))
    assert reward._loaded is None
    first = reward(["p"], ["c"])
    assert reward._loaded is not None
    payload = pickle.dumps(reward)
    assert len(payload) < 10_000  # the model is not in the pickle
    copy = pickle.loads(payload)
    assert copy._loaded is None
    assert copy(["p"], ["c"]) == pytest.approx(first, abs=1e-6)


def test_config_loads_reward_model(rm_dir):
    rewards = rewardhub.load({"rewards": [{"name": "reward_model", "weight": 0.5, "params": {"model": str(rm_dir)}}]})
    assert rewards.reward_weights == [0.5]
    assert isinstance(rewards.reward_funcs[0](["p"], ["c"])[0], float)


def test_bad_params_are_config_errors(rm_dir):
    for params in ({"batch_size": 0}, {"normalize": "zscore"}, {"std": 0.0}, {"dtype": "int8"}, {"max_length": 1}):
        with pytest.raises(rewardhub.ConfigError):
            RewardModelReward(model=str(rm_dir), **params)


def test_missing_folder_error_names_the_path(tmp_path):
    with pytest.raises(RewardModelLoadError, match=f"folder '{tmp_path / 'nope'}' does not exist"):
        rewardhub.get("reward_model", model=str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(RewardModelLoadError, match="has no config.json"):
        RewardModelReward(model=str(tmp_path / "empty"))
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{}")
    with pytest.raises(RewardModelLoadError, match="holds a PEFT adapter"):
        RewardModelReward(model=str(tmp_path / "adapter"))


def test_causal_lm_is_not_a_reward_model(tmp_path):
    folder = make_causal_lm(tmp_path / "lm")
    with pytest.raises(RewardModelLoadError, match=r"is not a sequence classifier.*Qwen2ForCausalLM"):
        RewardModelReward(model=str(folder))


def test_two_label_classifier_is_rejected(tmp_path):
    folder = make_seq_classifier(tmp_path / "clf", num_labels=2)
    with pytest.raises(RewardModelLoadError, match="classifier with 2 labels"):
        RewardModelReward(model=str(folder))


def test_classifier_config_without_trained_head_is_rejected_at_load(tmp_path):
    folder = make_causal_lm(tmp_path / "relabelled")
    config = json.loads((folder / "config.json").read_text())
    config.update(architectures=["Qwen2ForSequenceClassification"], id2label={"0": "LABEL_0"}, label2id={"LABEL_0": 0})
    (folder / "config.json").write_text(json.dumps(config))
    reward = RewardModelReward(model=str(folder), on_error="raise")
    with pytest.raises(RewardModelLoadError, match="lacks trained weights for score.weight"):
        reward(["p"], ["c"])
    # With the default policy the failure is an abstention with the reason, never a 0 score.
    reward = RewardModelReward(model=str(folder))
    result = reward.evaluate(["p", "q", "r"], ["c", "d", "e"])
    assert result.values == [None] * 3 and all("lacks trained weights" in r for r in result.reasons)
    # The failure is remembered (one load attempt per process); a copy sent to a new process retries.
    shutil.rmtree(folder)
    make_seq_classifier(folder)
    assert reward.evaluate(["p"], ["c"]).values == [None]
    assert isinstance(pickle.loads(pickle.dumps(reward)).evaluate(["p"], ["c"]).values[0], float)


def test_hub_id_loads_through_the_hub_cache(tmp_path, rm_dir):
    """The hub-id path is real: an offline Hugging Face cache holding tiny-org/tiny-rm is resolved by id."""
    snapshot = tmp_path / "hub" / "models--tiny-org--tiny-rm" / "snapshots" / ("a" * 40)
    shutil.copytree(rm_dir, snapshot)
    (tmp_path / "hub" / "models--tiny-org--tiny-rm" / "refs").mkdir()
    (tmp_path / "hub" / "models--tiny-org--tiny-rm" / "refs" / "main").write_text("a" * 40)
    script = textwrap.dedent("""
        import json, rewardhub
        from rewardhub.rewards.reward_model import RewardModelLoadError
        reward = rewardhub.get("reward_model", model="tiny-org/tiny-rm")
        out = {"value": reward(["p"], ["c"])[0]}
        try:
            rewardhub.get("reward_model", model="tiny-org/absent", on_error="raise")(["p"], ["c"])
        except RewardModelLoadError as exc:
            out["error"] = str(exc)
        print(json.dumps(out))
    """)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)  # torch + transformers imports: slow on a loaded machine
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    local = RewardModelReward(model=str(rm_dir))(["p"], ["c"])[0]
    assert out["value"] == pytest.approx(local, abs=1e-6)
    assert "hub model 'tiny-org/absent'" in out["error"] and "Hugging Face Hub" in out["error"]


def test_non_text_completion_abstains_and_the_rest_is_scored(rm_dir):
    result = RewardModelReward(model=str(rm_dir)).evaluate(["p", "p"], [42, "fine"])
    assert result.values[0] is None and result.reasons[0]
    assert isinstance(result.values[1], float)
