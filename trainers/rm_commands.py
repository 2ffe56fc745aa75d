"""``rewardhub train-rm``: train a reward model on preference pairs from the command line.

    rewardhub train-rm Qwen/Qwen2.5-0.5B prefs.jsonl -o my-rm --max-steps 500 --lora
    rewardhub score --config rm.yaml rollouts.jsonl     # rm.yaml: {name: reward_model, params: {model: my-rm}}

Training code (torch, TRL) is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from rewardhub.hookspecs import hookimpl


@hookimpl
def register_commands(subparsers):
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
