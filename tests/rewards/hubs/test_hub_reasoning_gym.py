"""The ``reasoning_gym`` reward gives reasoning-gym 0.1.25's own numbers, for every task family.

Rows come from reasoning-gym's own datasets, go through a JSONL file as a user's would (written by
``rewardhub hub reasoning-gym``'s generator), and are scored by rewardhub; the reference is reasoning-gym's
``extract_answer`` and the generating dataset's ``score_answer`` on the original entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import hubs
import pytest
from paths import ROOT

import rewardhub
from rewardhub._files.io import iter_input

ITEMS = 2  # per task: with the four completions below, ~850 samples over the 106 tasks


@pytest.fixture(scope="module")
def gym():
    hubs.reasoning_gym()
    import reasoning_gym
    import reasoning_gym.utils

    return reasoning_gym


def completions_for(entry: dict, other: dict) -> list[str]:
    """The right answer, another item's answer, a malformed answer, and no answer tag at all."""
    return [
        f"<think>working it out</think>\n<answer>{entry['answer']}</answer>",
        f"<answer>{other['answer']}</answer>",
        "I think <answer>not an answer at all</answer>",
        f"The answer is {entry['answer']}.",
    ]


def test_every_task_scores_as_reasoning_gym_scores_it(gym, tmp_path):
    from rewardhub.trainers.hubs.reasoning_gym import dataset_rows, tasks

    names = tasks()
    assert len(names) >= 100, names
    expected, rows = [], []
    for number, task in enumerate(names):
        seed = 1000 + number
        dataset = gym.create_dataset(task, size=ITEMS, seed=seed)
        entries = list(dataset)
        written = tmp_path / f"{task}.jsonl"
        rewardhub.write_rows(dataset_rows(task, ITEMS, seed=seed), written)  # the generator gives the same items
        read_back = [record.row for record in iter_input(written)]
        assert [r["answer"] for r in read_back] == [e["answer"] for e in entries], task
        for index, (entry, row) in enumerate(zip(entries, read_back, strict=True)):
            for completion in completions_for(entry, entries[index - 1]):
                answer = gym.utils.extract_answer(completion)
                try:
                    value = float(dataset.score_answer(answer, entry))
                except Exception:  # reasoning-gym's scorer raised on the answer: rewardhub scores it 0
                    value = "raised"
                expected.append((task, completion, value))
                rows.append({"prompt": row["prompt"], "completion": completion,
                             "answer": row["answer"], "metadata": row["metadata"]})

    reward = rewardhub.get("reasoning_gym")
    result = reward.evaluate([r["prompt"] for r in rows], [r["completion"] for r in rows],
                             answer=[r["answer"] for r in rows], metadata=[r["metadata"] for r in rows])
    mismatches = []
    for (task, completion, value), got, reason in zip(expected, result.values, result.reasons, strict=True):
        want = 0.0 if value == "raised" else value
        if got != want or (value == "raised" and "scorer rejected" not in reason):
            mismatches.append((task, completion[:60], value, got, reason))
    assert not mismatches, mismatches[:10]
    correct = [v for (_, c, _), v in zip(expected, result.values, strict=True) if c.startswith("<think>")]
    assert sum(v == 1.0 for v in correct) >= 0.9 * len(correct)  # the right answers do pay
    no_tag = [reason for (_, c, _), reason in zip(expected, result.reasons, strict=True) if c.startswith("The answer")]
    assert all("no <answer>...</answer> tag" in reason for reason in no_tag)
    assert {task for task, _, value in expected if value == "raised"}  # some scorers do raise (prime_factorization)


def test_scorers_that_read_their_config_get_the_rows_config(gym):
    config = {"min_num_decimal_places": 1, "max_num_decimal_places": 1}
    dataset = gym.create_dataset("decimal_arithmetic", size=1, seed=3, **config)
    entry = dataset[0]
    close = str(float(entry["answer"]) + 0.05)  # within the 1-decimal tolerance, not within the default 3
    completion = f"<answer>{close}</answer>"
    assert dataset.score_answer(close, entry) == 1.0
    columns = {"answer": [entry["answer"]], "metadata": [json.loads(json.dumps(entry["metadata"]))]}
    default = rewardhub.get("reasoning_gym").evaluate([entry["question"]], [completion], **columns)
    configured = rewardhub.get("reasoning_gym", task_config={"decimal_arithmetic": config}).evaluate(
        [entry["question"]], [completion], **columns)
    assert default.values == [0.0] and configured.values == [1.0]


