"""Train a reward model with TRL's ``RewardTrainer`` and save a folder ``reward_model`` loads as is.

Preference data has ``chosen`` / ``rejected`` columns (plain text or chat messages, with an optional
``prompt``), read from JSONL, Parquet or a saved ``datasets`` folder. With ``lora=True`` only LoRA
adapters (and the score head) are trained; they are merged into the base weights before saving, so
the output is always a plain one-label sequence classifier plus its tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardhub import ConfigError, InputFileError
from rewardhub.rewards.reward_model.loading import is_local_reference, load_tokenizer

__all__ = [
    "LoraOptions",
    "PreferenceDataError",
    "REQUIRED_COLUMNS",
    "TrainedRewardModel",
    "checkpointing_field",
    "load_preferences",
    "save_merged",
    "train_reward_model",
]

REQUIRED_COLUMNS = ("chosen", "rejected")


class PreferenceDataError(InputFileError):
    """A preference dataset cannot be read or lacks the ``chosen`` / ``rejected`` columns."""


def load_preferences(source: Any, *, name: str = "training data") -> Any:
    """A ``datasets.Dataset`` of preference pairs from a path (JSONL/JSON, Parquet, datasets folder) or a Dataset."""
    from datasets import Dataset, DatasetDict

    if isinstance(source, Dataset):
        dataset = source
        where = f"the {name} Dataset"
    else:
        path = Path(source).expanduser()
        where = str(path)
        dataset = _read(path, name)
        if isinstance(dataset, DatasetDict):
            if "train" not in dataset:
                raise PreferenceDataError(
                    f"{name} {where!r} is a DatasetDict without a 'train' split (splits: {', '.join(dataset)})"
                )
            dataset = dataset["train"]
    missing = [c for c in REQUIRED_COLUMNS if c not in dataset.column_names]
    if missing:
        raise PreferenceDataError(
            f"{name} {where!r} lacks column(s) {', '.join(map(repr, missing))}; it has "
            f"{', '.join(map(repr, dataset.column_names)) or '(none)'}. Each row needs 'chosen' and 'rejected' "
            f"(text or chat messages), optionally 'prompt'"
        )
    if len(dataset) == 0:
        raise PreferenceDataError(f"{name} {where!r} has no rows")
    return dataset


def _read(path: Path, name: str) -> Any:
    from datasets import Dataset, load_dataset, load_from_disk

    if not path.exists():
        raise PreferenceDataError(f"{name} {str(path)!r} does not exist")
    try:
        if path.is_dir():
            return load_from_disk(str(path))
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".json"):
            return load_dataset("json", data_files=str(path), split="train")
        if suffix == ".parquet":
            return Dataset.from_parquet(str(path))
    except Exception as exc:
        raise PreferenceDataError(f"cannot read {name} {str(path)!r}: {exc}") from exc
    raise PreferenceDataError(
        f"{name} {str(path)!r}: unsupported file type {path.suffix!r}; use .jsonl, .json, .parquet or a saved datasets folder"
    )


@dataclass
class LoraOptions:
    """LoRA settings; ``target_modules`` defaults to every linear layer."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: list[str] | str = "all-linear"


@dataclass
class TrainedRewardModel:
    """Where the trained model was saved and the final train / eval metrics."""

    output_dir: Path
    metrics: dict[str, float] = field(default_factory=dict)


