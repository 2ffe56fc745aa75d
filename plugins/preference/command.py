"""``rewardhub pairs`` and ``rewardhub select``: DPO pairs and SFT selections from scored completions."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl

__all__ = ["EXIT_OK", "register_commands"]

if TYPE_CHECKING:
    from ..preference import Stats

EXIT_OK = 0

_INPUT_HELP = ("JSONL (- for stdin), Parquet or a saved datasets folder; rows have prompt, completion and, "
               "when already scored, reward/rewards. A prompt's completions must be on consecutive rows "
               "(as `rewardhub score` writes them) unless --spill is given")
_OUTPUT_HELP = "output: .jsonl (default: - for stdout), .parquet, or any other path for a saved datasets folder"


@hookimpl
def register_commands(subparsers: argparse._SubParsersAction) -> None:
    pairs = subparsers.add_parser(
        "pairs", help="build DPO preference pairs (prompt, chosen, rejected) from scored completions",
        description="Group completions by prompt, score them (or reuse their scores) and write DPO pairs in "
                    "TRL's preference format, with scores, margin and reward components as extra columns.",
    )
    _add_common(pairs)
    pairs.add_argument("--mode", choices=("best-worst", "all"), default="best-worst",
                       help="best-worst: one pair per prompt (default); all: every pair above the margin")
    pairs.add_argument("--min-margin", type=float, default=0.0, metavar="X",
                       help="drop pairs whose score difference is below X (ties are always dropped)")
    pairs.add_argument("--max-pairs", type=int, metavar="N", help="with --mode all: at most N pairs per prompt "
                       "(largest margins first)")
    pairs.set_defaults(handler=_pairs)

    select = subparsers.add_parser(
        "select", help="best-of-N / threshold selection of completions for SFT",
        description="Keep the best completions of each prompt (and/or those above a score) as SFT data in TRL's "
                    "prompt/completion or messages format.",
    )
    _add_common(select)
    select.add_argument("--top-k", type=int, default=1, metavar="K", help="keep the K best per prompt (default 1)")
    select.add_argument("--all", dest="top_k", action="store_const", const=None,
                        help="no per-prompt cap: keep every completion that passes --min-score and --require")
    select.add_argument("--min-score", type=float, metavar="X", help="keep only completions scoring at least X")
    select.add_argument("--format", choices=("prompt-completion", "messages"), default="prompt-completion",
                        help="TRL dataset format of the output (default prompt-completion)")
    select.set_defaults(handler=_select)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help=_INPUT_HELP)
    parser.add_argument("-o", "--output", default="-", help=_OUTPUT_HELP)
    parser.add_argument("--config", "-c", help="reward config to score rows that have no scores yet")
    parser.add_argument("--rescore", action="store_true", help="score every row with --config, ignoring scores "
                        "already in the input")
    parser.add_argument("--by", default="reward", metavar="ALIAS",
                        help="rank by this reward alias instead of the weighted total 'reward'")
    parser.add_argument("--require", action="append", default=[], metavar="ALIAS>=X",
                        help="a chosen/selected completion must meet this, e.g. 'format>=1' (quoted: > and < are "
                             "shell redirections; operators >= > <= < == !=; repeatable, all must hold)")
    parser.add_argument("--keep", action="append", default=[], metavar="COLUMN",
                        help="copy this input column into the output (repeatable)")
    parser.add_argument("--spill", action="store_true", help="accept prompts in any order: group rows through a "
                        "temporary on-disk index")
    parser.add_argument("--batch-size", type=int, default=64, help="rows per scoring batch (default 64)")
    parser.add_argument("--progress", action="store_true", help="force the progress bar (default: on a TTY)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary")


def _pairs(args: argparse.Namespace) -> int:
    from ..preference import PairOptions, write_pairs

    options = PairOptions(by=args.by, require=args.require, keep=args.keep, min_margin=args.min_margin,
                          mode=args.mode, max_pairs=args.max_pairs)
    return _report(write_pairs(args.input, args.output, options, **_run_args(args)), args)


def _select(args: argparse.Namespace) -> int:
    from ..preference import SelectOptions, write_selection

    options = SelectOptions(by=args.by, require=args.require, keep=args.keep, top_k=args.top_k,
                            min_score=args.min_score, format=args.format)
    return _report(write_selection(args.input, args.output, options, **_run_args(args)), args)


def _run_args(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "config": args.config,
        "rescore": args.rescore,
        "batch_size": args.batch_size,
        "unsorted": "spill" if args.spill else "error",
        "progress": not args.quiet and (args.progress or sys.stderr.isatty()),
    }


def _report(stats: Stats, args: argparse.Namespace) -> int:
    if not args.quiet:
        print(stats.summary(), file=sys.stderr)
    return EXIT_OK
