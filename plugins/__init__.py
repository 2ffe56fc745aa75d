"""rewardhub: reward functions and verifiers for RL post-training, as pluggy plugins.

    import rewardhub
    rewards = rewardhub.load("rewards.yaml")       # -> RewardSet
    GRPOTrainer(..., reward_funcs=rewards.reward_funcs,
                args=GRPOConfig(..., reward_weights=rewards.reward_weights))
"""

from importlib import metadata as _metadata

from . import _moved
from ._aio import background_loop
from ._batch import Batch, Row, Score
from ._decorators import batch_reward, sample_reward
from ._files.output import write_rows
from ._manager import plugin_manager
from ._registry import Param, factory_params, get, list_rewards, registry
from ._reward import AsyncReward, BatchResult, Reward
from ._script import register
from ._set.by_group import evaluate_by_group, innermost_reward, needs_groups
from ._set.compose import RewardSet, SetResult, WeightedReward, load
from ._set.config import RewardEntry, SetConfig, read_config
from ._set.groups import GROUP_FIELD, group_key
from ._set.scorers import Gated as GatedReward
from .completions import completion_text
from .errors import (
    ConfigError,
    DuplicateRewardError,
    InfrastructureError,
    InputFileError,
    MissingColumnError,
    OutputFileError,
    PluginLoadError,
    RewardContractError,
    RewardhubError,
    RewardhubWarning,
    RewardInputError,
    RewardNotScoringWarning,
    UnknownRewardError,
    WorkerShortfallWarning,
    WorkerStartupError,
)
from .hookspecs import hookimpl

try:
    __version__ = _metadata.version("rewardhub")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

_moved.install()

__all__ = [
    "AsyncReward",
    "Batch",
    "BatchResult",
    "ConfigError",
    "DuplicateRewardError",
    "GROUP_FIELD",
    "GatedReward",
    "InfrastructureError",
    "InputFileError",
    "MissingColumnError",
    "OutputFileError",
    "PluginLoadError",
    "Reward",
    "RewardContractError",
    "RewardEntry",
    "RewardInputError",
    "RewardSet",
    "RewardhubError",
    "RewardhubWarning",
    "RewardNotScoringWarning",
    "Row",
    "Score",
    "SetConfig",
    "SetResult",
    "UnknownRewardError",
    "WeightedReward",
    "WorkerShortfallWarning",
    "WorkerStartupError",
    "background_loop",
    "batch_reward",
    "completion_text",
    "evaluate_by_group",
    "get",
    "group_key",
    "hookimpl",
    "list_rewards",
    "innermost_reward",
    "load",
    "needs_groups",
    "plugin_manager",
    "read_config",
    "register",
    "registry",
    "Param",
    "factory_params",
    "sample_reward",
    "write_rows",
]
