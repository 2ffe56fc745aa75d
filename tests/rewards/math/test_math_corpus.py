"""`math` on the public regression corpus (tests/math_corpus/): no false positive on any suite, and at least
Math-Verify's agreement on each, measured in the same run (Math-Verify with its defaults, gold and bare
answers boxed: bench/math_agreement.py, which also prints TRL's figures)."""

from __future__ import annotations

import json

import pytest
from bench_modules import load_bench
from paths import ROOT

# Agreement of `math` when these tables were written (Math-Verify 0.9.0 scored 85.0, 100, 51.2, 99.2, 93.2,
# 100 and 98.5%; 100% on gsm8k_model_solutions and 99.8% on tora_gsm8k): a floor, so that a regression shows
# even where Math-Verify does worse.
FLOOR = {
    "cs336_annotated": 0.90,
    "gsm8k_model_solutions": 0.995,
    "hendrycks_math": 1.0,
    "lighteval": 0.60,
    "math_verify": 0.99,
    "nemo_skills": 0.96,
    "qwen25_math": 1.0,
    "simple_evals_ru": 0.999,
    "tora_gsm8k": 0.995,
}


@pytest.fixture(scope="module")
def tallies():
    bench = load_bench("math_agreement")
    # Agreement, not speed: a deadline a loaded machine misses abstains, which would count as disagreement.
    runners = {"math": lambda suite: bench.run_rewardhub("math", suite, timeout=120),
               "exact_match": bench.RUNNERS["exact_match"], "math_verify": bench.RUNNERS["math_verify"]}
    return {
        suite.name: {verifier: bench.tally(suite, run(suite)) for verifier, run in runners.items()}
        for suite in bench.load_suites()
    }  # fmt: skip


def test_every_suite_is_scored(tallies):
    assert set(tallies) == set(FLOOR)


@pytest.mark.parametrize("verifier", ["math", "exact_match"])
def test_no_false_positive_on_any_suite(tallies, verifier):
    paid = {name: [(case.where, case.gold[:40], case.answer[-80:]) for case, value in results[verifier].misses if value == 1.0]
            for name, results in tallies.items()}  # fmt: skip
    assert {name: rows for name, rows in paid.items() if rows} == {}


def test_math_agrees_at_least_as_often_as_math_verify(tallies):
    behind = {name: (results["math"].agreement, results["math_verify"].agreement) for name, results in tallies.items()
              if results["math"].agreement < results["math_verify"].agreement}  # fmt: skip
    assert behind == {}


def test_math_agreement_floor(tallies):
    below = {name: results["math"].agreement for name, results in tallies.items() if results["math"].agreement < FLOOR[name]}
    assert below == {}


def test_corpus_tables_name_their_source_and_verdicts():
    files = sorted((ROOT / "tests" / "math_corpus").glob("*.json"))
    assert len(files) == len(FLOOR)
    for path in files:
        data = json.loads(path.read_text())
        assert set(data["source"]) >= {"repo", "path", "commit"} and len(data["source"]["commit"]) == 40, path.name
        assert data["kind"] in ("answers", "completions") and data["about"]
        for case in data["cases"]:
            assert isinstance(case["gold"], str) and isinstance(case["answer"], str) and isinstance(case["expected"], bool)
            if "disputed" in case:  # a disputed row says why and gives the other verdict
                assert case["disputed"] and case["verdict"] is not case["expected"], case
