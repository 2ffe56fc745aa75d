"""``rewardhub sandbox``: which code-execution backends work here, and if not, what is missing."""

from __future__ import annotations

import argparse

from rewardhub import hookimpl

from .backends import backend_factories, get_backend
from .errors import SandboxError
from .program import Program

PROBE = "import os\nprint(os.getuid() != 0 and not os.path.exists('/etc/shadow'))"


@hookimpl
def register_commands(subparsers):
    parser = subparsers.add_parser("sandbox", help="check which sandbox backends can run code here")
    parser.add_argument("--backend", action="append", help="check only this backend (repeatable)")
    parser.set_defaults(handler=check_backends)


def check_backends(args: argparse.Namespace) -> int:
    """Run a probe program on each backend; exit 0 when at least one isolated backend works."""
    names = args.backend or [name for name in sorted(backend_factories()) if name != "unsafe"]
    working = 0
    for name in names:
        try:
            result = get_backend(name).run_many([Program(PROBE, timeout=10)])[0]
        except SandboxError as exc:
            print(f"{name}: unavailable: {exc}")
            continue
        if result.error is not None or not result.ok:
            print(f"{name}: failed: {result.error or result.reason} {result.stderr.strip()[-300:]}")
        elif name == "unsafe":
            print(f"{name}: runs code WITHOUT isolation ({result.duration * 1000:.1f} ms)")
        else:
            isolated = result.stdout.strip() == "True"
            print(f"{name}: ok ({'isolated' if isolated else 'runs, but as root or with host files visible'}, "
                  f"{result.duration * 1000:.1f} ms per run)")
            memory = getattr(get_backend(name), "memory_limit", None)
            if memory:
                print(f"{name}: memory limit: {memory}")
            working += isolated
    return 0 if working else 1
