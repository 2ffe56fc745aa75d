"""The ``rewardhub report`` subcommand, registered through the same hook third-party plugins use."""

from __future__ import annotations

import argparse
import sys

from ..hookspecs import hookimpl

__all__ = ["register_commands", "run_report"]


@hookimpl
def register_commands(subparsers):
    parser = subparsers.add_parser(
        "report",
        help="HTML report of scored completions (distributions, spread, agreement, extremes)",
        description=(
            "Write one self-contained HTML page about the rewards in SCORED (the output of "
            "`rewardhub score`): per-reward distributions, None reasons, errors, timeouts and speed; "
            "within-group spread; agreement between rewards; top and bottom completions; with "
            "--trainer-state, the per-reward means over training steps; and, over scored files of successive "
            "steps (or rows with a 'step' column), the reward-hacking monitor's alarms and figures."
        ),
    )
    parser.add_argument("scored", metavar="SCORED", nargs="+",
                        help="scored rows: JSONL (- for stdin), Parquet or a datasets folder; several = successive steps")
    parser.add_argument("-o", "--output", default="report.html", help="HTML file to write (default: report.html)")
    parser.add_argument("--trainer-state", metavar="JSON", help="a TRL trainer_state.json to plot reward means over steps")
    parser.add_argument("--title", help="page title (default: derived from SCORED)")
    parser.add_argument("--config", help="the reward config: roles, weights and routes for the hacking monitor")
    parser.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    """Write the report (a ``ReportError`` on bad input reaches the CLI, which prints it and exits 2)."""
    from .page import write_report

    scored = args.scored[0] if len(args.scored) == 1 else args.scored
    path = write_report(scored, args.output, trainer_state=args.trainer_state, title=args.title, config=args.config)
    print(f"wrote {path}", file=sys.stderr)
    return 0
