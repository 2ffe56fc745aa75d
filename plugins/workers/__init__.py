"""Worker processes for scorers that may run away: killed at their deadline, replaced, never hanging a call.

``pool`` is the caller's side (:class:`WorkerPool`, ``shared_pool``); ``main`` is the worker's side, a
fresh interpreter started as ``python -P main.py`` that imports work functions by name.
"""

from .pool import Outcome, WorkerFunctionError, WorkerPool, require_importable, shared_pool, usable_cores

__all__ = ["Outcome", "WorkerFunctionError", "WorkerPool", "require_importable", "shared_pool", "usable_cores"]
