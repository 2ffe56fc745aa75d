"""Tiny models and tokenizers built locally for tests and examples (nothing needs downloading).

A byte-level BPE tokenizer trained on generated text (every byte is in the alphabet, so any string
round-trips) with ChatML special tokens and a chat template, plus 2-layer Qwen2 models with a hidden
size of 32 built from it. Each ``make_*`` function writes a folder that ``from_pretrained`` loads and
returns its path; model folders also hold the tokenizer, as a hub checkpoint does, so a folder can
be handed to TRL trainers as is. Reload the tokenizer with ``load_tokenizer`` (``AutoTokenizer`` may
pick a class from the model type; the tokenizer uses Qwen2's pre-tokeniser so that ``Qwen2Tokenizer``,
which ``AutoTokenizer`` picks for a model folder, produces the same tokens).

    tok_dir = make_tokenizer(tmp_path / "tok")
    lm_dir = make_causal_lm(tmp_path / "lm")          # Qwen2ForCausalLM
    rm_dir = make_seq_classifier(tmp_path / "rm")     # Qwen2ForSequenceClassification, num_labels=1

Plugin authors can use them to test model-based rewards offline, the way rewardhub's own tests do.
torch, transformers and tokenizers are imported only inside the functions.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

__all__ = [
    "CHAT_TEMPLATE",
    "IM_END",
    "IM_START",
    "PAD",
    "QWEN2_PRETOKENIZE_REGEX",
    "SPECIAL_TOKENS",
    "load_tokenizer",
    "make_causal_lm",
    "make_seq_classifier",
    "make_token_classifier",
    "make_tokenizer",
    "qwen2_config",
    "tiny_chat_model",
    "training_text",
]

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
PAD = "<pad>"
SPECIAL_TOKENS = [PAD, IM_START, IM_END]

QWEN2_PRETOKENIZE_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_WORDS = (
    "the a an of to and in is it that for on with as was at by be this from or have not are but what all "
    "were when we there can been has more if will one about up out do so which their time into only "
    "answer question think solve step number sum equal good bad great poor yes no true false because "
    "first second then finally result code python def return print value list string error test pass"
).split()


def training_text(n_lines: int = 400, seed: int = 0) -> list[str]:
    """Generated text for the tokenizer: words, digits, punctuation, maths and ChatML-shaped lines."""
    rng = random.Random(seed)
    lines = []
    for i in range(n_lines):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12)))
        a, b = rng.randint(0, 999), rng.randint(0, 999)
        lines.append(f"{words.capitalize()}. {a} + {b} = {a + b}; x_{i % 10}^2 \\boxed{{{a * b}}}!")
    lines.append("".join(chr(c) for c in range(32, 127)))
    return lines


def make_tokenizer(path: str | Path, *, vocab_size: int = 384) -> Path:
    """Train a byte-level BPE tokenizer, wrap it in ``PreTrainedTokenizerFast`` and save it to ``path``."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    # Qwen2's normaliser and pre-tokeniser: ``AutoTokenizer`` maps model type qwen2 to ``Qwen2Tokenizer``,
    # which rebuilds the pipeline from vocab and merges; matching it keeps both loaders' tokens identical.
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(training_text(), trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=IM_END,
        pad_token=PAD,
        bos_token=None,
        unk_token=None,
        additional_special_tokens=[IM_START],
        model_max_length=512,
    )
    wrapped.chat_template = CHAT_TEMPLATE
    path = Path(path)
    wrapped.save_pretrained(path)
    return path


def load_tokenizer(path: str | Path) -> Any:
    """Reload a tokenizer saved by this module (always as ``PreTrainedTokenizerFast``)."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(path))


def qwen2_config(tokenizer: Any, **overrides: Any) -> Any:
    """A 2-layer Qwen2 config with hidden size 32 matching ``tokenizer``'s vocabulary and special tokens."""
    from transformers import Qwen2Config

    settings: dict[str, Any] = dict(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    settings.update(overrides)
    return Qwen2Config(**settings)


def _save_model(model_class_name: str, path: str | Path, seed: int, config_overrides: dict[str, Any]) -> Path:
    import torch
    import transformers

    path = Path(path)
    make_tokenizer(path)
    tokenizer = load_tokenizer(path)
    torch.manual_seed(seed)
    model = getattr(transformers, model_class_name)(qwen2_config(tokenizer, **config_overrides))
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path)
    return path


def make_causal_lm(path: str | Path, *, seed: int = 0, **config_overrides: Any) -> Path:
    """A random 2-layer ``Qwen2ForCausalLM`` with its tokenizer, saved to ``path``."""
    return _save_model("Qwen2ForCausalLM", path, seed, config_overrides)


def make_seq_classifier(path: str | Path, *, seed: int = 0, **config_overrides: Any) -> Path:
    """A random 2-layer ``Qwen2ForSequenceClassification`` (one label) with its tokenizer, saved to ``path``."""
    return _save_model("Qwen2ForSequenceClassification", path, seed, {"num_labels": 1, **config_overrides})


def make_token_classifier(path: str | Path, *, seed: int = 0, num_labels: int = 2, **config_overrides: Any) -> Path:
    """A random 2-layer ``Qwen2ForTokenClassification`` (a process reward model's shape) with its tokenizer."""
    return _save_model("Qwen2ForTokenClassification", path, seed, {"num_labels": num_labels, **config_overrides})


def tiny_chat_model(seed: int = 0, path: str | Path | None = None) -> tuple[Any, Any]:
    """A random tiny ``Qwen2ForCausalLM`` and its tokenizer, loaded back through ``from_pretrained``.

    The folder (``path``, by default a new temporary one) is kept: the model's ``name_or_path`` points
    there, and trainers reload from it (TRL's ``DPOTrainer`` builds its reference model that way).
    """
    import tempfile

    from transformers import AutoModelForCausalLM

    folder = make_causal_lm(Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="rewardhub-tiny-")) / "lm",
                            seed=seed)
    return AutoModelForCausalLM.from_pretrained(folder), load_tokenizer(folder)
