"""The worker side of :mod:`rewardhub.workers`: a fresh interpreter that imports work functions by name.

Started as ``python -P <this file> FD PARENT_PID`` (never a re-import of the caller's ``__main__``, so
the caller's script runs exactly once whatever way it was launched). It reads the caller's
``sys.path`` and the modules to prepare from the socket ``FD``, then answers chunks of items one by
one over the same socket, each item under its own deadline. Only the standard library is imported
before the caller's ``sys.path`` is in place, so the worker finds the very modules the caller uses.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from typing import Any

__all__ = []


class _Deadline(BaseException):
    """Raised inside a worker when an item's time is up (a BaseException so that libraries'
    ``except Exception`` blocks cannot swallow it)."""


def _on_deadline(signum: int, frame: object) -> None:
    raise _Deadline


def main(argv: list[str]) -> None:
    fd, parent = int(argv[1]), int(argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the caller; the pool stops us
    signal.signal(signal.SIGALRM, _on_deadline)
    _die_with_parent(parent)
    _offer_to_oom_killer()
    os.set_inheritable(fd, False)  # processes a work function starts must not hold our socket open
    conn = Connection(fd)
    try:
        path, modules = conn.recv()
    except (EOFError, OSError):
        return
    sys.path[:] = path
    _serve(conn, modules)
    for stream in (sys.stdout, sys.stderr):  # what work functions printed, then out without the slow
        stream.flush()  # interpreter teardown of everything they imported (sympy: ~0.1 s)
    os._exit(0)


def _serve(conn: Connection, modules: list[str]) -> None:
    """Import, say ready, then run chunks and answer item by item until told to stop or orphaned."""
    if not _import(conn, modules):
        return
    conn.send(("ready", time.process_time()))
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            message = pickle.loads(data)
        except Exception as exc:  # e.g. an item holding an object of a class this process cannot import
            conn.send(("unreadable", _describe(exc)))
            continue
        if message is None:
            return
        if message[0] == "import":
            if not _import(conn, message[1]):
                return
            conn.send(("ready", time.process_time()))
            continue
        _, func, items, timeout = message
        for item in items:
            start = time.process_time()
            status, value = _call(func, item, timeout)
            end = time.process_time()  # the caller judges a timeout by the cpu the item used (runaway or starved)
            _answer(conn, (status, value, end - start, end))


def _import(conn: Connection, modules: Iterable[str]) -> bool:
    """Import each module (and call ``module:function`` warm-ups); report a failure to the caller."""
    try:
        for name in modules:
            module, _, function = name.partition(":")
            imported = importlib.import_module(module)
            if function:
                getattr(imported, function)()
    except BaseException:
        conn.send(("failed", traceback.format_exc(limit=3).strip().splitlines()[-1]))
        return False
    return True


def _call(func: Callable[[Any], Any], item: Any, timeout: float) -> tuple[str, Any]:
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return ("ok", func(item))
    except _Deadline:
        return ("timeout", f"timeout after {timeout:g} s")
    except Exception as exc:
        return ("error", _describe(exc))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _answer(conn: Connection, outcome: tuple[str, Any, float, float]) -> None:
    """Send one item's outcome (status, value, its cpu seconds, this process's cpu so far); a value that
    cannot be pickled becomes that item's error."""
    try:
        conn.send(outcome)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:  # raised before any byte is written
        conn.send(("error", f"result cannot be sent back: {_describe(exc)}", *outcome[2:]))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def _offer_to_oom_killer() -> None:
    """Under memory pressure the kernel's OOM killer takes a worker (whose item then errs) before the
    trainer that started it: ``oom_score_adj`` 1000, which any process may raise for itself."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:  # not Linux, or no /proc: the kernel's default choice stands
        pass


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this worker when its parent dies, so no worker outlives a killed caller.

    The signal follows the thread that started the worker, which is why the caller starts workers
    from one long-lived thread. A parent that died before the request leaves us orphaned: exit.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
