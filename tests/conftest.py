"""Shared test setup: one torch/BLAS thread (2-core machines), and registry snapshots for tests."""

import contextlib
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

import rewardhub  # noqa: E402

# Property tests draw the same examples on every run and have no per-example deadline: a run passes or
# fails by the code, never by the seed or a busy machine. HYPOTHESIS_PROFILE=explore draws fresh examples
# on each run, to hunt for new failures (one it finds becomes a fixed test case).
settings.register_profile("suite", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("explore", deadline=None, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


@contextlib.contextmanager
def restored_registry(with_core_rewards: bool):
    """The filled registry, optionally with tests/core_rewards.py added; restored on exit."""
    with rewardhub.registry.isolated() as registry:
        if with_core_rewards:
            import core_rewards

            core_rewards.register_all(registry)
        yield registry


@pytest.fixture
def clean_registry():
    """Let a test register its own rewards; the registry is restored afterwards."""
    with restored_registry(with_core_rewards=False) as registry:
        yield registry


@pytest.fixture
def core_registry():
    """The registry with the core tests' own rewards (tests/core_rewards.py) added."""
    with restored_registry(with_core_rewards=True) as registry:
        yield registry


@pytest.fixture(scope="module")
def core_registry_module():
    """Module-scoped ``core_registry`` for hypothesis tests (function fixtures are not reset per example)."""
    with restored_registry(with_core_rewards=True) as registry:
        yield registry


@pytest.fixture(scope="module")
def pool():
    """A warm local sandbox of two slots for one test module (its zygotes started by a first run)."""
    from rewardhub.sandbox import Program
    from rewardhub.sandbox.local import LocalBackend

    backend = LocalBackend(workers=2)
    backend.run(Program("pass"))
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def math_reward():
    """A ``math`` reward with room for a loaded machine (the math property and statement tests)."""
    from rewardhub.rewards.math import MathReward

    return MathReward(timeout=10, workers=2)


@pytest.fixture(scope="module")
def exact_match():
    return rewardhub.get("exact_match")