def test_arc_grids_read_back_from_json_score_as_the_generated_ones(gym):
    dataset = gym.create_dataset("arc_agi", size=1, seed=5)
    entry = dataset[0]
    metadata = json.loads(json.dumps(entry["metadata"]))  # tuples come back as lists
    completion = f"<answer>{entry['answer']}</answer>"
    assert dataset.score_answer(entry["answer"], {**entry, "metadata": metadata}) != 1.0  # the trap
    result = rewardhub.get("reasoning_gym").evaluate([entry["question"]], [completion],
                                                       answer=[entry["answer"]], metadata=[metadata])
    assert result.values == [1.0]


def test_bad_rows_are_named_and_the_others_still_score(gym):
    rows = [
        ({"source_dataset": "chain_sum"}, "<answer>6</answer>", "6"),
        ({"source_dataset": "no_such_task"}, "<answer>6</answer>", "6"),
        ("{not json", "<answer>6</answer>", "6"),
        ({}, "<answer>6</answer>", "6"),
    ]
    result = rewardhub.get("reasoning_gym").evaluate(["q"] * 4, [r[1] for r in rows],
                                                       metadata=[r[0] for r in rows], answer=[r[2] for r in rows])
    assert result.values == [1.0, None, None, None]
    assert result.outcomes[1:] == ["error"] * 3
    assert "no_such_task" in result.reasons[1]
    assert "not JSON" in result.reasons[2]
    assert "source_dataset is missing" in result.reasons[3]
    fixed = rewardhub.get("reasoning_gym", task="chain_sum").evaluate(["q"], ["<answer>6</answer>"], answer=["6"],
                                                                      metadata=[{}])
    assert fixed.values == [1.0]


def test_unknown_tasks_in_the_config_fail_when_the_reward_is_built(gym):
    with pytest.raises(rewardhub.ConfigError, match="unknown task.*'chain_summ'"):
        rewardhub.get("reasoning_gym", task_config={"chain_summ": {}})
    with pytest.raises(rewardhub.ConfigError, match="not a valid decimal_arithmetic config"):
        rewardhub.get("reasoning_gym", task_config={"decimal_arithmetic": {"precision": 1}})


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hubs.reasoning_gym()), str(ROOT / "tests")])}
    return subprocess.run([sys.executable, "-m", "rewardhub.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_the_hub_command_writes_a_dataset_the_reward_scores(gym, tmp_path, suffix):
    output = tmp_path / f"arc{suffix}"
    done = run_cli("hub", "reasoning-gym", "arc_agi", "-n", "3", "--seed", "7", "--system-prompt", "default",
                   "-o", str(output))
    assert done.returncode == 0, done.stderr
    assert "3 arc_agi rows written" in done.stderr
    rows = [record.row for record in iter_input(output)]
    assert len(rows) == 3 and rows[0]["prompt"][0]["role"] == "system"
    assert isinstance(rows[0]["metadata"], dict if suffix == ".jsonl" else str)
    reward_set = rewardhub.load({"rewards": [{"name": "reasoning_gym"}]})
    scored = reward_set.score([{**row, "completion": f"<answer>{row['answer']}</answer>"} for row in rows])
    assert [row["reward"] for row in scored] == [1.0, 1.0, 1.0]


def test_the_hub_command_lists_tasks_and_names_bad_input(gym, capsys):
    from rewardhub.cli import main

    assert main(["hub", "reasoning-gym", "--list"]) == 0
    assert "chain_sum" in capsys.readouterr().out.split()
    for argv, message in [
        (["chain_summ", "-n", "2"], "no task 'chain_summ'"),
        (["chain_sum", "--config", "[1]"], "--config must be a JSON object"),
        (["chain_sum", "--config", '{"min_terms": 9, "max_terms": 2}'], "not a valid chain_sum config"),
        (["chain_sum", "--system-prompt", "nope"], "no reasoning-gym system prompt 'nope'"),
        ([], "name a task"),
    ]:
        assert main(["hub", "reasoning-gym", *argv]) == 2
        assert message in capsys.readouterr().err
