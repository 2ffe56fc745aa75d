"""Adapters between rewardhub and the hubs and trainers people already use (reasoning-gym, NeMo-Gym, OpenEnv,
verifiers, SkyRL-gym, slime, ART): one module each, importing its package only inside."""

__all__ = []
