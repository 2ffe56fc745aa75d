"""``process_reward``: step-level scores from a process reward model (PRM), aggregated per completion.

The completion is split into steps at ``separator`` (blank lines by default); each step is followed by
``step_tag``, and the model reads a score at each tag, as PRMs are trained:

- ``head: token_classification``: a ``*ForTokenClassification`` model (Qwen2.5-Math-PRM style, tag
  ``<extra_0>``); the step's score is the probability of label ``positive_label`` at the tag (the
  sigmoid of the logit for a one-label head);
- ``head: step_tag``: a causal LM (Math-Shepherd style, tag `` ки``) whose next-token logits at the tag
  compare ``good_token`` with ``bad_token``; the step's score is the good token's probability of the two.

Step scores are aggregated by ``min`` (the weakest step, the usual choice), ``mean``, ``last`` or
``product``; the reason lists them. The tag's position is found from the tokenizer's character
offsets, so a tag of several tokens works too. A completion too long for the model loses its prompt
first; if a step would still be cut off, the row abstains rather than skip a step. The model loads on
first use from a local folder or hub id; torch and transformers are imported only inside.

With ``base_url`` (a token-classification head only) the model is not loaded: the same token ids go to
vLLM's ``/pooling`` (``task: token_classify``) and the step scores are computed from the raw per-token
logits it returns, as in process; a server that cannot answer makes its rows abstain.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl

from .encoding import pad_right, sigmoid
from .lazy import LazyModel
from .loading import (
    DTYPES,
    RewardModelLoadError,
    is_local_reference,
    load_tokenizer,
    resolve_device,
    resolve_dtype,
    served_tokenizer,
)
from .served import ServedModel, Unscored

__all__ = [
    "AGGREGATES",
    "HEADS",
    "LoadedPRM",
    "ProcessReward",
    "StepInput",
    "aggregate",
    "check_prm_folder",
    "register_rewards",
    "split_steps",
]

HEADS = {"token_classification": "ForTokenClassification", "step_tag": "ForCausalLM"}
AGGREGATES = ("min", "mean", "last", "product")
_SENTINEL = "\x00rewardhub-steps\x00"


@dataclass
class LoadedPRM:
    model: Any
    tokenizer: Any
    device: str
    max_length: int
    candidates: tuple[int, int] | None  # (good, bad) token ids for the step_tag head


@dataclass(frozen=True)
class StepInput:
    ids: list[int]
    positions: list[int]  # token index of each step's tag
    note: str


class ProcessReward(LazyModel, Reward):
    """Scores each step of a completion with a process reward model; aggregates by min, mean, last or product."""

    name = "process_reward"
    description = "Process reward model: a score per reasoning step (token classification or step-tag head), aggregated"

    def __init__(
        self,
        *,
        model: str,
        head: str = "token_classification",
        separator: str = "\n\n",
        step_tag: str = "<extra_0>",
        aggregate: str = "min",
        positive_label: int = 1,
        good_token: str = "+",
        bad_token: str = "-",
        chat_template: bool = False,
        tokenizer: str | None = None,
        revision: str | None = None,
        batch_size: int = 8,
        max_length: int | None = None,
        device: str = "auto",
        dtype: str = "auto",
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
        """``base_url``: score on an inference server (vLLM's ``/pooling``; ``model`` is the served name, the
        tokenizer comes from ``tokenizer`` or ``model``); ``concurrency``, ``timeout``, ``max_retries`` and
        ``deadline`` bound its requests. The other params are the in-process ones (see the module)."""
        super().__init__(on_error=on_error)
        if not model:
            raise ConfigError("process_reward needs `model`: a local model folder or a Hugging Face Hub id")
        for param, value, allowed in (("head", head, tuple(HEADS)), ("aggregate", aggregate, AGGREGATES),
                                      ("dtype", dtype, DTYPES)):
            if value not in allowed:
                raise ConfigError(f"process_reward {param} must be one of {', '.join(allowed)}; got {value!r}")
        if not separator or not step_tag:
            raise ConfigError("process_reward separator and step_tag must be non-empty text")
        if batch_size < 1 or (max_length is not None and max_length < 2):
            raise ConfigError(f"process_reward batch_size must be >= 1 and max_length >= 2; got {batch_size}, {max_length}")
        if base_url is not None and head != "token_classification":
            raise ConfigError(f"process_reward on a server (base_url) needs head 'token_classification' (vLLM's "
                              f"token_classify pooling); head {head!r} is scored in process only")
        if is_local_reference(model) and base_url is None:
            check_prm_folder(model, head)
        self.served = None if base_url is None else ServedModel(
            "process_reward", base_url=base_url, model=model, api=api, api_key_env=api_key_env, batch_size=batch_size,
            concurrency=concurrency, timeout=timeout, max_retries=max_retries, deadline=deadline)
        self.model, self.head, self.separator, self.step_tag = model, head, separator, step_tag
        self.aggregate, self.positive_label = aggregate, positive_label
        self.good_token, self.bad_token, self.chat_template = good_token, bad_token, chat_template
        self.tokenizer, self.revision, self.batch_size, self.max_length = tokenizer, revision, batch_size, max_length
        self.device, self.dtype, self.trust_remote_code = device, dtype, trust_remote_code

    # ----- loading --------------------------------------------------------------------------------------------
    def _load(self) -> LoadedPRM:
        import transformers

        if self.served is not None:
            loaded = served_tokenizer(self.tokenizer or self.model, self.revision, self.max_length,
                                      self.trust_remote_code)
            if not getattr(loaded.tokenizer, "is_fast", False):
                raise RewardModelLoadError("process_reward needs a fast tokenizer (character offsets); "
                                           f"{self.tokenizer or self.model!r} has none")
            return LoadedPRM(None, loaded.tokenizer, "served", loaded.max_length, None)
        source = str(Path(self.model).expanduser()) if is_local_reference(self.model) else self.model
        auto = getattr(transformers, "AutoModel" + HEADS[self.head])
        device = resolve_device(self.device)
        try:
            model, info = auto.from_pretrained(source, revision=self.revision, trust_remote_code=self.trust_remote_code,
                                               dtype=resolve_dtype(self.dtype, device), output_loading_info=True)
        except Exception as exc:
            raise RewardModelLoadError(f"cannot load process reward model {source!r}: {exc}") from exc
        missing = sorted(info.get("missing_keys") or [])
        if missing:
            raise RewardModelLoadError(f"process reward model {source!r} lacks trained weights for "
                                       f"{', '.join(missing[:5])}: its step scores would be random")
        tok = load_tokenizer(self.tokenizer or source, revision=None if self.tokenizer else self.revision,
                             trust_remote_code=self.trust_remote_code)
        if not getattr(tok, "is_fast", False):
            raise RewardModelLoadError(f"process_reward needs a fast tokenizer (character offsets); {source!r} has none")
        candidates = None
        if self.head == "step_tag":
            candidates = (_single_token(tok, self.good_token, "good_token"), _single_token(tok, self.bad_token, "bad_token"))
        elif self.positive_label >= max(model.config.num_labels, 2) or self.positive_label < 0:
            raise RewardModelLoadError(f"positive_label {self.positive_label} is no label of {source!r} "
                                       f"({model.config.num_labels} labels)")
        model.eval().to(device)
        limit = [n for n in (getattr(model.config, "max_position_embeddings", None), tok.model_max_length)
                 if isinstance(n, int) and 0 < n < 1_000_000]
        return LoadedPRM(model, tok, device, self.max_length or (min(limit) if limit else 2048), candidates)

    # ----- scoring --------------------------------------------------------------------------------------------
    def score_batch(self, batch: Batch) -> list[Any]:
        loaded = self.loaded()
        outcomes: list[Any] = [None] * len(batch)
        inputs: dict[int, tuple[StepInput, list[str]]] = {}
        for i, text in enumerate(batch.texts):
            if text is None:
                continue
            steps = split_steps(text, self.separator)
            if not steps:
                outcomes[i] = Score(None, "no steps in the completion")
                continue
            encoded = self._encode(loaded, batch.prompts[i], steps)
            if isinstance(encoded, str):
                outcomes[i] = Score(None, encoded)
                continue
            inputs[i] = (encoded, steps)
        encoded = [enc for enc, _ in inputs.values()]
        step_scores = self._step_scores(loaded, encoded) if self.served is None else self._served_step_scores(encoded)
        for (i, (enc, _)), scores in zip(inputs.items(), step_scores, strict=True):
            if isinstance(scores, Unscored):  # the server did not answer: the row abstains, never a 0
                outcomes[i] = Score(None, str(scores), None, "timeout" if scores.timed_out else "error")
                continue
            value = aggregate(scores, self.aggregate)
            shown = ", ".join(f"{s:.3f}" for s in scores[:16]) + (", ..." if len(scores) > 16 else "")
            outcomes[i] = Score(value, f"{len(scores)} step(s): {shown} -> {self.aggregate} {value:.3f}{enc.note}")
        return outcomes

    def _encode(self, loaded: LoadedPRM, prompt: Any, steps: list[str]) -> StepInput | str:
        """Token ids with each step's tag position; a reason instead when a step would be cut off."""
        prefix, suffix = self._frame(loaded.tokenizer, prompt)
        text, tag_ends = prefix, []
        for step in steps:
            text += step + self.step_tag
            tag_ends.append(len(text))
        text += suffix
        encoding = loaded.tokenizer(text, return_offsets_mapping=True, add_special_tokens=not self.chat_template)
        ids, offsets = encoding["input_ids"], encoding["offset_mapping"]
        positions, k = [], 0
        for tag_end in tag_ends:  # the token holding the tag's last character (special tokens hold none)
            while k < len(offsets) and (offsets[k][1] <= offsets[k][0] or offsets[k][1] < tag_end):
                k += 1
            positions.append(min(k, len(ids) - 1))
        note = ""
        if len(ids) > loaded.max_length:
            cut = len(ids) - loaded.max_length
            if positions[0] < cut:
                return (f"too long for the model: {len(ids)} tokens > max_length {loaded.max_length}, and cutting the "
                        f"prompt is not enough to keep every step")
            ids, positions = ids[cut:], [p - cut for p in positions]
            note = f" (the prompt's first {cut} tokens dropped to fit max_length {loaded.max_length})"
        return StepInput(list(ids), positions, note)

    def _frame(self, tokenizer: Any, prompt: Any) -> tuple[str, str]:
        """The text before and after the steps: the chat template around them, or the prompt and a newline."""
        from rewardhub.rewards.judge.prompt import prompt_text

        if self.chat_template:
            messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt_text(prompt or "")}]
            rendered = tokenizer.apply_chat_template([*messages, {"role": "assistant", "content": _SENTINEL}],
                                                     tokenize=False)
            before, _, after = rendered.partition(_SENTINEL)
            return before, after
        text = prompt_text(prompt) if prompt else ""
        return (text + "\n" if text else ""), ""

    def _step_scores(self, loaded: LoadedPRM, inputs: list[StepInput]) -> list[list[float]]:
        import torch

        order = sorted(range(len(inputs)), key=lambda i: len(inputs[i].ids), reverse=True)
        results: list[list[float]] = [[] for _ in inputs]
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                input_ids, mask = pad_right([inputs[i].ids for i in chunk], loaded.tokenizer.pad_token_id, loaded.device)
                logits = loaded.model(input_ids=input_ids, attention_mask=mask).logits.float()
                for row, i in enumerate(chunk):
                    at = logits[row, inputs[i].positions]
                    if loaded.candidates is not None:
                        probs = at[:, list(loaded.candidates)].softmax(-1)[:, 0]
                    elif at.shape[-1] == 1:
                        probs = at[:, 0].sigmoid()
                    else:
                        probs = at.softmax(-1)[:, self.positive_label]
                    results[i] = probs.cpu().tolist()
        return results


    def _served_step_scores(self, inputs: list[StepInput]) -> list[list[float] | Unscored]:
        """Step scores from the server's raw per-token logits, read at the tags as in process."""
        results: list[list[float] | Unscored] = []
        for enc, logits in zip(inputs, self.served.token_logits([enc.ids for enc in inputs]), strict=True):
            if isinstance(logits, Unscored):
                results.append(logits)
                continue
            at = [logits[p] for p in enc.positions]
            if len(at[0]) == 1:
                results.append([sigmoid(row[0]) for row in at])
            elif self.positive_label < len(at[0]):
                results.append([_softmax(row)[self.positive_label] for row in at])
            else:
                results.append(Unscored(f"positive_label {self.positive_label} is no label of the served model "
                                        f"({len(at[0])} labels)"))
        return results

    def close(self) -> None:
        """Release the server's HTTP client (a later batch opens it again)."""
        if self.served is not None:
            self.served.close()


