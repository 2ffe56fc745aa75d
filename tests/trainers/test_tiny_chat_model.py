"""``tiny_chat_model()`` works with TRL trainers that reload the model from its folder (DPOTrainer)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_tiny_chat_model_trains_with_dpo(tmp_path):
    """DPOTrainer builds its reference model from ``model.config._name_or_path``: before, that folder
    was a deleted temporary directory and the trainer failed with 'Repo id must be in the form ...'."""
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    from rewardhub.testing.tiny_models import tiny_chat_model

    model, tokenizer = tiny_chat_model(seed=1)
    assert Path(model.config._name_or_path, "config.json").exists()
    pairs = Dataset.from_list([
        {"prompt": [{"role": "user", "content": f"Say {i}."}], "chosen": [{"role": "assistant", "content": str(i)}],
         "rejected": [{"role": "assistant", "content": "no"}]} for i in range(8)
    ])
    args = DPOConfig(output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none", max_steps=2,
                     per_device_train_batch_size=4, save_strategy="no", disable_tqdm=True, learning_rate=1e-2)
    trainer = DPOTrainer(model=model, args=args, train_dataset=pairs, processing_class=tokenizer)
    result = trainer.train()
    assert result.global_step == 2
    assert result.training_loss > 0
    assert trainer.ref_model is not None and trainer.ref_model is not model


def test_tiny_chat_model_in_a_folder_of_your_choice(tmp_path):
    from rewardhub.testing.tiny_models import tiny_chat_model

    model, tokenizer = tiny_chat_model(path=tmp_path / "lm")
    assert Path(model.config._name_or_path) == tmp_path / "lm"
    assert tokenizer.decode(tokenizer("hello 42")["input_ids"]) == "hello 42"
