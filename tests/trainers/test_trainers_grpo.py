"""Real TRL trainers (GRPO, RLOO) on a tiny local model with a composed rewardhub set."""

from __future__ import annotations

import json
import multiprocessing
import pickle
from pathlib import Path

import pytest
from serving import COMPOSED, ensure_registered

import rewardhub
from rewardhub.testing.tiny_models import make_causal_lm
from rewardhub.trainers import by_name
from rewardhub.trainers.errors import TrainerIntegrationError
from rewardhub.trainers.grpo import CompositeReward, trainer_rewards

pytestmark = pytest.mark.slow
ALIASES = ("th_contains", "length", "th_sometimes")
WEIGHTS = {"th_contains": 1.0, "length": 0.5, "th_sometimes": 0.25}


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    import torch

    torch.set_num_threads(1)
    return make_causal_lm(tmp_path_factory.mktemp("lm") / "lm")


def _dataset():
    from datasets import Dataset

    rows = [{"prompt": f"Add {a} and {a}:", "solution": str(2 * a)} for a in range(8)]
    return Dataset.from_list(rows)


def _config(trainer: str, out: Path, **extra):
    import trl

    config_class = {"grpo": trl.GRPOConfig, "rloo": trl.RLOOConfig}[trainer]
    return config_class(
        output_dir=str(out), use_cpu=True, bf16=False, activation_checkpointing=False, report_to="none",
        per_device_train_batch_size=4, num_generations=2, max_completion_length=8, max_steps=2,
        logging_steps=1, log_completions=True, save_strategy="no", seed=0, learning_rate=1e-3,
        disable_tqdm=True, **extra,
    )


def _train(trainer: str, model: Path, out: Path, *, composite: bool = False):
    import trl

    args = _config(trainer, out)
    trainer_class = {"grpo": trl.GRPOTrainer, "rloo": trl.RLOOTrainer}[trainer]
    kwargs = trainer_rewards(COMPOSED, args, composite=composite)
    run = trainer_class(model=str(model), args=args, train_dataset=_dataset(), **kwargs)
    run.train()
    return run, args


def _completions_table(run):
    """The trainer's completions table for the last generation batch (what it prints and logs)."""
    import pandas as pd

    logs = run._logs
    return pd.DataFrame({
        "prompt": list(logs["prompt"]), "completion": list(logs["completion"]),
        **{k: list(v) for k, v in logs["rewards"].items()}, **{k: list(v) for k, v in logs["extra"].items()},
    })


def _solution(prompt: str) -> str:
    return str(2 * int(prompt.split()[1]))


def _expected_total(row) -> float:
    parts = [WEIGHTS[a] * row[a] for a in ALIASES if row[a] == row[a]]  # NaN (abstained) skipped
    return sum(parts)


@pytest.mark.parametrize("trainer", ["grpo", "rloo"])
def test_trainer_runs_with_a_composed_set(trainer, tiny_lm, tmp_path):
    import pandas as pd

    run, args = _train(trainer, tiny_lm, tmp_path)
    assert args.reward_weights == [1.0, 0.5, 0.25]
    steps = [log for log in run.state.log_history if "reward" in log]
    assert len(steps) == 2
    for log in steps:
        for alias in ALIASES:
            assert f"rewards/{alias}/mean" in log
        assert log["th_contains/errors"] == 0.0  # counters from rewardhub's log_metric
        assert 0.0 <= log["th_sometimes/abstained"] <= 1.0

    table = _completions_table(run)
    assert len(table) == 4
    assert {f"{a}/reason" for a in ALIASES} <= set(table.columns)
    if trainer == "grpo":  # GRPO also writes the table to disk
        on_disk = pd.read_parquet(tmp_path / "completions" / "completions_00002.parquet")
        assert list(on_disk["th_sometimes/reason"]) == list(table["th_sometimes/reason"])
    for _, row in table.iterrows():
        text = row["completion"]
        found = _solution(row["prompt"]) in text
        assert row["th_contains"] == (1.0 if found else 0.0)
        assert row["th_contains/reason"] == ("found the solution" if found else f"missing {_solution(row['prompt'])!r}")
        assert row["length"] == pytest.approx(min(len(text) / 20, 1.0))
        if len(text) % 2 == 0:
            # An abstention reaches TRL at its group's floor (0.0: never more than a failure), or as NaN
            # (None) where the reward abstained on the whole group.
            assert row["th_sometimes"] != row["th_sometimes"] or row["th_sometimes"] == 0.0
            assert row["th_sometimes/reason"] == "even length: not applicable"
        else:
            assert row["th_sometimes"] == 0.5
            assert row["th_sometimes/reason"] == "odd length"
        assert row["length/reason"] == f"{len(text)} chars"
    # the logged weighted reward is TRL's nansum of weight * component, averaged over the batch
    last = steps[-1]
    assert last["reward"] == pytest.approx(sum(_expected_total(r) for _, r in table.iterrows()) / len(table),
                                           abs=1e-5)


