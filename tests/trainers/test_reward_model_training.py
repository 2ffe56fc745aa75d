"""Train a tiny reward model with TRL's RewardTrainer, score with ``reward_model``, hand it to GRPOTrainer."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import rewardhub
from rewardhub.cli import main as cli_main
from rewardhub.testing.tiny_models import make_causal_lm
from rewardhub.trainers.reward_model_training import (
    LoraOptions,
    PreferenceDataError,
    load_preferences,
    train_reward_model,
)

datasets = pytest.importorskip("datasets")
pytest.importorskip("trl")

POSITIVE = "good great correct yes true".split()
NEGATIVE = "bad poor wrong no false".split()
FILLER = "the a of to and in is it that for on with as was at by be this from".split()


def preference_pairs(n: int, seed: int, conversational: bool = False) -> list[dict]:
    """Pairs that differ in one word: chosen has a positive word where rejected has a negative one."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 8))]
        at = rng.randint(0, len(words))
        chosen = " ".join(words[:at] + [rng.choice(POSITIVE)] + words[at:])
        rejected = " ".join(words[:at] + [rng.choice(NEGATIVE)] + words[at:])
        question = " ".join(rng.choice(FILLER) for _ in range(3))
        if conversational:
            rows.append({
                "prompt": [{"role": "user", "content": question}],
                "chosen": [{"role": "assistant", "content": chosen}],
                "rejected": [{"role": "assistant", "content": rejected}],
            })
        else:
            rows.append({"prompt": f"Q: {question}\nA:", "chosen": " " + chosen, "rejected": " " + rejected})
    return rows


def held_out_accuracy(reward, pairs: list[dict]) -> float:
    prompts = [p["prompt"] for p in pairs]
    chosen = reward(prompts, [p["chosen"] for p in pairs])
    rejected = reward(prompts, [p["rejected"] for p in pairs])
    return sum(c > r for c, r in zip(chosen, rejected, strict=True)) / len(pairs)


