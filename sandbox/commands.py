"""``rewardhub sandbox``: which code-execution backends work here, and if not, what is missing;
``rewardhub sandbox serve``: the sandbox behind SandboxFusion's HTTP API (see :mod:`.service`)."""

from __future__ import annotations

import argparse
import os
import sys

from rewardhub import hookimpl
from rewardhub.http_serving import is_loopback

from .backends import Backend, backend_factories, get_backend
from .errors import SandboxError
from .program import Program

__all__ = ["HELLO", "PROBE", "check_backends", "check_languages", "register_commands", "serve_sandbox"]

PROBE = "import os\nprint(os.getuid() != 0 and not os.path.exists('/etc/shadow'))"
HELLO = {  # per language, a program that prints "hello": what `rewardhub sandbox` builds and runs
    "python": 'print("hello")',
    "c": '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }',
    "cpp": '#include <iostream>\nint main() { std::cout << "hello" << std::endl; }',
    "java": 'public class Main { public static void main(String[] a) { System.out.println("hello"); } }',
    "go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }',
    "rust": 'fn main() { println!("hello"); }',
    "javascript": 'console.log("hello")',
}


@hookimpl
def register_commands(subparsers):
    parser = subparsers.add_parser("sandbox", help="check which sandbox backends can run code here")
    parser.add_argument("--backend", action="append", help="check only this backend (repeatable)")
    parser.set_defaults(handler=check_backends)
    actions = parser.add_subparsers(dest="sandbox_command", metavar="COMMAND")
    serve = actions.add_parser("serve", help="serve the sandbox over SandboxFusion's API (POST /run_code)",
                               description="Answer SandboxFusion's POST /run_code with rewardhub's sandbox, so verl's "
                               "reward.sandbox_fusion.url (or the remote backend) can point here. GET /ready, /health.")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1, local only)")
    serve.add_argument("--port", type=int, default=8080, help="port (default: 8080, SandboxFusion's)")
    serve.add_argument("--token-env", metavar="VAR",
                       help="require 'Authorization: Bearer $VAR' to run programs (the remote backend's 'token')")
    serve.add_argument("--backend", dest="service_backend", default="auto",
                       help="sandbox backend that runs the programs (default: auto, never unsafe)")
    serve.add_argument("--workers", type=int, default=None, help="programs run at once (default: one per CPU)")
    serve.add_argument("--max-body-mb", type=float, default=64.0,
                       help="largest request body in MiB, refused before it is read (default: 64)")
    serve.add_argument("--max-timeout", type=float, default=300.0,
                       help="longest run_timeout/compile_timeout honoured, in seconds (default: 300)")
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    serve.set_defaults(handler=serve_sandbox)


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
            backend = get_backend(name)
            for what, attribute in (("memory limit", "memory_limit"), ("cpu share", "cpu_share")):
                if getattr(backend, attribute, None):
                    print(f"{name}: {what}: {getattr(backend, attribute)}")
            print(f"{name}: languages: {check_languages(backend)}")
            working += isolated
    return 0 if working else 1


def check_languages(backend: Backend) -> str:
    """Build and run a hello program in each language: which work on ``backend``, and why the others do not."""
    programs = [Program(code, language=language, timeout=10, compile_timeout=60) for language, code in HELLO.items()]
    works, broken = [], []
    for language, result in zip(HELLO, backend.run_many(programs), strict=True):
        if result.ok and result.stdout.strip() == "hello":
            works.append(language)
        else:
            why = result.error or f"{result.reason or 'wrong output'} {result.stderr.strip()[-200:]}".strip()
            broken.append(f"{language} ({why})")
    return ", ".join(works) + (f"; not working: {'; '.join(broken)}" if broken else "")


def serve_sandbox(args: argparse.Namespace) -> int:
    from .service import serve

    if args.workers is not None and args.workers < 1:
        print("rewardhub sandbox serve: --workers must be at least 1")
        return 2
    if not args.max_body_mb > 0:
        print("rewardhub sandbox serve: --max-body-mb must be greater than 0", file=sys.stderr)
        return 2
    token = os.environ.get(args.token_env) if args.token_env else None
    if args.token_env and not token:
        print(f"rewardhub sandbox serve: --token-env {args.token_env}: that environment variable is not set or "
              f"empty", file=sys.stderr)
        return 2
    if not is_loopback(args.host):
        print(f"rewardhub sandbox serve: warning: --host {args.host} lets every machine that reaches port {args.port} "
              f"run programs here" + ("" if token else "; without --token-env anyone can: set a bearer token, or "
                                      "bind 127.0.0.1 behind a proxy that authenticates"), file=sys.stderr)
    options = {"workers": args.workers} if args.workers and args.service_backend in ("auto", "local") else {}
    serve(host=args.host, port=args.port, log_level=args.log_level, backend=args.service_backend,
          max_timeout=args.max_timeout, token=token, max_body_bytes=int(args.max_body_mb * 1024 * 1024), **options)
    return 0
