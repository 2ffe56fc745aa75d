"""``reward_model``: score completions with a learned reward model (a one-label sequence classifier).

The model and tokenizer come from a local folder (e.g. one written by ``rewardhub train-rm``) or a
Hugging Face Hub id, and are loaded once per instance on first use, so building the reward stays cheap
and picklable. Inputs are rendered the way TRL's ``RewardTrainer`` trains on them (chat template for
conversational rows, ``prompt + completion + eos`` for plain text), sorted by token length and run in
batches (order restored), under ``torch.inference_mode``. Sequences longer than ``max_length`` keep
their last tokens: the start of the prompt is dropped first, then the start of the completion, so the
end of the completion (where the classifier reads its score) is always scored; the reason says so.
torch and transformers are imported only inside methods.

With ``base_url`` the model is not loaded: rows are encoded the same way with its tokenizer and sent
as token ids to an inference server (``served``: vLLM's ``/classify``, SGLang's, OpenRLHF's serve_rm),
so the scores equal the in-process ones; a server that cannot answer makes its rows abstain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl
from rewardhub.completions import completion_text, is_conversational
from rewardhub.rewards.judge.prompt import prompt_text

from .encoding import Encoded, Encoder, score_sequences, sigmoid
from .lazy import LazyModel
from .loading import (
    DTYPES,
    LoadedModel,
    check_model_folder,
    is_local_reference,
    load_reward_model,
    served_tokenizer,
)
from .served import ServedModel, Unscored

__all__ = ["NORMALIZE_MODES", "RewardModelReward", "RunningStats", "register_rewards"]

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
        base_url: str | None = None,
        api: str = "vllm",
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 4,
        deadline: float | None = 300.0,
        on_error: str = "none",
    ):
        """``model``: folder or hub id, or with ``base_url`` the served model's name (its tokenizer comes from
        ``tokenizer``, else from ``model`` as a folder or hub id). ``normalize``: "none", "fixed" ((x - mean) / std) or "running"
        (running mean/std of the scores seen so far, after the margin). ``sigmoid`` squashes the (normalised) score to (0, 1).
        ``margin_column``: score minus the score of that column's reference completion for the same prompt.
        ``chat_template``: None applies it to conversational rows only, True to every row, False never.
        ``append_eos``: plain text gets the eos token appended, as ``RewardTrainer`` does when training.
        ``base_url``: an inference server's OpenAI base URL (``http://host:8000/v1``); ``api``: its request
        shape (``vllm``, ``sglang``, ``openrlhf``); ``concurrency``, ``timeout``, ``max_retries`` and
        ``deadline`` (seconds per batch) bound its requests as the judge's.
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
        if is_local_reference(model) and base_url is None:
            check_model_folder(model)
        self.served = None if base_url is None else ServedModel(
            "reward_model", base_url=base_url, model=model, api=api, api_key_env=api_key_env, batch_size=batch_size,
            concurrency=concurrency, timeout=timeout, max_retries=max_retries, deadline=deadline)
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
        if self.served is not None:
            return served_tokenizer(self.tokenizer or self.model, self.revision, self.max_length, self.trust_remote_code)
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
        encoded = [enc for enc, _ in pairs.values()] + [ref for _, ref in pairs.values() if ref is not None]
        prompts = [batch.prompts[i] for i in pairs] + [batch.prompts[i] for i, (_, ref) in pairs.items() if ref is not None]
        raw = iter(self._raw_scores(loaded, encoded, prompts))
        scored = {i: next(raw) for i in pairs}
        reference_scores = {i: next(raw) for i, (_, ref) in pairs.items() if ref is not None}
        for i in list(pairs):
            unscored = next((v for v in (scored[i], reference_scores.get(i)) if isinstance(v, Unscored)), None)
            if unscored is not None:  # the server did not answer: the row abstains, never a 0
                outcomes[i] = Score(None, str(unscored), None, "timeout" if unscored.timed_out else "error")
                del pairs[i]
        values = {i: scored[i] - reference_scores.get(i, 0.0) for i in pairs}
        finals = self._transform(list(values.values()))
        for (i, (enc, ref)), value in zip(pairs.items(), finals, strict=True):
            reason = f"reward model score {scored[i]:.4g}{enc.truncation_note()}"
            if ref is not None:
                reason += f"; minus reference score {reference_scores[i]:.4g}{ref.truncation_note()}"
            outcomes[i] = Score(value, reason)
        return outcomes

    def _raw_scores(self, loaded: LoadedModel, encoded: list[Encoded], prompts: list[Any]) -> list[float | Unscored]:
        """The model's raw score of each sequence: in process, or from the server (``Unscored`` where it failed)."""
        sequences = [enc.ids for enc in encoded]
        if self.served is None:
            return score_sequences(loaded, sequences, self.batch_size)
        texts, shown = [], []
        if self.served.api == "openrlhf":  # serve_rm reads text and appends its own EOS
            eos = loaded.tokenizer.eos_token or ""
            texts = [loaded.tokenizer.decode(ids).removesuffix(eos) if self.append_eos else loaded.tokenizer.decode(ids)
                     for ids in sequences]
            shown = [prompt_text(p) if p is not None else "" for p in prompts]
        return self.served.sequence_scores(sequences, texts, shown)

    def close(self) -> None:
        """Release the server's HTTP client (a later batch opens it again)."""
        if self.served is not None:
            self.served.close()

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
            values = [sigmoid(v) for v in values]
        return values


@hookimpl
def register_rewards(register):
    register(RewardModelReward)
