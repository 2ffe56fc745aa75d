"""rewardhub.sandbox: run untrusted programs fast and isolated (local namespaces, docker, plugins).

    from rewardhub import sandbox
    result = sandbox.run("print(input()[::-1])", stdin="abc", timeout=2)
    result.stdout, result.exit_code, result.timed_out, result.reason
    results = sandbox.run_many([sandbox.Program(code, stdin=case) for case in cases])
    for index, result in sandbox.run_each(programs):  # as they finish, for batches too big to hold
        ...
"""

from .api import run, run_each, run_many
from .backends import Backend, backend_factories, close_backends, get_backend
from .build import Build
from .errors import (
    MemoryLimitWarning,
    ProgramError,
    SandboxError,
    SandboxUnavailableError,
    UnknownBackendError,
)
from .precompiled import precompile
from .program import LANGUAGES, Program, SandboxResult

__all__ = [
    "LANGUAGES",
    "Backend",
    "Build",
    "MemoryLimitWarning",
    "Program",
    "ProgramError",
    "SandboxError",
    "SandboxResult",
    "SandboxUnavailableError",
    "UnknownBackendError",
    "backend_factories",
    "close_backends",
    "get_backend",
    "precompile",
    "run",
    "run_each",
    "run_many",
]
