"""Test your rewards the way trainers call them: the contract kit (``contract``), YAML case files
(``cases``, collected by the ``pytest_plugin``), and tiny local models for end-to-end tests
(``tiny_models``: imports torch and transformers only when used).

    from rewardhub.testing import check_contract
    check_contract(rewardhub.get("my_reward"), columns={"solution": "10"})
"""

from .cases import load_case_file, run_case, run_cases
from .contract import GAMING_PROBES, ContractReport, ContractViolation, Probe, check_contract

__all__ = [
    "GAMING_PROBES",
    "ContractReport",
    "ContractViolation",
    "Probe",
    "check_contract",
    "load_case_file",
    "run_case",
    "run_cases",
]
