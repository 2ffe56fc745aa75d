"""Test your rewards the way trainers call them: the contract kit (``contract``, with the agent
episode probes of ``episodes``), YAML case files (``cases``, collected by the ``pytest_plugin``), and
tiny local models for end-to-end tests (``tiny_models``, ``tool_caller``; ``async_grpo`` runs TRL's
async rollout loop without vLLM; these import torch, transformers and TRL only when used).

    from rewardhub.testing import check_contract
    check_contract(rewardhub.get("my_reward"), columns={"solution": "10"})
"""

from .cases import load_case_file, run_case, run_cases
from .contract import (
    CONTRACT_EPISODE_PROBES,
    GAMING_PROBES,
    RELATION_PROBES,
    ContractReport,
    ContractViolation,
    Probe,
    check_contract,
)
from .episodes import EPISODE_PROBES, FORM_PROBES, EpisodeTask, check_episode_probes

__all__ = [
    "CONTRACT_EPISODE_PROBES",
    "EPISODE_PROBES",
    "FORM_PROBES",
    "GAMING_PROBES",
    "ContractReport",
    "ContractViolation",
    "Probe",
    "RELATION_PROBES",
    "EpisodeTask",
    "check_contract",
    "check_episode_probes",
    "load_case_file",
    "run_case",
    "run_cases",
]
