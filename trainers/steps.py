"""The trainer's step counted from samples, once per deployment, surviving restarts.

``rewardhub serve`` and ``rewardhub route`` count the step from samples when requests carry none
(``--samples-per-step``: verl and OpenRLHF send no step). Behind a router the router counts and sends
the step with every forward, so each replica's share scores at the deployment's step, not its own;
``--step-file`` keeps the count on disk (written atomically after each request) so a restart goes on
where it stopped, and ``--start-step`` starts a resumed run at its step.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from rewardhub.errors import ConfigError

from .groups import StepClock

__all__ = ["SavedStepClock", "step_clock"]
logger = logging.getLogger("rewardhub.steps")


class SavedStepClock(StepClock):
    """A :class:`StepClock` that starts at ``start_step`` (else where ``path`` says it stopped) and saves
    its count of samples to ``path`` after each call."""

    def __init__(self, samples_per_step: int, *, start_step: int | None = None, path: str | os.PathLike | None = None):
        super().__init__(samples_per_step)
        self.path = Path(path) if path is not None else None
        self._saving = threading.Lock()
        if start_step is not None:
            if start_step < 0:
                raise ConfigError(f"the start step must be >= 0; got {start_step}")
            self._scored = start_step * samples_per_step
        elif self.path is not None and self.path.exists():
            self._scored = _saved_samples(self.path, samples_per_step)

    def advance(self, samples: int) -> int:
        step = super().advance(samples)
        if self.path is not None:
            with self._saving:  # each write reads the latest count, so the file never goes back
                try:
                    _save(self.path, self._scored, self.samples_per_step)
                except OSError as exc:  # the request is scored all the same; a restart may repeat steps
                    logger.warning("could not save the step count to %s: %s", self.path, exc)
        return step

    def give_back(self, samples: int) -> None:
        """Uncount the samples of a call that was not scored (the router answered it 503: it comes back)."""
        with self._lock:
            self._scored = max(self._scored - samples, 0)


def step_clock(samples_per_step: int | None, start_step: int | None = None,
               path: str | os.PathLike | None = None) -> SavedStepClock | None:
    """The step clock ``serve``/``route`` options ask for (None when steps are not counted)."""
    if samples_per_step is None:
        if start_step is not None or path is not None:
            raise ConfigError("--start-step and --step-file count steps from samples: give --samples-per-step too")
        return None
    return SavedStepClock(samples_per_step, start_step=start_step, path=path)


def _saved_samples(path: Path, samples_per_step: int) -> int:
    """The samples a step file counted, rescaled when it was written with another ``samples_per_step``."""
    try:
        saved = json.loads(path.read_text())
        samples, per_step = int(saved["samples"]), int(saved["samples_per_step"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"step file {path} cannot be read ({type(exc).__name__}: {exc}); fix or delete it, "
                          f"or pass --start-step") from None
    if samples < 0 or per_step < 1:
        raise ConfigError(f"step file {path} holds no valid count: {saved}; fix or delete it, or pass --start-step")
    return samples if per_step == samples_per_step else (samples // per_step) * samples_per_step


def _save(path: Path, samples: int, samples_per_step: int) -> None:
    """Write the count atomically (a crash leaves the old file or the new one, never half of one)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps({"samples": samples, "samples_per_step": samples_per_step}))
    os.replace(partial, path)