def write_jsonl(rows: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def base_lm(tmp_path_factory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("base") / "lm")


@pytest.fixture(scope="module")
def trained_rm(tmp_path_factory, base_lm):
    folder = tmp_path_factory.mktemp("trained")
    data = write_jsonl(preference_pairs(256, seed=1), folder / "train.jsonl")
    result = train_reward_model(
        str(base_lm), data, folder / "rm", max_steps=40, learning_rate=3e-3, batch_size=16, eval_fraction=0.125
    )
    return result


def test_trained_reward_model_ranks_held_out_pairs(trained_rm):
    assert trained_rm.metrics["eval_accuracy"] >= 0.9
    reward = rewardhub.get("reward_model", model=str(trained_rm.output_dir), batch_size=32)
    accuracy = held_out_accuracy(reward, preference_pairs(100, seed=99))
    assert accuracy >= 0.9, accuracy


def test_untrained_head_is_not_better_than_trained(base_lm, tmp_path):
    """Sanity baseline: the same base with a zero-step classifier head is far from the trained accuracy."""
    data = write_jsonl(preference_pairs(16, seed=1), tmp_path / "train.jsonl")
    untrained = train_reward_model(str(base_lm), data, tmp_path / "rm0", max_steps=1, learning_rate=1e-12, batch_size=2)
    accuracy = held_out_accuracy(rewardhub.get("reward_model", model=str(untrained.output_dir)), preference_pairs(100, 99))
    assert accuracy < 0.8, accuracy


def test_lora_on_conversational_parquet_saves_a_merged_model(base_lm, tmp_path):
    datasets.Dataset.from_list(preference_pairs(256, seed=2, conversational=True)).to_parquet(tmp_path / "train.parquet")
    result = train_reward_model(
        str(base_lm), tmp_path / "train.parquet", tmp_path / "rm",
        max_steps=60, learning_rate=3e-3, batch_size=16, lora=LoraOptions(r=8, alpha=16),
    )
    saved = sorted(p.name for p in result.output_dir.iterdir())
    assert "adapter_config.json" not in saved and "model.safetensors" in saved
    config = json.loads((result.output_dir / "config.json").read_text())
    assert config["architectures"] == ["Qwen2ForSequenceClassification"]
    reward = rewardhub.get("reward_model", model=str(result.output_dir))
    assert held_out_accuracy(reward, preference_pairs(100, seed=98, conversational=True)) >= 0.85


def test_cli_trains_from_a_datasets_folder(base_lm, tmp_path, capsys):
    datasets.Dataset.from_list(preference_pairs(32, seed=3)).save_to_disk(tmp_path / "prefs")
    code = cli_main(["train-rm", str(base_lm), str(tmp_path / "prefs"), "-o", str(tmp_path / "rm"),
                     "--max-steps", "3", "--batch-size", "8", "--eval-fraction", "0.25"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["output"] == str(tmp_path / "rm") and "eval_accuracy" in out["metrics"]
    assert isinstance(rewardhub.get("reward_model", model=out["output"])(["Q:"], [" yes"])[0], float)


def test_cli_reports_missing_columns(base_lm, tmp_path, capsys):
    data = write_jsonl([{"prompt": "p", "chosen": "a", "answer": "b"}], tmp_path / "bad.jsonl")
    assert cli_main(["train-rm", str(base_lm), str(data), "-o", str(tmp_path / "rm")]) == 2
    err = capsys.readouterr().err
    assert "lacks column(s) 'rejected'" in err and "'answer'" in err and str(data) in err


def test_load_preferences_errors(tmp_path):
    with pytest.raises(PreferenceDataError, match="does not exist"):
        load_preferences(tmp_path / "absent.jsonl")
    (tmp_path / "prefs.csv").write_text("chosen,rejected\na,b\n")
    with pytest.raises(PreferenceDataError, match="unsupported file type '.csv'"):
        load_preferences(tmp_path / "prefs.csv")
    datasets.DatasetDict({"test": datasets.Dataset.from_list([{"chosen": "a", "rejected": "b"}])}).save_to_disk(
        tmp_path / "dd"
    )
    with pytest.raises(PreferenceDataError, match="without a 'train' split"):
        load_preferences(tmp_path / "dd")
    (tmp_path / "broken.jsonl").write_text('{"chosen": "a", "rejected": "b"}\n{not json\n')
    with pytest.raises(PreferenceDataError, match="cannot read"):
        load_preferences(tmp_path / "broken.jsonl")
    loaded = load_preferences(write_jsonl([{"chosen": "a", "rejected": "b"}], tmp_path / "ok.jsonl"))
    assert loaded.column_names == ["chosen", "rejected"] and len(loaded) == 1


@pytest.mark.parametrize("conversational", [True, False])
def test_trained_folder_works_in_grpo_trainer_directly(trained_rm, base_lm, tmp_path, conversational):
    """TRL loads the folder itself as a model reward; rewardhub's reward on the same folder agrees with it.

    GRPOTrainer renders plain rows as ``prompt + completion`` without an eos token, so the plain case
    compares against ``append_eos=False`` (the default appends eos, as RewardTrainer does in training).
    """
    from trl import GRPOConfig, GRPOTrainer

    prompt = [{"role": "user", "content": "the a of"}] if conversational else "Q: the a of\nA:"
    ours = rewardhub.get("reward_model", model=str(trained_rm.output_dir), append_eos=conversational)
    trainer = GRPOTrainer(
        model=str(base_lm),
        reward_funcs=[str(trained_rm.output_dir), ours],
        args=GRPOConfig(
            output_dir=str(tmp_path / "grpo"), max_steps=1, per_device_train_batch_size=4, num_generations=4,
            max_completion_length=8, report_to="none", bf16=False, logging_steps=1, save_strategy="no", use_cpu=True,
        ),
        train_dataset=datasets.Dataset.from_list([{"prompt": prompt}] * 4),
    )
    trainer.train()
    logs = trainer.state.log_history[0]
    direct = trained_rm.output_dir.name  # TRL names a model reward after its folder
    assert logs[f"rewards/{direct}/mean"] == pytest.approx(logs["rewards/reward_model/mean"], abs=1e-4)
    assert logs[f"rewards/{direct}/std"] == pytest.approx(logs["rewards/reward_model/std"], abs=1e-4)
    assert logs["reward_model/abstained"] == 0
