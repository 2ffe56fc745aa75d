"""The ``code`` family: a row's tests in a form checked outside the solution (``suites``), the
programs run around a solution in the sandbox (``harness``), and the reward (``reward``)."""

from .reward import CodeReward, extract_program, outputs_match
from .suites import CallCase, Suite, UnusableTestsError, parse_tests

__all__ = ["CallCase", "CodeReward", "Suite", "UnusableTestsError", "extract_program", "outputs_match", "parse_tests"]
