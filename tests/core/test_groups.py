"""Group assembly under real concurrency: threads of one process, and processes meeting at a real server."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from serving import VOTE, ensure_registered, serve_process

import rewardhub
from rewardhub import ConfigError
from rewardhub.trainers import abstentions
from rewardhub.trainers.groups import CallScorer, GroupAssembler, group_size_for


@pytest.fixture(autouse=True)
def _rewards():
    ensure_registered()


def group_rows(prompts: int, size: int = 4) -> list[dict]:
    """Prompt p's completions: ``size - 1`` say p + 1, one says p + 7 (so p + 1 is the majority)."""
    return [{"prompt": f"What is {p} + 1?", "completion": rf"\boxed{{{p + 1 if i else p + 7}}}", "solution": str(p + 1)}
            for p in range(prompts) for i in range(size)]


def expected(rows: list[dict]) -> list[float]:
    """Scored as whole groups: majority 1.0 + contains 0.5; the odd one out 0.0."""
    return [1.5 if row["completion"] == rf"\boxed{{{row['solution']}}}" else 0.0 for row in rows]


def test_threads_sending_one_completion_each_get_whole_groups():
    rewards = rewardhub.load(VOTE)
    assembler = GroupAssembler(rewards, group_size=4, timeout=60)
    rows = group_rows(8)
    order = list(range(len(rows)))
    random.Random(1).shuffle(order)
    start = threading.Barrier(len(rows))
    results: dict[int, tuple] = {}

    def call(index: int) -> None:
        start.wait()
        scored = assembler.score([(rows[index]["prompt"], rows[index])])
        results[index] = (scored.totals[0], scored.components["vote"].scores[0].reason)

    threads = [threading.Thread(target=call, args=(i,)) for i in order]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        assembler.close()
    assert [results[i][0] for i in range(len(rows))] == pytest.approx(expected(rows))
    assert all("/4 votes" in results[i][1] for i in range(len(rows)))
    assert assembler.pending == 0


def test_a_late_group_is_scored_without_its_group_rewards():
    rewards = rewardhub.load(VOTE)
    assembler = GroupAssembler(rewards, group_size=4, timeout=0.3)
    rows = group_rows(1)[:3]
    try:
        scored = assembler.score([(row["prompt"], row) for row in rows])  # returns: the deadline answers it
    finally:
        assembler.close()
    assert scored.components["vote"].values == [None, None, None]
    reason = "incomplete group: 3 of 4 completions of this prompt arrived within 0.3 s; group rewards abstain"
    assert scored.components["vote"].reasons == [reason] * 3
    assert scored.components["contains"].values == [0.0, 1.0, 1.0]  # per-sample rewards still count
    assert scored.totals == [0.0, 0.5, 0.5]


def test_arrivals_beyond_group_size_start_the_next_group():
    assembler = GroupAssembler(rewardhub.load(VOTE), group_size=4, timeout=60)
    rows = group_rows(1) + group_rows(1)[::-1]  # the same prompt twice, e.g. a duplicated dataset row
    try:
        scored = assembler.score([(row["prompt"], row) for row in rows])
    finally:
        assembler.close()
    assert scored.totals == pytest.approx(expected(rows))
    assert scored.components["vote"].reasons[0] == "minority answer 7 (1/4 votes; majority has 3)"


def test_a_caller_that_gives_up_withdraws_its_completion_and_its_retry_counts_once():
    assembler = GroupAssembler(rewardhub.load(VOTE), group_size=4, timeout=60)
    rows = group_rows(1)  # rows[0] is the minority answer

    async def main():
        quitter = asyncio.ensure_future(assembler.ascore([(rows[0]["prompt"], rows[0])]))
        while assembler.pending == 0:
            await asyncio.sleep(0.01)
        quitter.cancel()
        await asyncio.gather(quitter, return_exceptions=True)
        assert assembler.pending == 0  # it left its group
        return await assembler.ascore([(row["prompt"], row) for row in rows])  # its retry, with the others

    try:
        scored = asyncio.run(main())
    finally:
        assembler.close()
    assert scored.components["vote"].values == [0.0, 1.0, 1.0, 1.0]
    assert scored.components["vote"].reasons[0] == "minority answer 7 (1/4 votes; majority has 3)"


def test_waiting_groups_are_answered_at_once_when_the_assembler_finishes():
    assembler = GroupAssembler(rewardhub.load(VOTE), group_size=4, timeout=600)
    rows = group_rows(2)
    try:
        waiting = [assembler.submit(row["prompt"], row) for row in rows[:3]]
        assembler.finish()
        late = assembler.submit(rows[4]["prompt"], rows[4])  # an arrival after the drain began: answered too
        for waiter in [*waiting, late]:
            scored, index = waiter.result(timeout=60)
            assert scored.components["vote"].values[index] is None
            assert scored.components["contains"].values[index] == (1.0 if index else 0.0)  # it still scores
        assert "arrived before the reward server shut down" in late.result()[0].components["vote"].reasons[0]
    finally:
        assembler.close()


