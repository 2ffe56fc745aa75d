"""The ``remote`` backend: programs run on a fleet of SandboxFusion-compatible services.

    sandbox.run_many(programs, backend="remote", urls=["http://10.0.0.5:8080", "http://10.0.0.6:8080"])
    # or in a code reward: params: {backend: remote, backend_options: {urls: [...]}}

Each program goes to the service with the fewest runs in flight among those up (``rewardhub
sandbox serve``, or SandboxFusion itself); ``concurrency`` runs per service are in flight at most.
A service that refuses connections or answers 503/429 (it did not run the program) is left out and
the program goes to the next one; a service left out is taken back once ``retry_after`` seconds
have passed and its ``GET /ready`` answers 200 (or 404: SandboxFusion has no readiness endpoint).
One program checks it; the programs that find no other service meanwhile wait for that check
rather than fail, so a batch sent as a service comes back runs whole.
A service that fails while holding a program (a 5xx, a timeout, a broken connection, an answer
that is no ``RunCodeResponse``) or answers ``SandboxError`` gives a failed result (``error`` set),
which the code reward reports as an error, never as a score.

SandboxFusion compiles and runs in one request, so this backend has no separate builds
(``builds = False``): C and C++ programs go as source and compile in each run, and ``compile_only``
builds or prebuilt executables are failed with a message saying so.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from .errors import ProgramError, SandboxUnavailableError
from .fusion import from_response, to_request
from .program import Program, SandboxResult

__all__ = ["CHECK_TIMEOUT", "NOT_RUN", "REQUEST_MARGIN", "RemoteBackend", "URLS_ENV"]

URLS_ENV = "REWARDHUB_SANDBOX_URLS"
REQUEST_MARGIN = 30.0  # seconds past the program's own budgets before a request is given up
NOT_RUN = (429, 503)  # statuses of a service that refused the program: it never ran there
CHECK_TIMEOUT = 5.0


class _Refused(Exception):
    """The service did not take the program (it never ran there): try another."""


class RemoteBackend:
    """Runs programs on SandboxFusion-compatible services over HTTP."""

    name = "remote"
    builds = False

    def __init__(self, *, urls: Sequence[str] | str | None = None, concurrency: int = 8, retry_after: float = 5.0,
                 token: str | None = None, request_margin: float = REQUEST_MARGIN):
        import httpx

        given = urls if urls is not None else os.environ.get(URLS_ENV, "")
        listed = [u.strip().rstrip("/") for u in (given.split(",") if isinstance(given, str) else given) if u.strip()]
        if not listed:
            raise SandboxUnavailableError(f"the remote backend needs service URLs: pass urls=[...] (backend_options "
                                          f"in a config) or set {URLS_ENV}=http://host:8080,http://host2:8080")
        if concurrency < 1:
            raise SandboxUnavailableError(f"remote backend concurrency must be at least 1; got {concurrency}")
        if not request_margin > 0:
            raise SandboxUnavailableError(f"remote backend request_margin must be positive; got {request_margin}")
        self.urls = listed
        self.workers = concurrency * len(listed)
        self.retry_after, self.request_margin = retry_after, request_margin
        self._inflight = dict.fromkeys(listed, 0)
        self._down_until: dict[str, float] = {}  # services left out, until when
        self._checking: dict[str, threading.Event] = {}  # services being checked: set when the check ends
        self._lock = threading.Lock()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        # Idle connections are dropped well before a service's keep-alive would close one under a request.
        self._client = httpx.Client(headers=headers, limits=httpx.Limits(max_connections=self.workers,
                                                                               keepalive_expiry=2.0))
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="rewardhub-remote-sandbox")

    def _choose(self, tried: set[str]) -> tuple[str, bool] | threading.Event | None:
        """A service not tried yet (counted in flight), and whether it must pass a check first: a
        left-out service whose time is up is checked by one caller; else the least busy one up. When
        none is free but one is being checked, the check's event (wait for it, then choose again)."""
        with self._lock:
            now = time.monotonic()
            candidates = [u for u in self.urls if u not in tried and self._down_until.get(u, 0.0) <= now]
            if not candidates:
                return next((event for u, event in self._checking.items() if u not in tried), None)
            due = [u for u in candidates if u in self._down_until]
            if due:
                url = due[0]
                self._down_until[url] = now + self.retry_after  # the others leave it out while it is checked
                self._checking[url] = threading.Event()
            else:
                url = min(candidates, key=self._inflight.__getitem__)
            self._inflight[url] += 1
            return url, bool(due)

    def _left_out(self, url: str) -> None:
        with self._lock:
            self._down_until[url] = time.monotonic() + self.retry_after

    def _check(self, url: str) -> None:
        """Take a left-out service back if its ``/ready`` says so; raises _Refused if not. Those waiting
        for the check are told when it ends, either way."""
        import httpx

        try:
            try:
                status = self._client.get(f"{url}/ready", timeout=CHECK_TIMEOUT).status_code
            except httpx.HTTPError as exc:
                raise _Refused(f"{url}: not back ({type(exc).__name__}: {exc})") from None
            if status not in (200, 404):
                raise _Refused(f"{url}: not back (/ready answered {status})")
            with self._lock:
                self._down_until.pop(url, None)
        finally:
            with self._lock:
                event = self._checking.pop(url, None)
            if event is not None:
                event.set()

    def run(self, program: Program) -> SandboxResult:
        """Run one program on the least busy service that is up."""
        try:
            body = to_request(program)
        except ProgramError as exc:
            return SandboxResult.failed(str(exc))
        tried: set[str] = set()
        problems = []
        while (chosen := self._choose(tried)) is not None:
            if isinstance(chosen, threading.Event):  # another program is checking a service: its answer decides
                chosen.wait(CHECK_TIMEOUT + 1.0)
                continue
            url, check = chosen
            tried.add(url)
            try:
                if check:
                    self._check(url)
                return self._post(url, program, body)
            except _Refused as exc:
                self._left_out(url)
                problems.append(str(exc))
            finally:
                with self._lock:
                    self._inflight[url] -= 1
        return SandboxResult.failed("no sandbox service took the program: " + ("; ".join(problems) or
                                    f"all of {', '.join(self.urls)} were left out after refusing programs"))

    def _post(self, url: str, program: Program, body: dict[str, Any]) -> SandboxResult:
        """The program's result from ``url``; raises _Refused when the service never ran it."""
        import httpx

        budget = program.timeout + program.compile_budget + self.request_margin
        try:
            reply = self._client.post(f"{url}/run_code", json=body, timeout=httpx.Timeout(budget, connect=5.0))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # it never got the program
            raise _Refused(f"{url}: {type(exc).__name__}: {exc}") from None
        except httpx.HTTPError as exc:
            return SandboxResult.failed(f"sandbox service {url} failed while running the program: "
                                        f"{type(exc).__name__}: {exc}")
        if reply.status_code in NOT_RUN:
            raise _Refused(f"{url}: answered {reply.status_code} ({reply.text[:200]})")
        if reply.status_code != 200:
            return SandboxResult.failed(f"sandbox service {url} answered {reply.status_code}: {reply.text[:300]}")
        try:
            answer: Any = reply.json()
        except ValueError:
            answer = reply.text
        return from_response(program, answer)

    def submit(self, program: Program) -> Future:
        return self._executor.submit(self.run, program)

    def run_many(self, programs: Sequence[Program]) -> list[SandboxResult]:
        return [future.result() for future in [self.submit(p) for p in programs]]

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._client.close()
