"""Test your rewards the way trainers call them: the contract kit (``contract``, with the agent
episode probes of ``episodes``), YAML case files (``cases``, collected by the ``pytest_plugin``), and
tiny local models for end-to-end tests (``tiny_models``, ``tool_caller``; ``async_grpo`` runs TRL's
async rollout loop without vLLM; these import torch, transformers and TRL only when used).

    from rewardhub.testing import check_contract
    check_contract(rewardhub.get("my_reward"), columns={"solution": "10"})

A reward backed by an LLM judge also runs ``check_judge_master_keys`` (``judge_probes``): the published judge
master keys (":", "Thought process:", "Solution", ...) must score low; ``rewardhub check-judge`` measures an
endpoint itself.
"""

from .cases import load_case_file, run_case, run_cases
from .contract import (
    CONTRACT_EPISODE_PROBES,
    DEFAULT_PROBES,
    GAMING_PROBES,
    RELATION_PROBES,
    TEXT_PROBES,
    ContractReport,
    ContractViolation,
    Probe,
    check_contract,
)
from .episodes import EPISODE_PROBES, FORM_PROBES, EpisodeTask, check_episode_probes
from .judge_probes import JUDGE_MASTER_KEYS, MasterKeyReport, check_judge_master_keys

__all__ = [
    "CONTRACT_EPISODE_PROBES",
    "DEFAULT_PROBES",
    "EPISODE_PROBES",
    "FORM_PROBES",
    "GAMING_PROBES",
    "JUDGE_MASTER_KEYS",
    "TEXT_PROBES",
    "ContractReport",
    "ContractViolation",
    "MasterKeyReport",
    "Probe",
    "RELATION_PROBES",
    "EpisodeTask",
    "check_contract",
    "check_episode_probes",
    "check_judge_master_keys",
    "load_case_file",
    "run_case",
    "run_cases",
]
