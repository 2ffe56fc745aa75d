"""``instruction_following``: IFEval's verifiable instructions (checks, text measurements, padding guard)."""

__all__ = []
