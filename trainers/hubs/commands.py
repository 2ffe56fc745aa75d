"""``rewardhub hub``: datasets from the hubs rewardhub scores, registered through the ``register_commands`` hook.

    rewardhub hub reasoning-gym --list
    rewardhub hub reasoning-gym chain_sum -n 1000 --seed 1 -o chain_sum.jsonl
    rewardhub hub reasoning-gym sudoku -n 200 --config '{"min_empty": 20}' --system-prompt default -o sudoku.parquet

Kept import-light: the hub's package loads only when a command runs.
"""

from __future__ import annotations

import argparse
import json
import sys

from rewardhub import ConfigError, hookimpl

from ..commands import _positive

__all__ = ["register_commands"]


@hookimpl
def register_commands(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("hub", help="write datasets of other hubs' tasks (reasoning-gym) to train on",
                                   description="Write a dataset of another hub's tasks as rows rewardhub scores.")
    hubs = parser.add_subparsers(dest="hub", metavar="HUB")
    hubs.required = True
    gym = hubs.add_parser(
        "reasoning-gym",
        help="rows of a reasoning-gym task (prompt, answer, metadata) for the reasoning_gym reward",
        description="Generate rows of a reasoning-gym task: prompt (the question), answer, metadata "
        "(source_dataset names the task). Score them with the reasoning_gym reward.",
    )
    gym.add_argument("task", nargs="?", help="task name (see --list)")
    gym.add_argument("-n", "--size", type=_positive(int), default=100, help="rows to generate (default: 100)")
    gym.add_argument("-o", "--output", default="-",
                     help="output by extension: .jsonl (default: - for stdout), .parquet, else a datasets folder")
    gym.add_argument("--seed", type=int, default=None, help="the dataset's seed (default: reasoning-gym's, random)")
    gym.add_argument("--config", metavar="JSON", default=None,
                     help="the task's config fields as a JSON object, e.g. '{\"min_terms\": 2}'")
    gym.add_argument("--system-prompt", metavar="NAME", default=None,
                     help="write the prompt as a chat with this reasoning-gym system prompt (default, DeepSeekZero, "
                     "simple, direct, chain_of_draft); default: the question alone")
    gym.add_argument("--list", action="store_true", help="list the tasks and exit")
    gym.set_defaults(handler=_reasoning_gym)


def _reasoning_gym(args: argparse.Namespace) -> int:
    from rewardhub import write_rows

    from . import reasoning_gym

    if args.list:
        print("\n".join(reasoning_gym.tasks()))
        return 0
    if not args.task:
        raise ConfigError("name a task (rewardhub hub reasoning-gym --list lists them)")
    config = _json_object(args.config) if args.config else None
    table = args.output != "-" and not args.output.lower().endswith((".jsonl", ".json", ".ndjson"))
    rows = reasoning_gym.dataset_rows(args.task, args.size, seed=args.seed, config=config,
                                      system_prompt=args.system_prompt, metadata_as_json=table)
    written = write_rows(rows, args.output)
    if args.output != "-":
        print(f"{written} {args.task} rows written to {args.output}", file=sys.stderr)
    return 0


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--config must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--config must be a JSON object; got {type(value).__name__}")
    return value
