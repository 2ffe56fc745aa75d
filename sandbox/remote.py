"""The ``remote`` backend: programs run on a fleet of SandboxFusion-compatible services.

    sandbox.run_many(programs, backend="remote", urls=["http://10.0.0.5:8080", "http://10.0.0.6:8080"])
    # or in a code reward: params: {backend: remote, backend_options: {urls: [...]}}

Each program goes to the service with the fewest runs in flight among those up (``rewardhub
sandbox serve``, or SandboxFusion itself); ``concurrency`` runs per service are in flight at most.
A service that refuses connections is left out for ``retry_after`` seconds and the program goes to
the next one (it never ran). A service that fails while holding a program, or answers
``SandboxError``, gives a failed result (``error`` set), which the code reward reports as an error,
never as a score.

SandboxFusion compiles and runs in one request, so this backend takes source programs (Python, C,
C++): ``compile_only`` builds and prebuilt executables are failed with a message saying so.
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

URLS_ENV = "REWARDHUB_SANDBOX_URLS"
REQUEST_MARGIN = 30.0  # seconds past the program's own budgets before a request is given up


class RemoteBackend:
    """Runs programs on SandboxFusion-compatible services over HTTP."""

    name = "remote"

    def __init__(self, *, urls: Sequence[str] | str | None = None, concurrency: int = 8, retry_after: float = 5.0,
                 token: str | None = None):
        import httpx

        given = urls if urls is not None else os.environ.get(URLS_ENV, "")
        listed = [u.strip().rstrip("/") for u in (given.split(",") if isinstance(given, str) else given) if u.strip()]
        if not listed:
            raise SandboxUnavailableError(f"the remote backend needs service URLs: pass urls=[...] (backend_options "
                                          f"in a config) or set {URLS_ENV}=http://host:8080,http://host2:8080")
        if concurrency < 1:
            raise SandboxUnavailableError(f"remote backend concurrency must be at least 1; got {concurrency}")
        self.urls = listed
        self.workers = concurrency * len(listed)
        self.retry_after = retry_after
        self._inflight = dict.fromkeys(listed, 0)
        self._down_until = dict.fromkeys(listed, 0.0)
        self._lock = threading.Lock()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = httpx.Client(headers=headers, limits=httpx.Limits(max_connections=self.workers,
                                                                               keepalive_expiry=2.0))
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="rewardhub-remote-sandbox")

    def _choose(self, tried: set[str]) -> str | None:
        with self._lock:
            now = time.monotonic()
            up = [u for u in self.urls if u not in tried and self._down_until[u] <= now]
            if not up:
                return None
            url = min(up, key=self._inflight.__getitem__)
            self._inflight[url] += 1
            return url

    def run(self, program: Program) -> SandboxResult:
        """Run one program on the least busy service that is up."""
        import httpx

        try:
            body = to_request(program)
        except ProgramError as exc:
            return SandboxResult.failed(str(exc))
        budget = program.timeout + program.compile_budget + REQUEST_MARGIN
        tried: set[str] = set()
        problems = []
        while (url := self._choose(tried)) is not None:
            tried.add(url)
            try:
                reply = self._client.post(f"{url}/run_code", json=body, timeout=httpx.Timeout(budget, connect=5.0))
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # it never got the program
                with self._lock:
                    self._down_until[url] = time.monotonic() + self.retry_after
                problems.append(f"{url}: {type(exc).__name__}: {exc}")
                continue
            except httpx.HTTPError as exc:
                return SandboxResult.failed(f"sandbox service {url} failed while running the program: "
                                            f"{type(exc).__name__}: {exc}")
            finally:
                with self._lock:
                    self._inflight[url] -= 1
            if reply.status_code != 200:
                return SandboxResult.failed(f"sandbox service {url} answered {reply.status_code}: {reply.text[:300]}")
            try:
                answer: Any = reply.json()
            except ValueError:
                answer = reply.text
            return from_response(program, answer)
        return SandboxResult.failed("no sandbox service reachable: " + ("; ".join(problems) or
                                    f"all of {', '.join(self.urls)} refused connections recently"))

    def submit(self, program: Program) -> Future:
        return self._executor.submit(self.run, program)

    def run_many(self, programs: Sequence[Program]) -> list[SandboxResult]:
        return [future.result() for future in [self.submit(p) for p in programs]]

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._client.close()
