"""Load a reward model: a one-label sequence classifier and its tokenizer, checked before torch is touched."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rewardhub import ConfigError

__all__ = [
    "DTYPES",
    "LoadedModel",
    "RewardModelLoadError",
    "check_model_folder",
    "check_sequence_classifier",
    "is_local_reference",
    "load_reward_model",
    "load_tokenizer",
    "resolve_device",
    "resolve_dtype",
    "served_tokenizer",
]

DTYPES = ("auto", "float32", "bfloat16", "float16")


class RewardModelLoadError(ConfigError):
    """A reward model cannot be used: folder missing, not a one-label sequence classifier, no tokenizer."""


def is_local_reference(model: str) -> bool:
    """True when ``model`` names a local folder (it exists, or is written as a path) rather than a hub id."""
    if Path(model).expanduser().exists():
        return True
    return model.startswith(("/", "./", "../", "~", ".\\")) or "\\" in model or model.count("/") > 1


def check_model_folder(model: str) -> None:
    """Fail early, naming the path, when a local folder is missing or holds no one-label sequence classifier.

    Reads ``config.json`` only (no torch), so constructing the reward reports a wrong path at once.
    """
    path = Path(model).expanduser()
    if not path.exists():
        raise RewardModelLoadError(f"reward model folder {str(path)!r} does not exist")
    if not path.is_dir():
        raise RewardModelLoadError(f"reward model path {str(path)!r} is a file; expected a model folder")
    config_file = path / "config.json"
    if not config_file.exists():
        if (path / "adapter_config.json").exists():
            raise RewardModelLoadError(
                f"{str(path)!r} holds a PEFT adapter, not a full model: merge it into its base model first "
                f"(`rewardhub train-rm --lora` saves merged weights)"
            )
        raise RewardModelLoadError(f"reward model folder {str(path)!r} has no config.json: it is not a saved model")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RewardModelLoadError(f"cannot read {str(config_file)!r}: {exc}") from exc
    # transformers' default when config.json records no labels is two, as AutoConfig would report.
    labels = len(config["id2label"]) if isinstance(config.get("id2label"), dict) else config.get("num_labels", 2)
    check_sequence_classifier(config.get("architectures"), config.get("auto_map"), labels, str(path))


def check_sequence_classifier(architectures: Any, auto_map: Any, num_labels: Any, model: str) -> None:
    """Raise unless the config (architectures, auto_map, label count) is a one-label sequence classifier."""
    architectures = list(architectures or [])
    remote_head = "AutoModelForSequenceClassification" in (auto_map or {})
    if not remote_head and not any(str(a).endswith("ForSequenceClassification") for a in architectures):
        raise RewardModelLoadError(
            f"{model!r} is not a sequence classifier: its config lists architectures {architectures or '(none)'}. "
            f"A reward model is a *ForSequenceClassification model with one label; train one with "
            f"`rewardhub train-rm` (a causal LM would get a random, untrained score head)"
        )
    if num_labels != 1:
        raise RewardModelLoadError(
            f"{model!r} is a classifier with {num_labels} labels; a reward model needs exactly one (a scalar score)"
        )


def load_tokenizer(source: str, *, revision: str | None = None, trust_remote_code: bool = False) -> Any:
    """The tokenizer saved with a model: ``AutoTokenizer`` first, then the plain fast tokenizer file.

    A missing pad token falls back to the eos token (as TRL does); a tokenizer with neither is an error.
    """
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    try:
        tokenizer = AutoTokenizer.from_pretrained(source, revision=revision, trust_remote_code=trust_remote_code)
    except Exception as auto_error:
        try:
            tokenizer = PreTrainedTokenizerFast.from_pretrained(source, revision=revision)
        except Exception:
            raise RewardModelLoadError(f"cannot load a tokenizer from {source!r}: {auto_error}") from auto_error
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise RewardModelLoadError(f"the tokenizer of {source!r} has neither a pad token nor an eos token")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def resolve_device(device: str) -> str:
    """``"auto"`` -> cuda when available, else mps, else cpu; anything else is passed to torch as is."""
    import torch

    if device != "auto":
        return device
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_dtype(dtype: str, device: str) -> Any:
    """``"auto"`` -> bfloat16 on a GPU that supports it, float16 on other GPUs, float32 elsewhere."""
    import torch

    if dtype != "auto":
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


@dataclass
class LoadedModel:
    """A reward model ready to score: model on its device, tokenizer, and the longest input it takes."""

    model: Any
    tokenizer: Any
    device: str
    max_length: int


def load_reward_model(
    model: str,
    *,
    tokenizer: str | None = None,
    revision: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    max_length: int | None = None,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """Load a one-label sequence classifier and its tokenizer from a local folder or a hub id."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    local = is_local_reference(model)
    if local:
        check_model_folder(model)
        model = str(Path(model).expanduser())
    where = "folder" if local else "hub model"
    try:
        config = AutoConfig.from_pretrained(model, revision=revision, trust_remote_code=trust_remote_code)
    except Exception as exc:
        hint = "" if local else " (not a local folder, so it was looked up on the Hugging Face Hub)"
        raise RewardModelLoadError(f"cannot read the config of reward {where} {model!r}{hint}: {exc}") from exc
    check_sequence_classifier(
        getattr(config, "architectures", None), getattr(config, "auto_map", None), config.num_labels, model
    )
    device = resolve_device(device)
    try:
        classifier, info = AutoModelForSequenceClassification.from_pretrained(
            model,
            revision=revision,
            trust_remote_code=trust_remote_code,
            dtype=resolve_dtype(dtype, device),
            output_loading_info=True,
        )
    except Exception as exc:
        raise RewardModelLoadError(f"cannot load the weights of reward {where} {model!r}: {exc}") from exc
    missing = sorted(info.get("missing_keys") or [])
    if missing:
        raise RewardModelLoadError(
            f"reward {where} {model!r} lacks trained weights for {', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''}: they would be random. Is it a trained reward model?"
        )
    tok = load_tokenizer(tokenizer or model, revision=None if tokenizer else revision, trust_remote_code=trust_remote_code)
    classifier.config.pad_token_id = tok.pad_token_id
    classifier.eval().to(device)
    return LoadedModel(classifier, tok, device, max_length or _default_max_length(tok, config))


def served_tokenizer(source: str, revision: str | None, max_length: int | None, trust_remote_code: bool) -> LoadedModel:
    """What a model on a server needs here: its tokenizer (to render rows as in process) and the input limit,
    no weights. ``max_length`` defaults to the tokenizer's, or the folder's ``max_position_embeddings``."""
    if is_local_reference(source):
        source = str(Path(source).expanduser())
    tok = load_tokenizer(source, revision=revision, trust_remote_code=trust_remote_code)
    positions = None
    config_file = Path(source) / "config.json"
    if config_file.is_file():
        with contextlib.suppress(OSError, ValueError, AttributeError):
            positions = json.loads(config_file.read_text(encoding="utf-8")).get("max_position_embeddings")
    config = SimpleNamespace(max_position_embeddings=positions)
    return LoadedModel(None, tok, "served", max_length or _default_max_length(tok, config))


def _default_max_length(tokenizer: Any, config: Any) -> int:
    limits = [getattr(config, "max_position_embeddings", None), getattr(tokenizer, "model_max_length", None)]
    usable = [int(n) for n in limits if isinstance(n, int) and 0 < n < 1_000_000]
    return min(usable) if usable else 2048