def train_reward_model(
    base_model: str,
    train_data: Any,
    output_dir: str | Path,
    *,
    eval_data: Any = None,
    eval_fraction: float = 0.0,
    tokenizer: str | None = None,
    max_steps: int = -1,
    epochs: float = 1.0,
    learning_rate: float = 1e-4,
    batch_size: int = 8,
    gradient_accumulation_steps: int = 1,
    max_length: int | None = 1024,
    lora: LoraOptions | None = None,
    gradient_checkpointing: bool = False,
    seed: int = 0,
    logging_steps: int = 10,
    trainer_args: dict[str, Any] | None = None,
) -> TrainedRewardModel:
    """Train ``base_model`` (a causal LM or a sequence classifier; folder or hub id) on preference pairs.

    ``eval_fraction`` holds out that share of ``train_data`` when no ``eval_data`` is given.
    ``max_length``: RewardTrainer *drops* pairs longer than this. ``trainer_args`` are extra
    ``RewardConfig`` fields (e.g. ``{"bf16": True}``). Gradient checkpointing is off unless asked for
    (TRL turns it on by default; it saves memory on large models and only slows small ones).
    Returns the output folder (model + tokenizer, loadable by ``reward_model``) and metrics.
    """
    from transformers import AutoModelForSequenceClassification
    from trl import RewardConfig, RewardTrainer

    train = load_preferences(train_data)
    evaluation = load_preferences(eval_data, name="eval data") if eval_data is not None else None
    if evaluation is None and eval_fraction > 0:
        if not 0 < eval_fraction < 1:
            raise ConfigError(f"eval_fraction must be between 0 and 1; got {eval_fraction}")
        split = train.train_test_split(test_size=eval_fraction, seed=seed)
        train, evaluation = split["train"], split["test"]

    if is_local_reference(base_model) and not Path(base_model).expanduser().is_dir():
        raise ConfigError(f"base model folder {base_model!r} does not exist (give a model folder or a hub id)")
    tok = load_tokenizer(tokenizer or base_model)
    model = AutoModelForSequenceClassification.from_pretrained(base_model, num_labels=1)
    model.config.pad_token_id = tok.pad_token_id
    output_dir = Path(output_dir)
    settings: dict[str, Any] = dict(
        output_dir=str(output_dir),
        max_steps=max_steps,
        num_train_epochs=epochs,
        learning_rate=learning_rate,
        per_device_train_batch_size=batch_size,
        per_device_eval_batch_size=batch_size,
        gradient_accumulation_steps=gradient_accumulation_steps,
        max_length=max_length,
        seed=seed,
        logging_steps=logging_steps,
        save_strategy="no",
        report_to="none",
        bf16=False,
    )
    settings[checkpointing_field(RewardConfig)] = gradient_checkpointing
    settings.update(trainer_args or {})
    trainer = RewardTrainer(
        model=model,
        args=RewardConfig(**settings),
        train_dataset=train,
        eval_dataset=evaluation,
        processing_class=tok,
        peft_config=_lora_config(lora) if lora else None,
    )
    if len(trainer.train_dataset) == 0:
        raise PreferenceDataError(f"every training pair is longer than max_length={max_length} tokens; raise max_length")
    metrics = dict(trainer.train().metrics)
    if evaluation is not None:
        metrics.update(trainer.evaluate())
    save_merged(trainer.model, tok, output_dir)
    return TrainedRewardModel(output_dir, {k: float(v) for k, v in metrics.items() if isinstance(v, int | float)})


def checkpointing_field(config_class: Any) -> str:
    """transformers 5 renamed ``gradient_checkpointing`` to ``activation_checkpointing`` (old name deprecated)."""
    fields = getattr(config_class, "__dataclass_fields__", {})
    return "activation_checkpointing" if "activation_checkpointing" in fields else "gradient_checkpointing"


def _lora_config(options: LoraOptions) -> Any:
    from peft import LoraConfig, TaskType

    return LoraConfig(
        task_type=TaskType.SEQ_CLS,
        r=options.r,
        lora_alpha=options.alpha,
        lora_dropout=options.dropout,
        target_modules=options.target_modules,
    )


def save_merged(model: Any, tokenizer: Any, output_dir: Path) -> None:
    """Save a plain model folder: LoRA adapters merged into the weights, tokenizer alongside."""
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.config.pad_token_id = tokenizer.pad_token_id
    output_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(output_dir))
    tokenizer.save_pretrained(str(output_dir))
