"""pytest plugin (entry point ``pytest11``): collect rewardhub case files and run each case as a test.

Files matching ``rewardhub_cases`` (ini option, default ``*.cases.yaml *.cases.yml``) are collected;
every case becomes one test item named after the case. Fixtures for plugin authors:
``reward_contract`` (:func:`rewardhub.testing.check_contract`) and ``rewardhub_registry`` (the
installed rewards, where a test may register its own; they are removed after the test).
"""

from __future__ import annotations

import fnmatch

import pytest

__all__ = [
    "CaseFailed",
    "CaseFile",
    "CaseItem",
    "DEFAULT_PATTERNS",
    "pytest_addoption",
    "pytest_collect_file",
    "reward_contract",
    "rewardhub_registry",
]

DEFAULT_PATTERNS = "*.cases.yaml *.cases.yml"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("rewardhub_cases", "glob patterns of rewardhub case files to collect", default=DEFAULT_PATTERNS)


def pytest_collect_file(parent: pytest.Collector, file_path):
    patterns = str(parent.config.getini("rewardhub_cases")).split()
    if any(fnmatch.fnmatch(file_path.name, pattern) for pattern in patterns):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    """A YAML case file; its cases are the test items."""

    def collect(self):
        from ..errors import RewardhubError
        from .cases import load_case_file

        try:
            cases = load_case_file(self.path)
        except RewardhubError as exc:  # the message says what is wrong; a traceback into rewardhub would not
            raise self.CollectError(str(exc)) from None
        for case in cases:
            yield CaseItem.from_parent(self, name=case.name, case=case)


class CaseFailed(AssertionError):
    """A case's reward value or reason did not match its expectation."""


class CaseItem(pytest.Item):
    """One case of a case file."""

    def __init__(self, *, case, **kwargs):
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        from .cases import run_case

        result = run_case(self.case)
        if not result.passed:
            raise CaseFailed("\n".join(result.failures))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return f"case {self.case.name!r} failed:\n{excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"rewardhub case: {self.case.name}"


@pytest.fixture
def reward_contract():
    """The contract kit: ``reward_contract(reward, columns={...})`` raises on any violation."""
    from .contract import check_contract

    return check_contract


@pytest.fixture
def rewardhub_registry():
    """The registry, isolated for one test: rewards it registers (``rewardhub_registry.add(factory)``) are
    gone afterwards, and a name it replaces (``replace=True``) gets its original back."""
    from .._registry import registry

    with registry.isolated() as isolated:
        yield isolated
