"""Shared test setup: one torch/BLAS thread (2-core machines), and a registry snapshot per test."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest  # noqa: E402
import rewardhub  # noqa: E402


@pytest.fixture
def core_registry(clean_registry):
    """The registry with the core tests' own rewards (tests/core_rewards.py) added."""
    import core_rewards

    core_rewards.register_all(clean_registry)
    return clean_registry


@pytest.fixture
def clean_registry():
    """Let a test register its own rewards; the registry is restored afterwards."""
    rewardhub.registry.names()  # fill from plugins first
    saved = dict(rewardhub.registry._specs)
    yield rewardhub.registry
    rewardhub.registry._specs.clear()
    rewardhub.registry._specs.update(saved)
