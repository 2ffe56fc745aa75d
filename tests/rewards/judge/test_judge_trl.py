"""The judge inside a real TRL GRPOTrainer (tiny local model): awaited as an async reward, reasons and
request counters in the trainer's logs, an outage abstaining (NaN) instead of scoring 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from judge_server import JudgeServer, Reply

import rewardhub
from rewardhub.testing.tiny_models import make_causal_lm

pytestmark = pytest.mark.slow
KEY_ENV = "REWARDHUB_TEST_JUDGE_KEY"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    import torch

    torch.set_num_threads(1)
    return make_causal_lm(tmp_path_factory.mktemp("lm") / "lm")


def test_grpo_trains_with_the_judge(tiny_lm, tmp_path, monkeypatch):
    import trl
    from datasets import Dataset

    monkeypatch.setenv(KEY_ENV, "sk-test")
    with JudgeServer() as server:
        # the judge scores by prompt length; the third request of the run fails for good
        server.answer = lambda body: f"Score: {len(body['messages'][-1]['content']) % 11}"
        judge = rewardhub.get("judge", base_url=server.base_url, api_key_env=KEY_ENV, model="tiny-judge", max_retries=0)
        server.script.extend([Reply(f"Score: {n}") for n in (3, 4)] + [Reply(status=400, error="bad")])
        args = trl.GRPOConfig(
            output_dir=str(tmp_path), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
            num_generations=2, max_completion_length=8, max_steps=2, logging_steps=1, log_completions=True,
            save_strategy="no", seed=0, learning_rate=1e-3, disable_tqdm=True,
        )  # fmt: skip
        prompts = [{"prompt": f"Write about {word}:"} for word in ("cats", "rain", "maps", "salt")]
        run = trl.GRPOTrainer(model=str(tiny_lm), args=args, reward_funcs=[judge], train_dataset=Dataset.from_list(prompts))
        run.train()
        judge.close()

    steps = [log for log in run.state.log_history if "reward" in log]
    assert len(steps) == 2
    assert all("judge/requests" in log and "judge/prompt_tokens" in log for log in steps)
    assert judge.counters.failures == 1 and judge.counters.requests == server.requests
    logs = run._logs
    values, reasons = list(logs["rewards"]["judge"]), list(logs["extra"]["judge/reason"])
    assert len(values) == len(reasons) == 4 and any(v == v for v in values)
    for value, reason in zip(values, reasons, strict=True):
        if reason.startswith("judge unavailable"):
            assert value != value  # None -> NaN: skipped by TRL, never a 0 reward
        else:
            assert reason.startswith("judge (number): Score: ")
            assert value == pytest.approx(int(reason.rsplit(" ", 1)[1]) / 10)
