"""An example rewardhub plugin: one reward, registered through an entry point in group `rewardhub`."""

import rewardhub

POLITE = ("please", "thank you", "thanks", "kindly")


@rewardhub.sample_reward(name="politeness")
def politeness(text: str, *, per_phrase: float = 0.5) -> tuple[float, str]:
    """Reward polite phrases: `per_phrase` for each one found, capped at 1.0."""
    found = [p for p in POLITE if p in text.lower()]
    return min(1.0, per_phrase * len(found)), f"polite phrases: {', '.join(found) or 'none'}"


@rewardhub.hookimpl
def register_rewards(register):
    register(politeness)
