"""Rewards that score with another package's scorer (reasoning-gym, NeMo-Gym resource servers, OpenEnv and
verifiers rubrics): one module each, importing its package only inside."""

__all__ = []
