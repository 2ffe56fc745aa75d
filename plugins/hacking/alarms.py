"""An alarm of the reward-hacking monitor: what it saw, with the figures, the steps and example completions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Alarm"]


@dataclass(frozen=True)
class Alarm:
    """A signal that held (at ``PERSIST`` of the last ``PERSIST_OF`` steps, or at once for a spike): when
    (``step``; ``since``: the step the change began, when known), what, the numbers and example completions
    of the step it was raised at."""

    signal: str
    subject: str
    step: float
    message: str
    figures: dict[str, float] = field(default_factory=dict)
    since: float | None = None
    examples: tuple[str, ...] = ()

    def __str__(self) -> str:
        about = f" ({self.subject})" if self.subject else ""
        began = f" (began at step {self.since:g})" if self.since is not None else ""
        quoted = "".join(f"\n    e.g. {example[:160]!r}" for example in self.examples)
        return (f"rewardhub: possible reward hacking, signal {self.signal!r}{about} at step {self.step:g}{began}: "
                f"{self.message}{quoted}")

    def as_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "subject": self.subject, "step": self.step, "since": self.since,
                "message": self.message, "figures": self.figures, "examples": list(self.examples)}