def test_composite_mode_logs_components_and_applies_weights(tiny_lm, tmp_path):
    run, args = _train("grpo", tiny_lm, tmp_path, composite=True)
    assert args.reward_weights == [1.0]
    logs = [log for log in run.state.log_history if "reward" in log]
    assert all(f"{a}/mean" in log or a == "th_sometimes" for log in logs for a in ALIASES)
    table = _completions_table(run)
    assert {f"{a}/reason" for a in ALIASES} <= set(table.columns)
    for _, row in table.iterrows():
        text = row["completion"]
        length = min(len(text) / 20, 1.0)
        sometimes = 0.25 * 0.5 if len(text) % 2 else 0.0
        contains = 1.0 if _solution(row["prompt"]) in text else 0.0
        assert row["rewardhub"] == pytest.approx(contains + 0.5 * length + sometimes, abs=1e-6)


def test_trainer_rewards_refuses_conflicting_weights():
    import trl

    args = trl.GRPOConfig(output_dir="unused", use_cpu=True, report_to="none", reward_weights=[1.0, 2.0, 3.0])
    with pytest.raises(TrainerIntegrationError, match="reward_weights is already"):
        trainer_rewards(COMPOSED, args)


def test_composite_from_a_loaded_set_keeps_aliases_weights_and_gates():
    config = {"rewards": [*COMPOSED["rewards"], {"name": "th_async_len", "alias": "gated", "weight": 2.0,
                                                  "gate": {"reward": "th_contains", "threshold": 1.0}}]}
    from_set = trainer_rewards(rewardhub.load(config), composite=True)["reward_funcs"][0]
    from_dict = CompositeReward(config)
    batch = {"prompts": ["p", "p"], "completions": ["has 7", "no"], "solution": ["7", "7"]}
    assert from_set(**batch) == pytest.approx(from_dict(**batch))
    assert from_set(**batch)[1] == pytest.approx(0.5 * 2 / 20)  # gate closed: "gated" scores 0.0


def _score_in_child(reward):
    return reward(prompts=["p", "p"], completions=["has 7", "no"], solution=["7", "7"])


def test_composite_pickles_by_config_and_scores_in_a_spawned_process():
    composite = CompositeReward(COMPOSED)
    here = composite(prompts=["p", "p"], completions=["has 7", "no"], solution=["7", "7"])
    state = pickle.dumps(composite)
    assert b"th_async_len" in state and len(state) < 2000  # entries only, no reward objects
    context = multiprocessing.get_context("spawn")
    with context.Pool(1, initializer=ensure_registered) as pool:
        there = pool.apply(_score_in_child, (composite,))
    assert there == pytest.approx(here)
    assert here == pytest.approx([1.0 + 0.5 * 5 / 20 + 0.25 * 0.5, 0.5 * 2 / 20])


def test_trl_dotted_paths_resolve(tmp_path, monkeypatch):
    """`trl grpo` does module.rsplit('.', 1) + import_module + getattr: do exactly that."""
    import importlib

    def resolve(path):
        module, name = path.rsplit(".", 1)
        return getattr(importlib.import_module(module), name)

    reward = resolve("rewardhub.trainers.by_name.th_contains")
    assert reward.__name__ == "th_contains"
    assert reward(prompts=["p"], completions=["x 3"], solution=["3"]) == [1.0]
    assert resolve("rewardhub.trainers.by_name.th_contains") is reward
    assert "th_contains" in dir(by_name)
    with pytest.raises(AttributeError, match="no reward 'nope'"):
        resolve("rewardhub.trainers.by_name.nope")

    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(COMPOSED))
    monkeypatch.setenv("REWARDHUB_CONFIG", str(config))
    weighted = resolve("rewardhub.trainers.from_config.weighted")
    assert weighted(prompts=["p"], completions=["x 3"], solution=["3"]) == [pytest.approx(1.0 + 0.5 * 3 / 20 + 0.125)]
    length = resolve("rewardhub.trainers.from_config.length")
    assert length.__name__ == "length"
    with pytest.raises(AttributeError, match="no reward with alias 'nope'"):
        resolve("rewardhub.trainers.from_config.nope")


TRL_CLI_REWARDS = """
rewards:
  - {name: format_regex, alias: has_lower, weight: 1.0, params: {pattern: '[a-z]', mode: search}}
  - {name: format_regex, alias: has_digit, weight: 0.5, params: {pattern: '[0-9]', mode: search}}
"""

TRL_CLI_CONFIG = """
model_name_or_path: lm
dataset_name: data
output_dir: out
reward_funcs: [rewardhub.trainers.from_config.weighted, rewardhub.trainers.by_name.tag_count]
reward_weights: [1.0, 0.5]
use_cpu: true
bf16: false
report_to: none
per_device_train_batch_size: 4
num_generations: 2
max_completion_length: 8
max_steps: 2
logging_steps: 1
save_strategy: "no"
log_completions: true
seed: 0
"""