def _softmax(row: list[float]) -> list[float]:
    top = max(row)
    weights = [math.exp(v - top) for v in row]
    total = sum(weights)
    return [w / total for w in weights]


def split_steps(text: str, separator: str) -> list[str]:
    """The completion's steps: split at ``separator``, each stripped, empty ones dropped."""
    return [step.strip() for step in text.split(separator) if step.strip()]


def aggregate(scores: list[float], how: str) -> float:
    if how == "min":
        return min(scores)
    if how == "mean":
        return sum(scores) / len(scores)
    if how == "last":
        return scores[-1]
    return math.prod(scores)


def check_prm_folder(model: str, head: str) -> None:
    """Fail at construction, naming the path, when a local folder is missing or holds no model for ``head``."""
    path = Path(model).expanduser()
    config_file = path / "config.json"
    if not config_file.is_file():
        raise RewardModelLoadError(f"process reward model folder {str(path)!r} does not exist or has no config.json")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RewardModelLoadError(f"cannot read {str(config_file)!r}: {exc}") from exc
    architectures = list(config.get("architectures") or [])
    remote = any(name.startswith("AutoModel") for name in config.get("auto_map") or {})
    if not remote and not any(str(a).endswith(HEADS[head]) for a in architectures):
        other = next((h for h, suffix in HEADS.items() if any(str(a).endswith(suffix) for a in architectures)), None)
        hint = f"; it is a {other} model: set head: {other}" if other else ""
        raise RewardModelLoadError(f"{str(path)!r} holds {architectures or 'no architecture'}, not a *{HEADS[head]} "
                                   f"model for head {head!r}{hint}")


def _single_token(tokenizer: Any, token: str, param: str) -> int:
    ids = tokenizer.encode(token, add_special_tokens=False)
    if len(ids) != 1:
        raise RewardModelLoadError(f"process_reward {param} {token!r} is {len(ids)} tokens for this tokenizer; it must be one")
    return ids[0]


@hookimpl
def register_rewards(register):
    register(ProcessReward)
