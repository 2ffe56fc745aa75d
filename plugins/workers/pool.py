"""Worker processes with a hard deadline per item, so runaway work (sympy, user code) never hangs the caller.

A :class:`WorkerPool` runs a module-level function over items in lazily started worker processes.
Each worker is a fresh interpreter (``python -P main.py``, see :mod:`rewardhub.workers.main`)
that imports the work function by name over the caller's ``sys.path``: the caller's ``__main__`` is
never re-imported, so pools work from unguarded scripts, ``python -c``, stdin, notebooks, threaded
trainers and every process of a distributed launch. Items go out in chunks over a socket; each item
has its own deadline: the worker first interrupts itself (a timer signal, which works while Python
bytecode runs), and past ``timeout + grace`` the caller SIGKILLs it (which also works when the worker
holds its GIL in one huge C operation such as ``9**9**9``) and starts a replacement. A worker found
dead (the OOM killer, a stray kill) is replaced before work is sent to it; an item whose worker died
under it runs once more on a fresh worker. Calls from several threads run at once over the shared
workers, and a runaway item costs only its own row (see :class:`WorkerPool`). The caller only waits
on sockets with timeouts, so its process and threads stay responsive.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
import weakref
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from queue import SimpleQueue
from typing import Any, Literal, NamedTuple

from .._deadline import batch_abandoned
from ..errors import RewardhubError, WorkerShortfallWarning, WorkerStartupError

__all__ = [
    "Outcome",
    "RUNAWAY_SHARE",
    "WORKER_SCRIPT",
    "WorkerFunctionError",
    "WorkerPool",
    "require_importable",
    "shared_pool",
    "usable_cores",
]

WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "main.py")


class Outcome(NamedTuple):
    """One item's result: ``ok`` with the return value, or ``timeout`` / ``error`` / ``killed`` with a
    message (``killed``: its workers were SIGKILLed from outside, the OOM killer's way: not the item's fault).
    ``cpu``: for a timeout, the seconds of CPU the item used (``None`` where unknown): see :meth:`ran_away`."""

    status: Literal["ok", "timeout", "error", "killed"]
    value: Any = None
    cpu: float | None = None

    def ran_away(self, timeout: float) -> bool:
        """A timeout the item caused: it used (nearly) its whole CPU budget. A timeout with less CPU used is
        a busy machine's doing (other processes had the cores): not the item's fault."""
        return self.status == "timeout" and self.cpu is not None and self.cpu >= RUNAWAY_SHARE * timeout


# A timed-out item that used this share of its seconds as CPU time ran away; with less, the machine starved it.
RUNAWAY_SHARE = 0.9


class WorkerFunctionError(RewardhubError, TypeError):
    """A work function that worker processes cannot import by name (a lambda, a local function, or one
    defined in ``__main__``: workers never re-run the caller's script)."""


def usable_cores() -> int:
    """CPU cores this process may run on (respects affinity masks and container cpusets)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def require_importable(func: Any) -> str:
    """The module workers import to find ``func``; raises :class:`WorkerFunctionError` unless they can."""
    module = getattr(func, "__module__", None)
    name = getattr(func, "__qualname__", repr(func))
    if module == "__main__":
        raise WorkerFunctionError(
            f"{name} is defined in __main__ (your script, notebook or `python -c` code), but worker processes "
            f"import it by module name and never re-run your script: move {name} into a module of its own "
            f"(a .py file next to your script, say my_rewards.py) and import it from there."
        )
    try:
        pickle.dumps(func)  # a function pickles by reference: this checks the module.qualname lookup
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise WorkerFunctionError(
            f"worker functions must be module-level functions importable by name; got {func!r} ({exc})"
        ) from None
    return module  # type: ignore[return-value]


@dataclass(eq=False)
class _Worker:
    process: subprocess.Popen
    conn: Connection
    started: float
    awaiting: int = 1  # "ready" messages still expected (start-up, then one per import request)
    modules: set[str] = field(default_factory=set)

    pending: deque[int] = field(default_factory=deque)  # indices of the items sent and not yet answered
    item_started: float = 0.0
    cpu_mark: float = 0.0  # the worker's cpu seconds at its last message: where the current item's cpu starts

    @property
    def ready(self) -> bool:
        return self.awaiting == 0

    def usable(self) -> bool:
        """Alive, and silent if idle: a ready worker with nothing to answer whose socket is readable
        has died (EOF) or is dying."""
        return self.process.poll() is None and not (self.ready and not self.pending and self.conn.poll())

    def post(self, message: Any) -> bool:
        """Send a message; ``False`` when the worker is gone (its socket is closed)."""
        try:
            self.conn.send(message)
        except OSError:  # BrokenPipeError, ConnectionResetError: it died since we last looked
            return False
        return True


class WorkerPool:
    """A small process pool with per-item deadlines, shared by any number of threads at once.

    Concurrent calls share the workers: each call holds only the workers it is using and hands each
    back the moment it has nothing more to send it, so a call waits for another call's runaway item
    only while every worker is on one.

    ``preload`` names modules every worker imports before it counts as ready (the work function's
    own module is always imported too), so imports never eat into an item's deadline.
    """

    def __init__(
        self,
        size: int | None = None,
        *,
        preload: Sequence[str] = (),
        startup_timeout: float = 60.0,
        start_retries: int = 2,
    ):
        if size is not None and size < 1:
            raise ValueError(f"a worker pool needs at least one worker; got size={size}")
        self.size = size or usable_cores()
        self.capacity = self.size  # workers this machine lets start: fewer once starts keep failing (memory)
        self.preload = tuple(preload)
        self.startup_timeout = startup_timeout
        self.start_retries = start_retries
        self._workers: list[_Worker] = []  # every live worker
        self._idle: list[_Worker] = []  # live workers no call is using
        self._guard = threading.Condition()  # over both lists; notified when a worker is handed back or gone
        self._finalizer = weakref.finalize(self, _stop_all, self._workers)
        _POOLS.add(self)

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
        Called under a reward's batch deadline that has passed, the items not answered yet get
        ``Outcome("timeout")`` at once and the workers still on them are killed: an abandoned batch
        does not go on taking workers from the batches after it.
        """
        modules = {require_importable(func), *requires}
        items = list(items)
        if not items:
            return []
        if timeout <= 0:
            raise ValueError(f"timeout must be positive; got {timeout}")
        chunksize = chunksize or max(1, math.ceil(len(items) / (4 * self.size)))
        chunks = deque(range(i, min(i + chunksize, len(items))) for i in range(0, len(items), chunksize))
        return _Run(self, func, modules, items, chunks, timeout).run()

    def start(self) -> None:
        """Start all workers now and wait until they are ready (raises :class:`WorkerStartupError`)."""
        _Run(self, None, set(), [], deque(), 1.0).run()

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers (for monitoring and tests)."""
        return [w.process.pid for w in self._workers]

    def close(self) -> None:
        """Stop every worker (also done automatically when the pool is garbage-collected or at exit)."""
        with self._guard:
            self._idle.clear()
            _stop_all(self._workers)
            self._guard.notify_all()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- worker lifecycle (callers hold self._guard) ---------------------------------------------
    def _room(self) -> bool:
        """Whether another worker may start (fewer than ``capacity`` live)."""
        return len(self._workers) < self.capacity

    def _spawn(self, modules: set[str]) -> _Worker:
        ours, theirs = socket.socketpair()
        with ours, theirs:
            process = _launch(theirs.fileno())
            conn = Connection(ours.detach())
        worker = _Worker(process, conn, time.monotonic(), modules=set(modules))
        self._workers.append(worker)
        worker.post((sys.path, sorted(modules)))  # if it died at once, the run loop reads EOF: a failed start
        return worker

    def _kill(self, worker: _Worker) -> None:
        for workers in (self._workers, self._idle):
            if worker in workers:
                workers.remove(worker)
        worker.process.kill()
        _reap(worker)
        self._guard.notify_all()

    def _hand_back(self, worker: _Worker) -> None:
        """A call is done with an idle worker: other calls may use it."""
        self._idle.append(worker)
        self._guard.notify_all()

    def _make_do(self, count: int, failures: int, why: str) -> None:
        """Score with the ``count`` workers that started, and say so once per shrink (loudly: the run is slower)."""
        if count >= self.capacity:
            return
        self.capacity = count
        warnings.warn(
            f"rewardhub started only {count} of the {self.size} worker processes asked for ({failures} starts in a "
            f"row failed; last: {why}); scoring goes on with {count}. A memory limit that fits fewer workers kills "
            f"the others (the OOM killer): pass workers={count} to the reward, or give the process more memory.",
            WorkerShortfallWarning,
            stacklevel=2,
        )

    def _forget_after_fork(self) -> None:
        """In a forked child the parent's workers are not ours: drop our copies of their sockets only."""
        self._guard = threading.Condition()
        for worker in self._workers:
            worker.conn.close()
            worker.process.returncode = 0  # not our child: never wait for it or signal it
        self._workers.clear()
        self._idle.clear()


class _Run:
    """One ``map`` call: a small event loop over the sockets of the workers it holds (starting, idle, busy)."""

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
        self.deaths: Counter[int] = Counter()  # item index -> workers that died while it was first in line
        self.failures = 0  # failed starts in a row
        self.last_failure, self.failed_at = "", 0.0
        self.exhausted = False  # start retries used up: this call starts no more workers
        self.workers: list[_Worker] = []  # the workers this call holds
        self.abandoned = batch_abandoned()

    def run(self) -> list[Outcome]:
        try:
            with self.pool._guard:
                self._claim(block=True)
            while True:
                for worker in list(self.workers):
                    if worker.ready and not worker.pending:
                        if self.chunks:
                            self._send(worker, self.chunks.popleft())
                        elif self.items:
                            self._leave(worker)
                if self._done():
                    return self.results  # type: ignore[return-value]
                if self.abandoned is not None and self.abandoned.is_set():
                    return self._abandon()
                if self._short():
                    with self.pool._guard:
                        self._claim(block=not self.workers)
                ready = wait([w.conn for w in self.workers], timeout=self._wait())
                for worker in [w for w in self.workers if w.conn in ready]:
                    self._receive(worker)
                self._enforce_deadlines()
        finally:
            for worker in list(self.workers):
                self._leave(worker)

    def _short(self) -> bool:
        """More workers would help: start() wants them all; a map has chunks none of its workers can take now."""
        if not self.items:
            return len(self.workers) < self.pool.capacity
        free = sum(1 for w in self.workers if not w.pending)
        return len(self.chunks) > free

    def _claim(self, block: bool) -> None:
        """Take idle workers and start new ones while short; ``block``: wait until there is at least one."""
        while True:
            while self._short() and self.pool._idle:
                self._adopt(self.pool._idle.pop())
            while self._short() and self.pool._room() and not self.exhausted:
                self._start()
            if self.workers or not block:
                return
            self.pool._guard.wait(0.5)

    def _adopt(self, worker: _Worker) -> None:
        """Use an idle worker: one found dead is replaced, one lacking this call's modules imports them."""
        if worker.pending or not worker.usable():
            self.pool._kill(worker)
            return
        missing = self.modules - worker.modules
        if missing:
            if not worker.post(("import", sorted(missing))):
                self.pool._kill(worker)
                return
            worker.modules |= missing
            worker.awaiting += 1
            worker.started = time.monotonic()
        self.workers.append(worker)

    def _leave(self, worker: _Worker) -> None:
        """Hand a worker back to the pool; one still owing answers would answer them to the next call: killed."""
        self.workers.remove(worker)
        with self.pool._guard:
            if worker.pending or not worker.usable():
                self.pool._kill(worker)
            else:
                self.pool._hand_back(worker)

    def _done(self) -> bool:
        if not self.items:  # start(): done when every worker is ready
            return all(w.ready for w in self.workers)
        return all(r is not None for r in self.results)

    def _abandon(self) -> list[Outcome]:
        """The caller's batch deadline passed: what is not answered yet times out now."""
        why = f"timeout: the batch's deadline passed before this item's {self.timeout:g} s were up"
        return [r if r is not None else Outcome("timeout", why) for r in self.results]

    def _start(self) -> None:
        with self.pool._guard:
            try:
                self.workers.append(self.pool._spawn(self.modules))
            except Exception as exc:  # the interpreter could not even be launched
                self._startup_failed(f"{type(exc).__name__}: {exc}")

    def _replace(self) -> None:
        """Start a worker in place of one killed or dead, so the pool is whole again for the next call too."""
        with self.pool._guard:
            if self.pool._room() and not self.exhausted:
                self._start()

    def _drop(self, worker: _Worker) -> None:
        if worker in self.workers:
            self.workers.remove(worker)
        with self.pool._guard:
            self.pool._kill(worker)

    def _send(self, worker: _Worker, indices: range) -> None:
        """Send a chunk to an idle worker; one found dead first is replaced and the chunk waits."""
        if worker.usable() and worker.post(("run", self.func, [self.items[i] for i in indices], self.timeout)):
            worker.pending.extend(indices)
            worker.item_started = time.monotonic()
            return
        self.chunks.appendleft(indices)  # never started: no attempt is counted against its items
        self._drop(worker)  # the run loop claims a replacement

    def _wait(self) -> float:
        """Seconds until the next deadline (an item's or a start's), at most 0.2 s while this call is short
        of workers or under a batch deadline (both are looked at between waits)."""
        now = time.monotonic()
        deadlines = [now + 1.0]
        for w in self.workers:
            if not w.ready:
                deadlines.append(w.started + self.pool.startup_timeout)
            elif w.pending:
                deadlines.append(w.item_started + self.hard)
        if self._short() or self.abandoned is not None:
            deadlines.append(now + 0.2)
        return max(0.0, min(deadlines) - now)

    def _receive(self, worker: _Worker) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._died(worker)
            return
        kind = message[0]
        if kind == "ready":
            worker.awaiting -= 1
            worker.cpu_mark = message[1]
            if worker.started > self.failed_at:  # a start after the last failure worked: retries help
                self.failures = 0
            if self.exhausted:
                self._settle_shortfall()
        elif kind == "failed":
            self._drop(worker)
            self._startup_failed(message[1])
        elif kind == "unreadable":  # the worker could not unpickle the chunk: its items cannot run
            while worker.pending:
                self.results[worker.pending.popleft()] = Outcome("error", f"item cannot be sent: {message[1]}")
        else:
            status, value, cpu, worker.cpu_mark = message
            self.results[worker.pending.popleft()] = Outcome(status, value, cpu if status == "timeout" else None)
            worker.item_started = time.monotonic()

    def _died(self, worker: _Worker) -> None:
        """A worker closed its socket on its own: a crash, or a kill from outside (the OOM killer).

        The item it was on runs once more on a fresh worker; an item that kills a second worker is
        the item's own doing and gets an error outcome.
        """
        self._drop(worker)
        how = _exit_description(worker.process.returncode)
        if not worker.ready:
            self._startup_failed(f"worker process ended ({how}) before it was ready")
            return
        if worker.pending:
            first = worker.pending[0]
            self.deaths[first] += 1
            if self.deaths[first] > 1:
                worker.pending.popleft()
                self.results[first] = _second_death(worker.process.returncode, how)
        self._requeue(worker)
        self._replace()

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.ready and worker.pending and now - worker.item_started > self.hard:
                cpu = _cpu_seconds(worker.process.pid)  # read before the kill: what the item used
                self._drop(worker)
                self.results[worker.pending.popleft()] = Outcome(
                    "timeout", f"timeout after {self.timeout:g} s", None if cpu is None else cpu - worker.cpu_mark)
                self._requeue(worker)
                self._replace()
            elif not worker.ready and now - worker.started > self.pool.startup_timeout:
                self._drop(worker)
                self._startup_failed(f"worker not ready after {self.pool.startup_timeout:g} s")

    def _requeue(self, worker: _Worker) -> None:
        """Items a killed worker never answered go back to the front of the queue."""
        if worker.pending:
            self.chunks.appendleft(range(worker.pending[0], worker.pending[-1] + 1))
            worker.pending.clear()

    def _startup_failed(self, why: str) -> None:
        """Count a failed start and try again, until ``start_retries`` is used up."""
        self.failures += 1
        self.last_failure, self.failed_at = why, time.monotonic()
        if self.failures <= self.pool.start_retries and not self.exhausted:
            self._start()
            return
        self.exhausted = True
        self._settle_shortfall()

    def _settle_shortfall(self) -> None:
        """Retries used up: once no start of this call is under way, go on with the workers that did
        start (a memory limit that fits only some), and raise only if none did."""
        if any(not w.ready for w in self.workers):
            return  # they may still become ready
        with self.pool._guard:
            started = sum(1 for w in self.pool._workers if w.ready)
            if started:
                self.pool._make_do(started, self.failures, self.last_failure)
                return
        imports = (
            f" and imports {', '.join(sorted(self.modules))}: check that these import cleanly in a fresh "
            f"interpreter with that path"
            if self.modules
            else ""
        )
        raise WorkerStartupError(
            f"rewardhub could not start its worker processes ({self.failures} attempts; last: {self.last_failure}). "
            f"Each worker is a fresh `{sys.executable} -P {WORKER_SCRIPT}` that takes this process's "
            f"sys.path{imports}."
        )


def _second_death(code: int | None, how: str) -> Outcome:
    """The outcome of an item whose second worker died under it too. The pool never SIGKILLs a worker
    it still reads from, so a SIGKILL came from outside (the OOM killer under memory pressure, an
    operator): ``killed``, not the item's own failure; any other death is the item's ``error``."""
    if code == -signal.SIGKILL:
        return Outcome("killed", "worker process killed by SIGKILL from outside twice on this item "
                                 "(the OOM killer under memory pressure?)")
    return Outcome("error", f"worker process died on this item twice ({how})")


def _cpu_seconds(pid: int) -> float | None:
    """A live process's cpu seconds so far (user + system, from /proc), ``None`` where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime: fields 14 and 15 of stat(5)


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _exit_description(code: int | None) -> str:
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _reap(worker: _Worker) -> None:
    try:
        worker.process.wait(1.0)
    except subprocess.TimeoutExpired:  # unkillable for now (stuck in the kernel): the OS reaps it later
        pass
    worker.conn.close()


def _stop_all(workers: list[_Worker]) -> None:
    """Ask every worker to stop, give them half a second together, then kill the rest."""
    for worker in workers:
        worker.post(None)
    end = time.monotonic() + 0.5
    for worker in workers:
        try:
            worker.process.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.process.kill()
        _reap(worker)
    workers.clear()


# ----- starting processes ----------------------------------------------------------------------------
class _Launcher:
    """Starts worker processes from one long-lived thread.

    Linux delivers a worker's parent-death signal when the *thread* that started it ends; workers
    started from a short-lived caller thread (a server's request thread) would die with it.
    """

    def __init__(self) -> None:
        self.requests: SimpleQueue[tuple[int, Future]] = SimpleQueue()
        threading.Thread(target=self._serve, name="rewardhub-worker-launcher", daemon=True).start()

    def _serve(self) -> None:
        while True:
            fd, future = self.requests.get()
            try:
                future.set_result(
                    subprocess.Popen(
                        [sys.executable, "-P", WORKER_SCRIPT, str(fd), str(os.getpid())],
                        stdin=subprocess.DEVNULL,
                        pass_fds=(fd,),
                    )
                )
            except BaseException as exc:
                future.set_exception(exc)

    def launch(self, fd: int) -> subprocess.Popen:
        future: Future = Future()
        self.requests.put((fd, future))
        return future.result()


_launcher: _Launcher | None = None
_launcher_lock = threading.Lock()


def _launch(fd: int) -> subprocess.Popen:
    """A new worker process holding the socket ``fd``."""
    global _launcher
    with _launcher_lock:
        if _launcher is None:
            _launcher = _Launcher()
    return _launcher.launch(fd)


# ----- the shared pool, and forks ----------------------------------------------------------------------
_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()
_shared: dict[int | None, WorkerPool] = {}
_shared_lock = threading.Lock()


def shared_pool(size: int | None = None) -> WorkerPool:
    """The process-wide pool of ``size`` workers (default: usable cores), created on first use."""
    with _shared_lock:
        pool = _shared.get(size)
        if pool is None:
            pool = _shared[size] = WorkerPool(size)
        return pool


def _after_fork_in_child() -> None:
    """A forked child (a data loader, a user's ``os.fork``) starts with no workers, locks or launcher."""
    global _launcher, _launcher_lock, _shared_lock
    _launcher, _launcher_lock, _shared_lock = None, threading.Lock(), threading.Lock()
    for pool in list(_POOLS):
        pool._forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)
