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

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl
from rewardhub.completions import completion_text, is_conversational

from .encoding import Encoded, Encoder, score_sequences
from .lazy import LazyModel
from .loading import (
    DTYPES,
    LoadedModel,
    check_model_folder,
    is_local_reference,
    load_reward_model,
)

NORMALIZE_MODES = ("none", "fixed", "running")


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


class RewardModelReward(LazyModel, Reward):
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


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


@hookimpl
def register_rewards(register):
    register(RewardModelReward)
