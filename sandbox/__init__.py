"""rewardhub.sandbox: run untrusted programs fast and isolated (local namespaces, docker, plugins).

    from rewardhub import sandbox
    result = sandbox.run("print(input()[::-1])", stdin="abc", timeout=2)
    result.stdout, result.exit_code, result.timed_out, result.reason
    results = sandbox.run_many([sandbox.Program(code, stdin=case) for case in cases])
"""

from .api import run, run_many
from .backends import Backend, backend_factories, close_backends, get_backend
from .errors import ProgramError, SandboxError, SandboxUnavailableError, UnknownBackendError
from .program import LANGUAGES, Program, SandboxResult

__all__ = [
    "LANGUAGES",
    "Backend",
    "Program",
    "ProgramError",
    "SandboxError",
    "SandboxResult",
    "SandboxUnavailableError",
    "UnknownBackendError",
    "backend_factories",
    "close_backends",
    "get_backend",
    "run",
    "run_many",
]
