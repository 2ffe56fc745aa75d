"""Worker processes with a hard deadline per item, so runaway work (sympy, user code) never hangs the caller.

A :class:`WorkerPool` runs a module-level function over items in lazily started worker processes
(``forkserver`` or ``spawn``; never ``fork`` from a threaded trainer). Items go out in chunks; each
item has its own deadline: the worker first tries to interrupt itself (a timer signal, which works
while Python bytecode runs), and past ``timeout + grace`` the caller SIGKILLs it (which also works
when the worker holds its GIL in one huge C operation such as ``9**9**9``) and starts a replacement.
The caller only waits on pipes with timeouts, so its process and threads stay responsive.
"""

from __future__ import annotations

import importlib
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Literal, NamedTuple

from .errors import WorkerStartupError

CONTEXTS = ("forkserver", "spawn")


class Outcome(NamedTuple):
    """One item's result: ``ok`` with the return value, or ``timeout`` / ``error`` with a message."""

    status: Literal["ok", "timeout", "error"]
    value: Any = None


def usable_cores() -> int:
    """CPU cores this process may run on (respects affinity masks and container cpusets)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(eq=False)
class _Worker:
    process: Any
    conn: Connection
    started: float
    owner: int  # pid of the process that started it: only the owner may stop it
    awaiting: int = 1  # "ready" messages still expected (start-up, then one per import request)
    modules: set[str] = field(default_factory=set)

    pending: deque[int] = field(default_factory=deque)  # indices of the items sent and not yet answered
    item_started: float = 0.0

    @property
    def ready(self) -> bool:
        return self.awaiting == 0


class WorkerPool:
    """A small process pool with per-item deadlines; safe to call from any thread (calls are serialised).

    ``preload`` names modules every worker imports before it counts as ready (the work function's
    own module is always imported too), so imports never eat into an item's deadline.
    """

    def __init__(
        self,
        size: int | None = None,
        *,
        context: str = "forkserver",
        preload: Sequence[str] = (),
        startup_timeout: float = 60.0,
        start_retries: int = 2,
    ):
        if context not in CONTEXTS:
            raise ValueError(f"context must be one of {', '.join(CONTEXTS)}; got {context!r}")
        if size is not None and size < 1:
            raise ValueError(f"a worker pool needs at least one worker; got size={size}")
        self.size = size or usable_cores()
        self.context = multiprocessing.get_context(context)
        self.preload = tuple(preload)
        self.startup_timeout = startup_timeout
        self.start_retries = start_retries
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._finalizer = weakref.finalize(self, _stop_all, self._workers)

    # ----- public ---------------------------------------------------------------------------------
    def map(
        self,
        func: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        timeout: float,
        chunksize: int | None = None,
        requires: Sequence[str] = (),
    ) -> list[Outcome]:
        """``func(item)`` for every item, in order; an item running past ``timeout`` seconds gets
        ``Outcome("timeout")`` and its worker is killed and replaced.

        ``requires``: what every worker prepares before its first item, outside any item's deadline:
        module names (heavy dependencies of ``func``) or ``"module:function"`` to also call a
        no-argument warm-up function once (first calls into parsers are often much slower).
        """
        modules = {_check_function(func), *requires}
        items = list(items)
        if not items:
            return []
        if timeout <= 0:
            raise ValueError(f"timeout must be positive; got {timeout}")
        chunksize = chunksize or max(1, math.ceil(len(items) / (4 * self.size)))
        chunks = deque(range(i, min(i + chunksize, len(items))) for i in range(0, len(items), chunksize))
        with self._lock:
            self._forget_after_fork()
            return _Run(self, func, modules, items, chunks, timeout).run()

    def start(self) -> None:
        """Start all workers now and wait until they are ready (raises :class:`WorkerStartupError`)."""
        with self._lock:
            self._forget_after_fork()
            _Run(self, None, set(), [], deque(), 1.0).run()

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers (for monitoring and tests)."""
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    def close(self) -> None:
        """Stop every worker (also done automatically when the pool is garbage-collected or at exit)."""
        with self._lock:
            _stop_all(self._workers)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- worker lifecycle ------------------------------------------------------------------------
    def _forget_after_fork(self) -> None:
        """In a forked child the parent's workers are not ours: drop them without touching them."""
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._workers.clear()

    def _spawn(self, modules: set[str]) -> _Worker:
        parent, child = self.context.Pipe(duplex=True)
        process = self.context.Process(
            target=_serve,
            args=(child, sorted(modules), self.context.get_start_method() == "forkserver"),
            name="rewardhub-worker",
            daemon=True,
        )
        try:
            process.start()
        finally:
            child.close()
        worker = _Worker(process, parent, time.monotonic(), os.getpid(), modules=set(modules))
        self._workers.append(worker)
        return worker

    def _kill(self, worker: _Worker) -> None:
        if worker in self._workers:
            self._workers.remove(worker)
        _stop(worker, graceful=False)


