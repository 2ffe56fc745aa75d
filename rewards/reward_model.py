"""``reward_model``: score completions with a learned reward model (a one-label sequence classifier).

The model and tokenizer come from a local folder (e.g. one written by ``rewardhub train-rm``) or a
Hugging Face Hub id, and are loaded once per instance on first use, so building the reward stays cheap
and picklable. Inputs are rendered the way TRL's ``RewardTrainer`` trains on them (chat template for
conversational rows, ``prompt + completion + eos`` for plain text), sorted by token length and run in
batches (order restored), under ``torch.inference_mode``. Sequences longer than ``max_length`` keep
their last tokens: the start of the prompt is dropped first, then the start of the completion, so the
end of the completion (where the classifier reads its score) is always scored; the reason says so.
torch and transformers are imported only inside methods.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score
from rewardhub.completions import completion_text, is_conversational
from rewardhub.hookspecs import hookimpl

NORMALIZE_MODES = ("none", "fixed", "running")
DTYPES = ("auto", "float32", "bfloat16", "float16")


class RewardModelLoadError(ConfigError):
    """A reward model cannot be used: folder missing, not a one-label sequence classifier, no tokenizer."""


# ----- loading ------------------------------------------------------------------------------------
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


def _default_max_length(tokenizer: Any, config: Any) -> int:
    limits = [getattr(config, "max_position_embeddings", None), getattr(tokenizer, "model_max_length", None)]
    usable = [int(n) for n in limits if isinstance(n, int) and 0 < n < 1_000_000]
    return min(usable) if usable else 2048


# ----- rendering ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Encoded:
    """One scored sequence: its token ids (already truncated) and what truncation dropped."""

    ids: list[int]
    total: int
    dropped_prompt: int = 0
    dropped_completion: int = 0

    def truncation_note(self) -> str:
        if self.total == len(self.ids):
            return ""
        return (
            f"; truncated to the last {len(self.ids)} of {self.total} tokens, keeping the end of the completion "
            f"(dropped {self.dropped_prompt} prompt and {self.dropped_completion} completion tokens)"
        )


def _messages(prompt: Any, completion: Any, text: str) -> list[dict]:
    """The conversation to score: prompt messages (a plain prompt becomes a user turn) plus the completion."""
    if is_conversational(prompt):
        head = [dict(m) for m in prompt]
    elif prompt:
        head = [{"role": "user", "content": str(prompt)}]
    else:
        head = []
    if is_conversational(completion):
        return head + [dict(m) for m in completion]
    return head + [{"role": "assistant", "content": text}]


class Encoder:
    """Turns (prompt, completion) pairs into token ids the way ``RewardTrainer`` trained on them."""

    def __init__(self, tokenizer: Any, max_length: int, chat_template: bool | None, append_eos: bool):
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.chat_template = chat_template
        self.append_eos = append_eos

    def wants_chat(self, prompt: Any, completion: Any) -> bool:
        if self.chat_template is not None:
            return self.chat_template
        return is_conversational(prompt) or is_conversational(completion)

    def encode(self, prompt: Any, completion: Any, text: str) -> Encoded:
        """Token ids of one pair; raises ``ValueError`` with the per-row reason when it cannot be rendered."""
        if self.wants_chat(prompt, completion):
            ids, prompt_ids = self._chat_ids(prompt, completion, text)
        else:
            ids, prompt_ids = self._plain_ids(prompt, text)
        if not ids:
            raise ValueError("nothing to score: prompt and completion are empty")
        if len(ids) <= self.max_length:
            return Encoded(ids, len(ids))
        dropped = len(ids) - self.max_length
        prompt_len = _common_prefix(prompt_ids(), ids)
        return Encoded(ids[dropped:], len(ids), min(dropped, prompt_len), max(0, dropped - prompt_len))

    def _plain_ids(self, prompt: Any, text: str) -> tuple[list[int], Any]:
        if prompt is not None and not isinstance(prompt, str):
            hint = " (conversational rows need chat_template null or true)" if is_conversational(prompt) else ""
            raise ValueError(f"prompt is a {type(prompt).__name__}, not text{hint}")
        prefix = prompt or ""
        full = prefix + text
        eos = self.tokenizer.eos_token
        if self.append_eos and eos and not full.endswith(eos):
            full += eos
        ids = self.tokenizer(full)["input_ids"]
        return ids, lambda: self.tokenizer(prefix)["input_ids"] if prefix else []

    def _chat_ids(self, prompt: Any, completion: Any, text: str) -> tuple[list[int], Any]:
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("conversational row but the reward model's tokenizer has no chat template")
        if prompt is not None and not isinstance(prompt, str) and not is_conversational(prompt):
            raise ValueError(f"prompt is a {type(prompt).__name__}, neither text nor chat messages")
        messages = _messages(prompt, completion, text)
        ids = self._template(messages)
        head = messages[:-1] if not is_conversational(completion) else messages[: len(messages) - len(completion)]
        return ids, lambda: self._template(head, add_generation_prompt=True) if head else []

    def _template(self, messages: list[dict], add_generation_prompt: bool = False) -> list[int]:
        rendered = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=add_generation_prompt
        )
        return self.tokenizer(rendered, add_special_tokens=False)["input_ids"]


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


# ----- scoring ------------------------------------------------------------------------------------
def score_sequences(loaded: LoadedModel, sequences: Sequence[Sequence[int]], batch_size: int) -> list[float]:
    """Scalar scores of token sequences, run longest-first in length-sorted batches, in input order.

    Sorting puts sequences of similar length together, so padding wastes little compute; right padding
    with an attention mask keeps every row's score independent of its batch mates.
    """
    import torch

    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]), reverse=True)
    scores = [0.0] * len(sequences)
    pad_id = loaded.tokenizer.pad_token_id
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            input_ids, attention_mask = pad_right([sequences[i] for i in chunk], pad_id, loaded.device)
            logits = loaded.model(input_ids=input_ids, attention_mask=attention_mask).logits
            for i, value in zip(chunk, logits[:, 0].float().cpu().tolist(), strict=True):
                scores[i] = value
    return scores


def pad_right(sequences: Sequence[Sequence[int]], pad_id: int, device: str) -> tuple[Any, Any]:
    """Right-padded ``input_ids`` and ``attention_mask`` tensors for a list of token id lists."""
    import torch

    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, ids in enumerate(sequences):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention_mask[row, : len(ids)] = 1
    return input_ids.to(device), attention_mask.to(device)


class RunningStats:
    """Mean and standard deviation of every raw score seen so far (Welford's algorithm)."""

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self._m2 = 0.0

    def update(self, values: Sequence[float]) -> None:
        for x in values:
            self.count += 1
            delta = x - self.mean
            self.mean += delta / self.count
            self._m2 += delta * (x - self.mean)

    @property
    def std(self) -> float:
        """Sample standard deviation; 1.0 until two values were seen."""
        return math.sqrt(self._m2 / (self.count - 1)) if self.count > 1 else 1.0


class RewardModelReward(Reward):
    """Score each completion with a learned reward model; optional normalisation, sigmoid or margin."""

    name = "reward_model"
    description = "Learned reward model (one-label sequence classifier) from a local folder or hub id."

    def __init__(
        self,
        *,
        model: str,
        tokenizer: str | None = None,
        revision: str | None = None,
        batch_size: int = 16,
        max_length: int | None = None,
        device: str = "auto",
        dtype: str = "auto",
        chat_template: bool | None = None,
        append_eos: bool = True,
        normalize: str = "none",
        mean: float = 0.0,
        std: float = 1.0,
        sigmoid: bool = False,
        margin_column: str | None = None,
        trust_remote_code: bool = False,
        on_error: str = "none",
    ):
        """``model``: folder or hub id. ``normalize``: "none", "fixed" ((x - mean) / std) or "running"
        (running mean/std of the scores seen so far, after the margin). ``sigmoid`` squashes the (normalised) score to (0, 1).
        ``margin_column``: score minus the score of that column's reference completion for the same prompt.
        ``chat_template``: None applies it to conversational rows only, True to every row, False never.
        ``append_eos``: plain text gets the eos token appended, as ``RewardTrainer`` does when training.
        """
        super().__init__(on_error=on_error)
        if not model:
            raise ConfigError("reward_model needs `model`: a local model folder or a Hugging Face Hub id")
        if batch_size < 1:
            raise ConfigError(f"reward_model batch_size must be at least 1; got {batch_size}")
        if max_length is not None and max_length < 2:
            raise ConfigError(f"reward_model max_length must be at least 2 tokens; got {max_length}")
        if normalize not in NORMALIZE_MODES:
            raise ConfigError(f"reward_model normalize must be one of {', '.join(NORMALIZE_MODES)}; got {normalize!r}")
        if not std > 0:
            raise ConfigError(f"reward_model std must be positive; got {std}")
        if dtype not in DTYPES:
            raise ConfigError(f"reward_model dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
        if is_local_reference(model):
            check_model_folder(model)
        self.model = model
        self.tokenizer = tokenizer
        self.revision = revision
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.dtype = dtype
        self.chat_template = chat_template
        self.append_eos = append_eos
        self.normalize = normalize
        self.mean = mean
        self.std = std
        self.sigmoid = sigmoid
        self.margin_column = margin_column
        self.trust_remote_code = trust_remote_code
        self.stats = RunningStats()
        self._loaded: LoadedModel | None = None
        self._load_error: RewardModelLoadError | None = None
        self._load_lock = threading.Lock()

    def loaded(self) -> LoadedModel:
        """The model and tokenizer, loaded on first use (once per instance, thread-safe).

        A failed load is remembered and re-raised, so a bad model costs one attempt per process, not
        one per batch (or per row, when the base retries rows one by one).
        """
        if self._loaded is None:
            with self._load_lock:
                if self._load_error is not None:
                    raise self._load_error
                if self._loaded is None:
                    try:
                        self._loaded = self._load()
                    except RewardModelLoadError as exc:
                        self._load_error = exc
                        raise
        return self._loaded

    def _load(self) -> LoadedModel:
        return load_reward_model(
            self.model,
            tokenizer=self.tokenizer,
            revision=self.revision,
            device=self.device,
            dtype=self.dtype,
            max_length=self.max_length,
            trust_remote_code=self.trust_remote_code,
        )

    def score_batch(self, batch: Batch) -> list[Any]:
        references = batch.column(self.margin_column) if self.margin_column else None
        loaded = self.loaded()
        encoder = Encoder(loaded.tokenizer, loaded.max_length, self.chat_template, self.append_eos)
        outcomes: list[Any] = [None] * len(batch)
        pairs: dict[int, tuple[Encoded, Encoded | None]] = {}
        for i, text in enumerate(batch.texts):
            if text is None:
                continue  # the base abstains with the reason
            try:
                pairs[i] = (
                    encoder.encode(batch.prompts[i], batch.completions[i], text),
                    None if references is None else self._encode_reference(encoder, batch.prompts[i], references[i]),
                )
            except ValueError as exc:
                outcomes[i] = Score(None, str(exc))
        sequences = [enc.ids for enc, _ in pairs.values()]
        sequences += [ref.ids for _, ref in pairs.values() if ref is not None]
        raw = iter(score_sequences(loaded, sequences, self.batch_size))
        scored = {i: next(raw) for i in pairs}
        reference_scores = {i: next(raw) for i, (_, ref) in pairs.items() if ref is not None}
        values = {i: scored[i] - reference_scores.get(i, 0.0) for i in pairs}
        finals = self._transform(list(values.values()))
        for (i, (enc, ref)), value in zip(pairs.items(), finals, strict=True):
            reason = f"reward model score {scored[i]:.4g}{enc.truncation_note()}"
            if ref is not None:
                reason += f"; minus reference score {reference_scores[i]:.4g}{ref.truncation_note()}"
            outcomes[i] = Score(value, reason)
        return outcomes

    def _encode_reference(self, encoder: Encoder, prompt: Any, reference: Any) -> Encoded:
        if reference is None:
            raise ValueError(f"no reference completion in column {self.margin_column!r}")
        if isinstance(reference, str):
            text = reference
        elif is_conversational(reference) or isinstance(reference, Mapping):
            text = completion_text(reference)
        else:
            raise ValueError(f"reference in column {self.margin_column!r} is a {type(reference).__name__}, not text")
        return encoder.encode(prompt, reference, text)

    def _transform(self, values: list[float]) -> list[float]:
        """Normalisation (fixed or running statistics), then the optional sigmoid."""
        if self.normalize == "fixed":
            values = [(v - self.mean) / self.std for v in values]
        elif self.normalize == "running":
            self.stats.update(values)
            std = self.stats.std if self.stats.std > 0 else 1.0
            values = [(v - self.stats.mean) / std for v in values]
        if self.sigmoid:
            values = [_sigmoid(v) for v in values]
        return values

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_loaded"] = state["_load_error"] = None  # each process loads its own copy on first use
        state.pop("_load_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._load_lock = threading.Lock()


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


@hookimpl
def register_rewards(register):
    register(RewardModelReward)


__all__ = [
    "LoadedModel",
    "RewardModelLoadError",
    "RewardModelReward",
    "RunningStats",
    "load_reward_model",
    "load_tokenizer",
    "score_sequences",
]