def test_a_failing_group_reaches_every_waiter(clean_registry):
    @rewardhub.batch_reward(name="t_group_boom")
    def boom(texts):
        raise RuntimeError("the scorer broke")

    clean_registry.add(boom, source="tests")
    rewards = rewardhub.load([{"name": "t_group_boom", "params": {"on_error": "raise"}}])
    assembler = GroupAssembler(rewards, group_size=2, timeout=60)
    try:
        waiters = [assembler.submit("p", {"prompt": "p", "completion": c}) for c in ("a", "b")]
        for waiter in waiters:
            with pytest.raises(Exception, match="the scorer broke"):
                waiter.result(timeout=30)
    finally:
        assembler.close()


def test_group_size_comes_from_the_config_or_the_caller():
    assert group_size_for(rewardhub.load(VOTE)) == 4
    assert group_size_for(rewardhub.load(VOTE), 4) == 4
    assert group_size_for(rewardhub.load(["exact_match"])) is None
    with pytest.raises(ConfigError, match="disagrees with the config's vote: group_size 4"):
        group_size_for(rewardhub.load(VOTE), 8)
    unsized = rewardhub.load([{"name": "majority_vote"}])
    with pytest.raises(ConfigError, match="majority_vote compare.* send one completion per call"):
        group_size_for(unsized)
    assert group_size_for(unsized, 8) == 8
    clash = rewardhub.load([{"name": "majority_vote", "params": {"group_size": 4}},
                            {"name": "length_penalty", "params": {"mode": "group", "correctness": "exact_match",
                                                                  "group_size": 8}}])
    with pytest.raises(ConfigError, match="disagree on group_size"):
        group_size_for(clash)


def test_a_reward_abstaining_on_a_whole_batch_is_reported_once(monkeypatch, caplog):
    monkeypatch.setattr(abstentions, "_warned", set())
    scorer = CallScorer(rewardhub.load(["exact_match", "format_regex"]))
    batch = rewardhub.Batch(["p", "q"], [r"\boxed{1}", "x"], {"solution": [None, None]})  # no gold: abstains
    with caplog.at_level("WARNING", logger="rewardhub.trainers"):
        scorer.score(batch)
        scorer.score(batch)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1
    assert "'exact_match' abstained on every sample of a batch of 2" in lines[0]
    assert "no reference answer in column 'solution'" in lines[0]  # the first reason, verbatim


def test_a_missing_column_is_said_once_by_the_reward_not_twice(monkeypatch, caplog):
    monkeypatch.setattr(abstentions, "_warned", set())
    scorer = CallScorer(rewardhub.load(["exact_match", "format_regex"]))
    batch = rewardhub.Batch(["p", "q"], [r"\boxed{1}", "x"], {"soluton": ["1", "2"]})
    with caplog.at_level("WARNING", logger="rewardhub.trainers"), \
            pytest.warns(rewardhub.RewardNotScoringWarning) as said:
        scorer.score(batch)
        scorer.score(batch)
    assert [str(w.message) for w in said if w.category is rewardhub.RewardNotScoringWarning] == [
        "rewardhub: not scoring: reward 'exact_match' needs column 'solution', but the batch has only: soluton. "
        "Did you mean 'soluton'? Add the column to your dataset or point the reward at another one with its "
        "column parameter. Until then each of its samples is None (outcome 'error'), which trainers leave out "
        "of their means. (said once per reward)"]
    assert not caplog.records  # the shims' own warning is for abstentions, not failures


CLIENT = """
import json, sys, httpx
url, worker, prompts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = []
with httpx.Client(timeout=120) as http:
    for p in range(prompts):  # this process sends the worker-th completion of every prompt, one per request
        completion = rf"\\boxed{{{p + 1 if worker else p + 7}}}"
        prompt = f"<|im_start|>user\\nWhat is {p} + 1?<|im_end|>\\n<|im_start|>assistant\\n"
        body = {"query": [prompt + completion + "<|im_end|>"], "prompts": [prompt], "labels": [str(p + 1)]}
        reply = http.post(url, json=body)
        reply.raise_for_status()
        data = reply.json()
        out.append([p, data["rewards"][0], data["extra_logs"]["vote"][0]])
print(json.dumps(out))
"""


def test_processes_meet_at_a_real_server(tmp_path: Path):
    """Four client processes, each holding one completion of every prompt (as four Ray workers would),
    send them one request at a time to a real ``rewardhub serve --group-size 4``."""
    config = tmp_path / "vote.json"
    config.write_text(json.dumps({"rewards": [
        {"name": "majority_vote", "alias": "vote", "params": {"equivalence": "string"}},
        {"name": "exact_match", "alias": "accuracy", "weight": 0.5}]}))
    with serve_process(["--config", str(config), "--group-size", "4", "--no-access-log", "--log-level", "warning"]) \
            as (base, _):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        clients = [subprocess.Popen([sys.executable, "-c", CLIENT, f"{base}/get_reward", str(w), "6"], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(4)]
        outputs = []
        for client in clients:
            out, err = client.communicate(timeout=300)
            assert client.returncode == 0, err
            outputs.append(json.loads(out))
    for worker, results in enumerate(outputs):
        for _, reward, vote in results:
            assert vote == (1.0 if worker else 0.0)
            assert reward == (1.5 if worker else 0.0)