class _Run:
    """One ``map`` call: a small event loop over the workers' pipes (starting, idle, busy)."""

    def __init__(
        self, pool: WorkerPool, func: Any, modules: set[str], items: list, chunks: deque, timeout: float
    ):
        self.pool = pool
        self.func = func
        self.modules = modules | set(pool.preload)
        self.items = items
        self.chunks = chunks
        self.timeout = timeout
        self.hard = timeout + min(0.5, 0.2 * timeout)
        self.results: list[Outcome | None] = [None] * len(items)
        self.failures = 0

    def run(self) -> list[Outcome]:
        modules = self.modules
        wanted = self.pool.size if not self.items else min(self.pool.size, len(self.chunks))
        for worker in list(self.pool._workers):
            # A worker still busy with an interrupted call's items (Ctrl-C, an exception in the caller)
            # would answer them as this call's: it cannot be trusted, so it is replaced.
            if not worker.process.is_alive() or worker.pending:
                self.pool._kill(worker)
            elif modules - worker.modules:
                worker.conn.send(("import", sorted(modules - worker.modules)))
                worker.modules |= modules
                worker.awaiting += 1
                worker.started = time.monotonic()
        while len(self.pool._workers) < wanted:
            self._start(modules)
        while True:
            for worker in self.pool._workers:
                if worker.ready and not worker.pending and self.chunks:
                    self._send(worker, self.chunks.popleft())
            if self._done():
                return self.results  # type: ignore[return-value]
            live = self.pool._workers
            ready = wait([w.conn for w in live], timeout=max(0.0, self._next_deadline() - time.monotonic()))
            for worker in [w for w in live if w.conn in ready]:
                self._receive(worker, modules)
            self._enforce_deadlines(modules)

    def _done(self) -> bool:
        if not self.items:  # start(): done when every worker is ready
            return all(w.ready for w in self.pool._workers)
        return all(r is not None for r in self.results)

    def _start(self, modules: set[str]) -> None:
        try:
            self.pool._spawn(modules)
        except Exception as exc:  # the context could not even launch a process
            self._startup_failed(f"{type(exc).__name__}: {exc}", modules)

    def _send(self, worker: _Worker, indices: range) -> None:
        worker.conn.send((self.func, [self.items[i] for i in indices], self.timeout))
        worker.pending.extend(indices)
        worker.item_started = time.monotonic()

    def _next_deadline(self) -> float:
        deadlines = [
            w.item_started + self.hard if w.ready else w.started + self.pool.startup_timeout
            for w in self.pool._workers
            if w.pending or not w.ready
        ]
        return min(deadlines, default=time.monotonic() + 1.0)

    def _receive(self, worker: _Worker, modules: set[str]) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._died(worker, modules)
            return
        kind = message[0]
        if kind == "ready":
            worker.awaiting -= 1
            self.failures = 0
        elif kind == "failed":
            self.pool._kill(worker)
            self._startup_failed(message[1], modules)
        else:
            self.results[worker.pending.popleft()] = Outcome(*message)
            worker.item_started = time.monotonic()

    def _died(self, worker: _Worker, modules: set[str]) -> None:
        worker.process.join(1.0)
        code = worker.process.exitcode
        self.pool._kill(worker)
        if not worker.ready:
            self._startup_failed(f"worker exited with code {code} before it was ready", modules)
            return
        if worker.pending:
            self.results[worker.pending.popleft()] = Outcome(
                "error", f"worker process died (exit code {code})"
            )
        self._requeue(worker)
        self._start(modules)

    def _enforce_deadlines(self, modules: set[str]) -> None:
        now = time.monotonic()
        for worker in list(self.pool._workers):
            if worker.ready and worker.pending and now - worker.item_started > self.hard:
                self.pool._kill(worker)
                self.results[worker.pending.popleft()] = Outcome(
                    "timeout", f"timeout after {self.timeout:g} s"
                )
                self._requeue(worker)
                self._start(modules)
            elif not worker.ready and now - worker.started > self.pool.startup_timeout:
                self.pool._kill(worker)
                self._startup_failed(f"worker not ready after {self.pool.startup_timeout:g} s", modules)

    def _requeue(self, worker: _Worker) -> None:
        """Items a killed worker never answered go back to the front of the queue."""
        if worker.pending:
            self.chunks.appendleft(range(worker.pending[0], worker.pending[-1] + 1))
            worker.pending.clear()

    def _startup_failed(self, why: str, modules: set[str]) -> None:
        """Count a failed start and try again, until ``start_retries`` is used up."""
        self.failures += 1
        if self.failures > self.pool.start_retries:
            _stop_all(self.pool._workers)
            raise WorkerStartupError(
                f"rewardhub could not start its worker processes ({self.failures} attempts; last: {why}). "
                f"Worker processes are started with {self.pool.context.get_start_method()!r}, which re-imports "
                f'your main script: guard its top-level code with `if __name__ == "__main__":`, and make sure '
                f"the modules {sorted(modules)} import cleanly."
            )
        self._start(modules)


