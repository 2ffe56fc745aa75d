"""The ``reward_model`` family: load a learned reward model (``loading``), encode pairs (``encoding``), score (``reward``)."""

from .encoding import Encoded, Encoder, score_sequences
from .loading import LoadedModel, RewardModelLoadError, load_reward_model, load_tokenizer
from .reward import RewardModelReward, RunningStats

__all__ = [
    "Encoded",
    "Encoder",
    "LoadedModel",
    "RewardModelLoadError",
    "RewardModelReward",
    "RunningStats",
    "load_reward_model",
    "load_tokenizer",
    "score_sequences",
]
