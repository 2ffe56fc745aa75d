"""The trainer-side commands, registered through the ``register_commands`` hook:
``rewardhub serve`` (the HTTP reward server) and ``rewardhub train-rm`` (train a reward model).

    rewardhub train-rm Qwen/Qwen2.5-0.5B prefs.jsonl -o my-rm --max-steps 500 --lora
    rewardhub score --config rm.yaml rollouts.jsonl     # rm.yaml: {name: reward_model, params: {model: my-rm}}

Kept import-light: starlette, uvicorn, torch, TRL and the rewards load only when a command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from rewardhub import hookimpl
from rewardhub.cli import add_strict

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_REWARD_TIMEOUT",
    "register_commands",
    "run_route",
    "run_serve",
    "run_train_rm",
]

CONFIG_ENV = "REWARDHUB_CONFIG"


@hookimpl
def register_commands(subparsers):
    _add_serve(subparsers)
    _add_route(subparsers)
    _add_train_rm(subparsers)


# Long enough for a sandboxed code batch; short enough that a stuck reward answers well inside
# OpenRLHF's 180 s request timeout instead of wedging the server.
DEFAULT_REWARD_TIMEOUT = 60.0


def _add_serve(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve a reward config over HTTP (OpenRLHF protocol, native /score, /health)",
        description="Serve a reward config over HTTP: POST / or /get_reward (OpenRLHF), POST /score "
        "(rows -> values, components, reasons), GET /health.",
    )
    parser.add_argument("--config", default=os.environ.get(CONFIG_ENV),
                        help=f"reward config (.yaml/.yml/.toml/.json; default: ${CONFIG_ENV})")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1, local only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    parser.add_argument("--token-env", metavar="VAR", help="require 'Authorization: Bearer $VAR' on scoring endpoints")
    parser.add_argument("--max-body-mb", type=_positive(float), default=16.0,
                        help="largest request body in MiB (default: 16)")
    parser.add_argument("--threads", type=_positive(int), default=32, help="threads for synchronous rewards (default: 32)")
    parser.add_argument("--label-column", default="solution", help="column OpenRLHF 'labels' fill (default: solution)")
    parser.add_argument("--abstain-value", type=float, default=0.0,
                        help="reward sent to OpenRLHF where every reward abstained (default: 0.0)")
    parser.add_argument("--strip-tokens", metavar="TOKENS", default=None,
                        help="comma-separated padding/EOS strings stripped from both ends of OpenRLHF queries "
                        "(default: common ones such as <pad>, <|im_end|>, </s>, <|eot_id|>; '' for none)")
    parser.add_argument("--group-size", type=_positive(int), default=None,
                        help="completions per prompt to assemble before scoring (OpenRLHF --rollout.n_samples_per_prompt, "
                        "verl rollout.n); default: the group rewards' own group_size, none without group rewards")
    parser.add_argument("--group-timeout", type=_positive(float), default=None,
                        help="seconds a group may take to fill before its group rewards abstain "
                        "(default: 120, below OpenRLHF's 180 s request timeout)")
    parser.add_argument("--timeout", type=_positive(float), default=DEFAULT_REWARD_TIMEOUT,
                        help="seconds a reward may take on one request's batch, for config entries that set no "
                        f"'timeout' of their own; past it unfinished samples time out (default: {DEFAULT_REWARD_TIMEOUT:g})")
    _add_step_counting(parser)
    parser.add_argument("--no-monitor", dest="monitor", action="store_false",
                        help="do not watch for reward hacking (GET /hacking then answers 404)")
    parser.add_argument("--no-access-log", dest="access_log", action="store_false",
                        help="do not log one line per request to stderr")
    add_strict(parser)
    _add_drain_timeout(parser)
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    parser.set_defaults(handler=run_serve)


def _add_step_counting(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--samples-per-step", type=_positive(int), default=None,
                        help="count the trainer's step from samples when requests carry no 'step' (for scheduled "
                        "weights and the hacking monitor's windows): verl train_batch_size * rollout.n, "
                        "OpenRLHF rollout_batch_size * n_samples_per_prompt (behind `rewardhub route`, give it "
                        "to the router, which counts once and sends the step to the replicas)")
    parser.add_argument("--start-step", type=_at_least_zero, default=None,
                        help="with --samples-per-step: the step the count starts at (a resumed run)")
    parser.add_argument("--step-file", metavar="PATH", default=None,
                        help="with --samples-per-step: keep the count in PATH, so a restart goes on where it "
                        "stopped (--start-step, when given, wins over it)")


def _at_least_zero(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _add_drain_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--drain-timeout", type=_positive(float), default=None,
                        help="on SIGTERM: seconds to let requests in flight finish (new ones get 503) before "
                        "exiting (default: 150)")


def _add_route(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "route",
        help="one front for several `rewardhub serve` replicas: each group always to one replica",
        description="Forward OpenRLHF (POST /, /get_reward) and native (POST /score) requests to reward server "
        "replicas by consistent hashing on each sample's group key (OpenRLHF's prompt, the native 'group' "
        "field), so group assembly works behind it; replicas that fail are routed around. GET /health, "
        "/ready, /metrics.",
    )
    parser.add_argument("--replicas", required=True, metavar="URL,URL,...",
                        help="base URLs of the `rewardhub serve` replicas, comma-separated")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1, local only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    parser.add_argument("--token-env", metavar="VAR", help="require 'Authorization: Bearer $VAR' (also passed on)")
    parser.add_argument("--check-interval", type=_positive(float), default=1.0,
                        help="seconds between readiness checks of each replica (default: 1)")
    parser.add_argument("--check-timeout", type=_positive(float), default=5.0,
                        help="seconds a readiness check waits; 3 in a row without an answer mark a replica "
                        "down (default: 5)")
    parser.add_argument("--request-timeout", type=_positive(float), default=170.0,
                        help="seconds a forward waits for its replica before answering 503 (retryable); keep it "
                        "below the clients' own timeout (default: 170, below OpenRLHF's 180)")
    parser.add_argument("--max-body-mb", type=_positive(float), default=16.0,
                        help="largest request body in MiB (default: 16)")
    _add_step_counting(parser)
    _add_drain_timeout(parser)
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    parser.set_defaults(handler=run_route)


def run_route(args: argparse.Namespace) -> int:
    replicas = [url.strip() for url in args.replicas.split(",") if url.strip()]
    bad = [url for url in replicas if not url.startswith(("http://", "https://"))]
    if not replicas or bad:
        print(f"rewardhub route: --replicas needs http(s) base URLs, comma-separated; got {args.replicas!r}",
              file=sys.stderr)
        return 2
    token = _token(args, "route")
    if token is False:
        return 2
    from .router import route

    route(replicas, host=args.host, port=args.port, log_level=args.log_level, token=token,
          check_interval=args.check_interval, max_body_bytes=int(args.max_body_mb * 1024 * 1024),
          drain_timeout=args.drain_timeout, samples_per_step=args.samples_per_step, start_step=args.start_step,
          step_file=args.step_file, check_timeout=args.check_timeout, request_timeout=args.request_timeout)
    return 0


def _token(args: argparse.Namespace, command: str) -> str | None | bool:
    """The bearer token ``--token-env`` names (None without it; False, with a message, when it is unset)."""
    if not args.token_env:
        return None
    token = os.environ.get(args.token_env)
    if not token:
        print(f"rewardhub {command}: --token-env {args.token_env}: that environment variable is not set "
              f"or empty", file=sys.stderr)
        return False
    return token


def _positive(kind: type) -> object:
    """An argparse type accepting only numbers > 0 of ``kind`` (bad values exit 2 with a message)."""

    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def run_serve(args: argparse.Namespace) -> int:
    """Start the server; returns an exit code (2 when the token variable is named but unset)."""
    if not args.config:
        print(f"rewardhub serve: no reward config: pass --config rewards.yaml or set {CONFIG_ENV}", file=sys.stderr)
        return 2
    token = _token(args, "serve")
    if token is False:
        return 2
    from .groups import DEFAULT_GROUP_TIMEOUT
    from .openrlhf import STRIP_TOKENS
    from .server import serve

    strip = STRIP_TOKENS if args.strip_tokens is None else tuple(t for t in args.strip_tokens.split(",") if t)
    stopped = serve(  # a config error (e.g. group rewards without a group size) exits 2 with its message
        args.config, host=args.host, port=args.port, log_level=args.log_level, token=token,
        max_body_bytes=int(args.max_body_mb * 1024 * 1024), threads=args.threads,
        label_column=args.label_column, abstain_value=args.abstain_value, strip_tokens=strip,
        group_size=args.group_size, group_timeout=args.group_timeout or DEFAULT_GROUP_TIMEOUT, access_log=args.access_log,
        reward_timeout=args.timeout, samples_per_step=args.samples_per_step, monitor=args.monitor,
        drain_timeout=args.drain_timeout, start_step=args.start_step, step_file=args.step_file, strict=args.strict,
    )
    if stopped is not None:
        print(f"rewardhub serve: stopped at a reward that is not scoring (--strict): {stopped}", file=sys.stderr)
        return 2
    return 0


def _add_train_rm(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train-rm",
        help="train a reward model (TRL RewardTrainer) on chosen/rejected pairs",
        description="Train a one-label sequence classifier on preference pairs and save a folder that the "
        "`reward_model` reward (and TRL's GRPOTrainer) loads as is. Prints the final metrics as JSON.",
    )
    parser.add_argument("model", help="base model: local folder or Hugging Face Hub id (causal LM or classifier)")
    parser.add_argument("data", help="preference pairs: JSONL, Parquet or a saved datasets folder "
                        "with 'chosen' and 'rejected' (and optionally 'prompt')")
    parser.add_argument("-o", "--output", required=True, help="folder to save the trained reward model in")
    parser.add_argument("--eval-data", help="held-out pairs (same formats); default: --eval-fraction of DATA")
    parser.add_argument("--eval-fraction", type=float, default=0.0, help="share of DATA held out for evaluation")
    parser.add_argument("--tokenizer", help="tokenizer folder or hub id (default: the model's)")
    parser.add_argument("--max-steps", type=int, default=-1, help="optimizer steps (default: run --epochs)")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=8, help="pairs per device per step")
    parser.add_argument("--gradient-accumulation-steps", type=int, default=1)
    parser.add_argument("--max-length", type=int, default=1024, help="pairs longer than this are dropped")
    parser.add_argument("--lora", action="store_true", help="train LoRA adapters (merged into the saved weights)")
    parser.add_argument("--lora-r", type=int, default=16)
    parser.add_argument("--lora-alpha", type=int, default=32)
    parser.add_argument("--lora-dropout", type=float, default=0.0)
    parser.add_argument("--bf16", action="store_true", help="train in bfloat16 mixed precision")
    parser.add_argument("--gradient-checkpointing", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logging-steps", type=int, default=10)
    parser.set_defaults(handler=run_train_rm)


def run_train_rm(args: argparse.Namespace) -> int:
    """Train, save, print metrics as JSON (rewardhub errors, e.g. bad data, exit with status 2 via the CLI)."""
    from .reward_model_training import LoraOptions, train_reward_model

    lora = LoraOptions(r=args.lora_r, alpha=args.lora_alpha, dropout=args.lora_dropout) if args.lora else None
    with contextlib.redirect_stdout(sys.stderr):  # the trainer prints its logs; stdout holds only the JSON
        result = train_reward_model(
            args.model,
            args.data,
            args.output,
            eval_data=args.eval_data,
            eval_fraction=args.eval_fraction,
            tokenizer=args.tokenizer,
            max_steps=args.max_steps,
            epochs=args.epochs,
            learning_rate=args.learning_rate,
            batch_size=args.batch_size,
            gradient_accumulation_steps=args.gradient_accumulation_steps,
            max_length=args.max_length,
            lora=lora,
            seed=args.seed,
            logging_steps=args.logging_steps,
            gradient_checkpointing=args.gradient_checkpointing,
            trainer_args={"bf16": args.bf16},
        )
    print(json.dumps({"output": str(result.output_dir), "metrics": result.metrics}, indent=2))
    print(f"saved reward model to {result.output_dir}", file=sys.stderr)
    return 0
