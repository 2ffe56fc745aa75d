"""A set of rewards from a config: entries, gates, routes, weights and schedules, shared verdicts, groups
and the aggregate. Internal: the public names are re-exported by ``rewardhub``."""

__all__ = []
