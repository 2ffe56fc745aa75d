"""Every Score says what happened (ok, abstain, error, timeout), set by the code that knows; an
infrastructure failure abstains under every error policy; outcomes reach TRL's logs and scored files."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import rewardhub
from rewardhub import InfrastructureError, Score


def test_outcome_defaults_follow_the_value_and_unknown_ones_are_refused():
    assert Score(1.0).outcome == "ok"
    assert Score(None, "no reference").outcome == "abstain"
    assert Score(0.0, "timeout after 5 s", None, "timeout").outcome == "timeout"
    with pytest.raises(ValueError, match="outcome is one of ok, abstain, error, timeout"):
        Score(1.0, "", None, "fine")


@rewardhub.sample_reward(name="t_infra")
def t_infra(text):
    if "down" in text:
        raise InfrastructureError("endpoint http://127.0.0.1:9/ refused the connection")
    if "bug" in text:
        raise KeyError("the reward's own bug")
    return 1.0


@pytest.mark.parametrize("policy", ["none", "zero", "raise"])
def test_an_infrastructure_failure_abstains_under_every_policy(policy):
    result = t_infra(on_error=policy).evaluate(None, ["fine", "service down"])
    assert result.values == [1.0, None]
    assert result.outcomes == ["ok", "error"]
    assert result.reasons[1].startswith("error: InfrastructureError: endpoint")


def test_the_rewards_own_failure_follows_its_policy_with_outcome_error():
    assert t_infra(on_error="zero").evaluate(None, ["a bug"]).scores[0] == Score(
        0.0, "error: KeyError: \"the reward's own bug\"", None, "error")
    assert t_infra(on_error="none").evaluate(None, ["a bug"]).scores[0].value is None
    with pytest.raises(KeyError):
        t_infra(on_error="raise").evaluate(None, ["a bug"])


@rewardhub.sample_reward(name="t_returns")
def t_returns(text):
    return {"text": "0.5", "inf": math.inf, "nan": math.nan}[text]


@pytest.mark.parametrize(("text", "kind"), [("text", TypeError), ("inf", ValueError)])
def test_a_value_that_is_no_score_names_the_reward(text, kind):
    with pytest.raises(kind, match="reward 't_returns' returned no valid score"):
        t_returns(on_error="raise").evaluate(None, [text])
    score = t_returns().evaluate(None, [text]).scores[0]
    assert score.value is None and score.outcome == "error" and "t_returns" in score.reason
    assert t_returns().evaluate(None, ["nan"]).scores[0].outcome == "abstain"


def test_trl_logging_carries_outcomes_and_timeout_counts():
    extra, metrics = {}, {}
    values = t_infra()(["q", "q"], ["ok", "down"], log_extra=extra.__setitem__, log_metric=metrics.__setitem__)
    assert values == [1.0, None]
    assert extra["t_infra/outcome"] == ["ok", "error"]
    assert metrics["t_infra/errors"] == 1.0 and metrics["t_infra/timeouts"] == 0.0


def test_scored_files_carry_outcomes(tmp_path):
    rows = [{"prompt": "q", "completion": c, "solution": "42"} for c in ("42", "7", "the answer timed out")]
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards:\n  - name: exact_match\n    params: {extractors: [whole]}\n")
    out = tmp_path / "out.jsonl"
    rh = str(Path(sys.executable).with_name("rewardhub"))
    subprocess.run([rh, "score", "-c", str(config), str(data), "-o", str(out), "-q"], check=True)
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["outcomes"] for r in scored] == [{"exact_match": "ok"}] * 3
    assert [r["rewards"]["exact_match"] for r in scored] == [1.0, 0.0, 0.0]