def _check_function(func: Callable[[Any], Any]) -> str:
    """The module of ``func``; raises ``TypeError`` unless workers can import it by name."""
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", "")
    owner = sys.modules.get(module or "")
    target: Any = owner
    for part in qualname.split("."):
        target = getattr(target, part, None)
    if owner is None or "<" in qualname or target is not func:
        raise TypeError(f"worker functions must be module-level functions importable by name; got {func!r}")
    return module  # type: ignore[return-value]


def _stop(worker: _Worker, graceful: bool) -> None:
    try:
        if graceful and worker.process.is_alive():
            worker.conn.send(None)
            worker.process.join(0.5)
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(1.0)
    except (OSError, ValueError, AssertionError):  # already closed or reaped
        pass
    worker.conn.close()


def _stop_all(workers: list[_Worker]) -> None:
    """Stop the workers this process started (in a forked child, the parent's are left alone)."""
    for worker in list(workers):
        if worker.owner == os.getpid():
            _stop(worker, graceful=True)
    workers.clear()


# ----- the worker side ---------------------------------------------------------------------------------
class _Deadline(BaseException):
    """Raised inside a worker when an item's time is up (a BaseException so that libraries'
    ``except Exception`` blocks cannot swallow it)."""


def _on_deadline(signum: int, frame: object) -> None:
    raise _Deadline


def _serve(conn: Connection, modules: list[str], from_forkserver: bool) -> None:
    """Worker main loop: import, say ready, then run chunks and answer item by item."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the trainer; the pool stops us
    signal.signal(signal.SIGALRM, _on_deadline)
    _die_with_parent(from_forkserver)
    if not _import(conn, modules):
        return
    conn.send(("ready",))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message[0] == "import":
            if not _import(conn, message[1]):
                return
            conn.send(("ready",))
            continue
        func, items, timeout = message
        for item in items:
            conn.send(_call(func, item, timeout))


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
        return ("error", f"{type(exc).__name__}: {exc}"[:300])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _die_with_parent(from_forkserver: bool) -> None:
    """Ask Linux to SIGKILL this worker when its parent dies, so no worker outlives a killed trainer.

    Under ``forkserver`` the parent is the fork server, which exits once no client holds its "alive"
    pipe; a worker inherits a copy of that pipe, so it closes it (workers never start processes).
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    from multiprocessing import forkserver

    alive_fd = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_alive_fd", None)
    if from_forkserver and alive_fd is not None:
        os.close(alive_fd)
        forkserver._forkserver._forkserver_alive_fd = None


_shared: dict[int | None, WorkerPool] = {}
_shared_lock = threading.Lock()


def shared_pool(size: int | None = None) -> WorkerPool:
    """The process-wide pool of ``size`` workers (default: usable cores), created on first use."""
    with _shared_lock:
        pool = _shared.get(size)
        if pool is None:
            pool = _shared[size] = WorkerPool(size)
        return pool