def test_trl_grpo_cli_with_a_whole_rewardhub_config(tiny_lm, tmp_path):
    """The real `trl grpo` command, YAML config, dotted paths: a whole config plus one built-in."""
    import os
    import re
    import shutil
    import subprocess
    import sys

    import pandas as pd

    shutil.copytree(tiny_lm, tmp_path / "lm")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text(
        "".join(json.dumps({"prompt": f"Add {a} and {a}:", "solution": str(2 * a)}) + "\n" for a in range(8))
    )
    (tmp_path / "rewards.yaml").write_text(TRL_CLI_REWARDS)
    (tmp_path / "grpo.yaml").write_text(TRL_CLI_CONFIG)
    trl = Path(sys.executable).parent / "trl"
    env = {**os.environ, "REWARDHUB_CONFIG": "rewards.yaml", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([str(trl), "grpo", "--config", "grpo.yaml"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]

    table = pd.read_parquet(tmp_path / "out" / "completions" / "completions_00002.parquet")
    assert {"rewardhub", "tag_count", "has_lower/reason", "has_digit/reason", "tag_count/reason"} <= set(table.columns)
    for _, row in table.iterrows():
        text = row["completion"]
        expected = 1.0 * bool(re.search("[a-z]", text)) + 0.5 * bool(re.search("[0-9]", text))
        assert row["rewardhub"] == pytest.approx(expected)
        assert row["tag_count"] == rewardhub.get("tag_count")(prompts=[row["prompt"]], completions=[text])[0]


def test_every_registered_reward_with_defaults_resolves_by_name():
    """Each reward whose params all have defaults is a TRL reward under by_name, or a clear config error."""
    from rewardhub._registry import REQUIRED

    resolved = 0
    for spec in rewardhub.registry:
        if any(p.default is REQUIRED for p in spec.params.values()):
            continue
        try:
            reward = getattr(by_name, spec.name)
        except rewardhub.RewardhubError as exc:  # e.g. a judge without its API key variable: says so
            assert str(exc)
            continue
        assert callable(reward) and reward.__name__ == spec.name
        resolved += 1
    assert resolved >= 1


@pytest.mark.parametrize("weights", [None, [1.0, 0.5, 0.25]])
def test_per_alias_rewards_warn_when_trl_weighs_them_otherwise(tiny_lm, tmp_path, monkeypatch, caplog, weights):
    """`trl grpo` with from_config.<alias> and no reward_weights: TRL uses 1.0 each, silently before."""
    import importlib

    import trl

    config = tmp_path / "rewards.json"
    config.write_text(json.dumps(COMPOSED))
    monkeypatch.setenv("REWARDHUB_CONFIG", str(config))
    from_config = importlib.import_module("rewardhub.trainers.from_config")
    funcs = [getattr(from_config, alias) for alias in ALIASES]
    args = _config("grpo", tmp_path / "out", reward_weights=weights)
    args.max_steps = 1
    run = trl.GRPOTrainer(model=str(tiny_lm), args=args, train_dataset=_dataset(), reward_funcs=funcs)
    with caplog.at_level("WARNING", logger="rewardhub.trainers"):
        run.train()
    warnings = [r.getMessage() for r in caplog.records if "TRL weighs" in r.getMessage()]
    if weights is None:
        assert sorted(w.split("'")[1] for w in warnings) == ["length", "th_sometimes"]  # th_contains: 1.0 either way
        assert "reward_weights is not set in the TRL config" in warnings[0]
    else:
        assert warnings == []
    assert [f.__name__ for f in funcs] == list(ALIASES)


@pytest.mark.parametrize("composite", [False, True])
def test_a_misspelt_column_is_said_once_in_a_real_grpo_run(tiny_lm, tmp_path, composite):
    """Two GRPO steps whose dataset spells the gold column 'soluton': one loud warning, NaN (not 0.0) logged."""
    import warnings

    import trl
    from datasets import Dataset

    dataset = Dataset.from_list([{"prompt": f"Add {a} and {a}:", "soluton": str(2 * a)} for a in range(8)])
    config = {"rewards": [{"name": "exact_match", "weight": 1.0}, {"name": "th_async_len", "alias": "length"}]}
    args = _config("grpo", tmp_path / "out")
    run = trl.GRPOTrainer(model=str(tiny_lm), args=args, train_dataset=dataset,
                          **trainer_rewards(config, args, composite=composite))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run.train()
    said = [str(w.message) for w in caught if issubclass(w.category, rewardhub.RewardNotScoringWarning)]
    assert len(said) == 1, said
    assert "reward 'exact_match' needs column 'solution', but the batch has only: completion_ids, soluton. " \
           "Did you mean 'soluton'?" in said[0]
    table = _completions_table(run)
    outcomes = table["exact_match/outcome"]
    assert set(outcomes) == {"error"}
    if not composite:  # TRL's own column for the reward: NaN, never a 0.0 that reads as "always wrong"
        assert table["exact_match"].isna().all()
