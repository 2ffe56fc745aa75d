"""The ``rewardhub`` command line. Subcommands come from the ``register_commands`` hook; this module
is the built-in plugin that registers the core's own (list, score, check).

Exit codes: 0 ok, 1 check failures, 2 usage or config errors.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ._manager import load_plugins, plugin_hooks, pm
from .errors import RewardhubError, RewardNotScoringWarning
from .hookspecs import hookimpl

__all__ = ["add_strict", "build_parser", "register_commands"]

EXIT_OK, EXIT_FAILURES, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="rewardhub", description="Reward functions and verifiers for RL post-training.")
    parser.add_argument("--version", action="version", version=f"rewardhub {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    load_plugins()
    pm.hook.register_commands(subparsers=subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        with _sigterm_exits_cleanly():
            return int(args.handler(args) or EXIT_OK)
    except RewardhubError as exc:
        print(f"rewardhub: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RewardNotScoringWarning as exc:  # --strict, or the caller's own warnings filter
        print(f"rewardhub: error: stopped at a reward that is not scoring: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `rewardhub score ... | head`
        return EXIT_OK
    except OSError as exc:  # an output path in a missing folder, a file we may not write...
        print(f"rewardhub: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


@contextmanager
def _sigterm_exits_cleanly() -> Iterator[None]:
    """While a command runs, SIGTERM (a supervisor stopping it) ends it as Ctrl-C does, through its
    cleanup (a staged output is removed) with exit code 143; processes forked meanwhile keep the
    default action. Nothing changes where a SIGTERM handler is already set or off the main thread."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return
    pid = os.getpid()

    def terminate(signum: int, frame: object) -> None:
        if os.getpid() != pid:  # a forked child: die as it would have
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def add_strict(parser: argparse.ArgumentParser) -> None:
    """``--strict``, for the commands that score (``score``, ``serve``)."""
    parser.add_argument("--strict", action="store_true",
                        help="stop (exit 2) at the first reward that is not scoring (a column it needs is missing, "
                        "or every sample fails) instead of warning and going on without it")


@hookimpl
def register_commands(subparsers: argparse._SubParsersAction) -> None:
    """The core's own subcommands: list, score, check."""
    list_parser = subparsers.add_parser("list", help="list installed rewards and plugins")
    list_parser.add_argument("--json", action="store_true", help="machine-readable output")
    list_parser.add_argument("--plugins", action="store_true", help="list plugins and the hooks they implement")
    list_parser.set_defaults(handler=_list)

    score_parser = subparsers.add_parser("score", help="score a file of completions with a reward config")
    score_parser.add_argument("--config", "-c", required=True, help="reward config (.yaml, .toml or .json)")
    score_parser.add_argument("input", help="JSONL (or - for stdin), Parquet, or a saved datasets folder")
    score_parser.add_argument("-o", "--output", default="-",
                              help="output by extension: .jsonl (default: - for stdout), .parquet, else a datasets folder")
    score_parser.add_argument("--batch-size", type=int, default=256,
                              help="rows per scoring batch (default 256); batches end between prompts, and a "
                              "prompt with over max(batch size, 1024) rows is split")
    score_parser.add_argument("--report", metavar="HTML", help="also write an HTML reward report")
    score_parser.add_argument("--progress", action="store_true", help="force the progress bar (default: on a TTY)")
    score_parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary")
    add_strict(score_parser)
    score_parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                              help="score on a Ray cluster with Ray Data: ADDRESS as ray.init takes it (auto, HOST:PORT, "
                              "ray://...); without it $RAY_ADDRESS, else a local Ray (needs rewardhub[ray])")
    score_parser.add_argument("--actors", type=int, default=None,
                              help="with --ray: scoring actors, each holding the reward set (default: one per CPU)")
    score_parser.set_defaults(handler=_score)

    check_parser = subparsers.add_parser("check", help="run offline verifier test cases (YAML case files)")
    check_parser.add_argument("cases", nargs="+", help="case files")
    check_parser.add_argument("--json", action="store_true", help="print every result as JSON")
    check_parser.set_defaults(handler=_check)


def _list(args: argparse.Namespace) -> int:
    from ._registry import list_rewards

    if args.plugins:
        rows = plugin_hooks()
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            for row in rows:
                print(f"{row['name']}  [{row['source']}]  hooks: {', '.join(row['hooks'])}")
        return EXIT_OK
    rewards = list_rewards()
    if args.json:
        print(json.dumps(rewards, indent=2, default=str))
        return EXIT_OK
    for info in rewards:
        print(f"{info['name']}  [{info['source']}]")
        if info["description"]:
            print(f"    {info['description']}")
        params = ", ".join(
            name if p["required"] else f"{name}={p['default']!r}" for name, p in info["params"].items()
        )
        print(f"    params: {params or '(none)'}")
    return EXIT_OK


def _score(args: argparse.Namespace) -> int:
    from ._files.score_file import score_file

    if args.batch_size < 1:
        print("rewardhub: error: --batch-size must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.report and args.output == "-":
        print("rewardhub: error: --report needs -o/--output (the report is built from the scored file)", file=sys.stderr)
        return EXIT_USAGE
    show_progress = not args.quiet and (args.progress or sys.stderr.isatty())
    if args.strict:
        warnings.simplefilter("error", RewardNotScoringWarning)
    if args.ray is not None:
        from .ray import score_file as score_on_ray

        if args.actors is not None and args.actors < 1:
            print("rewardhub: error: --actors must be at least 1", file=sys.stderr)
            return EXIT_USAGE
        if args.strict:  # the rewards run in the actors' processes, where this process's filter does not reach
            print("rewardhub: error: --strict works without --ray only (the rewards run in Ray's actors)",
                  file=sys.stderr)
            return EXIT_USAGE
        summary = score_on_ray(args.config, args.input, args.output, address=args.ray or None,
                               batch_size=args.batch_size, concurrency=args.actors, quiet=args.quiet)
    else:
        summary = score_file(args.config, args.input, args.output, batch_size=args.batch_size, progress=show_progress)
    if not args.quiet:
        print(summary.render(), file=sys.stderr)
    if args.report:
        from .report.page import write_report

        write_report(args.output, args.report)
        if not args.quiet:
            print(f"report written to {args.report}", file=sys.stderr)
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from .testing.cases import load_case_file, render_failures, run_cases

    results = []
    for path in args.cases:
        results.extend(run_cases(load_case_file(path)))
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2, default=str))
    failed = [r for r in results if not r.passed]
    if failed and not args.json:
        print(render_failures(failed))
    # With --json, stdout is the JSON document alone.
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed", file=sys.stderr if args.json else sys.stdout)
    return EXIT_FAILURES if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
