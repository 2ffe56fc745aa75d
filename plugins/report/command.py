"""The ``rewardhub report`` subcommand, registered through the same hook third-party plugins use."""

from __future__ import annotations

import argparse
import sys

from ..hookspecs import hookimpl


@hookimpl
def register_commands(subparsers):
    parser = subparsers.add_parser(
        "report",
        help="HTML report of scored completions (distributions, spread, agreement, extremes)",
        description=(
            "Write one self-contained HTML page about the rewards in SCORED (the output of "
            "`rewardhub score`): per-reward distributions, None reasons, errors, timeouts and speed; "
            "within-group spread; agreement between rewards; top and bottom completions; and, with "
            "--trainer-state, the per-reward means over training steps."
        ),
    )
    parser.add_argument("scored", metavar="SCORED", help="scored rows: JSONL (- for stdin), Parquet or a datasets folder")
    parser.add_argument("-o", "--output", default="report.html", help="HTML file to write (default: report.html)")
    parser.add_argument("--trainer-state", metavar="JSON", help="a TRL trainer_state.json to plot reward means over steps")
    parser.add_argument("--title", help="page title (default: derived from SCORED)")
    parser.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    """Write the report (a ``ReportError`` on bad input reaches the CLI, which prints it and exits 2)."""
    from .page import write_report

    path = write_report(args.scored, args.output, trainer_state=args.trainer_state, title=args.title)
    print(f"wrote {path}", file=sys.stderr)
    return 0
