"""``instruction_following``: IFEval's verifiable instructions (checks, text measurements, padding guard)."""
