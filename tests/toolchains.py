"""The sandbox languages beyond Python and C, as test parameters skipped (saying which package to install)
where this machine lacks the toolchain; ``scripts/setup.sh`` installs them."""

from __future__ import annotations

import pytest

from rewardhub.sandbox.languages import toolchain_problem

COMPILED = ("java", "go", "rust", "javascript")


def languages(*names: str) -> list:
    """``pytest.param`` per language (all of ``COMPILED`` by default), skipped where its toolchain is missing."""
    return [pytest.param(name, marks=pytest.mark.skipif(toolchain_problem(name) is not None,
                                                        reason=toolchain_problem(name) or ""))
            for name in names or COMPILED]
