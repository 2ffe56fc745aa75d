"""Run a call in a thread and count what the main thread did meanwhile: a check of behaviour (the
caller is not blocked while a worker spins or waits out a deadline), with no wall-clock bound."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def beats_during(call: Callable[[], Any]) -> tuple[Any, int]:
    """``call()``'s result and how many times the main thread ran after the call began and before it ended."""
    began, ended = threading.Event(), threading.Event()
    box: dict[str, Any] = {}

    def target() -> None:
        began.set()
        try:
            box["result"] = call()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc
        finally:
            ended.set()

    thread = threading.Thread(target=target, name="responsive-call")
    thread.start()
    began.wait()
    beats = 0
    while not ended.wait(0.005):
        beats += 1
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"], beats
