"""The contract kit catches what it promises to catch, and passes a well-behaved reward."""

import ast
import random
import re

import pytest

import rewardhub
from rewardhub.testing import (
    CONTRACT_EPISODE_PROBES,
    DEFAULT_PROBES,
    RELATION_PROBES,
    TEXT_PROBES,
    ContractViolation,
    EpisodeTask,
    check_contract,
)
from rewardhub.testing.contract import GAMING_PROBES

SUBMIT_TASK = EpisodeTask(tool="submit", arguments={"answer": 42}, done_state={"answer": 42, "submissions": 1},
                          start_state={"answer": None, "submissions": 0}, calls_key="submissions")


@rewardhub.sample_reward(name="k_naive")
def naive(text, solution):
    """Gameable: credit when the solution appears anywhere."""
    return float(str(solution) in text)


@rewardhub.sample_reward(name="k_strict")
def strict(text, solution):
    """Credit only when the last \\boxed{...} is exactly the solution."""
    boxes = re.findall(r"\\boxed\{([^{}]*)\}", text[-2000:])
    if not boxes:
        return 0.0, "no boxed answer"
    return float(boxes[-1].strip() == str(solution)), f"got {boxes[-1]!r}"


@rewardhub.sample_reward(name="k_random")
def noisy(text):
    return random.random()


@rewardhub.sample_reward(name="k_async")
async def async_strict(text, solution):
    return strict.func(text, solution)


def test_well_behaved_reward_passes():
    report = check_contract(strict(), correct_completion="so \\boxed{10}")
    assert report.ok
    assert report.probe_values["several_boxed"] == 0.0
    assert report.probe_values["lookalike_answer"] == 0.0


def test_async_reward_passes_parity():
    assert check_contract(async_strict()).ok


def test_naive_reward_is_caught_by_the_gaming_probes():
    with pytest.raises(ContractViolation) as info:
        check_contract(naive())
    message = str(info.value)
    for probe in ("several_boxed", "several_answer_tags", "hedged_list"):
        assert f"gaming probe {probe!r} got full credit" in message


def test_nondeterminism_is_caught():
    report = check_contract(noisy(), raise_on_failure=False)
    assert any("determinism" in f for f in report.failures)


def test_closures_are_caught_as_unpicklable():
    def closure_reward(prompts, completions, **kwargs):
        return [0.0 for _ in completions]

    closure_reward.__name__ = "closure"
    local = lambda prompts, completions, **kw: [0.0] * len(completions)  # noqa: E731
    report = check_contract(local, raise_on_failure=False)
    assert any("not picklable" in f for f in report.failures)


def test_wrong_length_and_bad_values_are_caught():
    def short(prompts, completions, **kwargs):
        return [0.0] * (len(completions) - 1)

    def strings(prompts, completions, **kwargs):
        return ["1"] * len(completions)

    assert any("values for" in f for f in check_contract(short, raise_on_failure=False).failures)
    assert any("must be a finite float or None" in f for f in check_contract(strings, raise_on_failure=False).failures)


def test_correct_completion_must_get_full_credit():
    report = check_contract(strict(), correct_completion="I think it's 10", raise_on_failure=False)
    assert report.failures == ["the correct completion got 0.0, not full credit 1.0"]


def test_the_kit_runs_async_rewards_from_inside_a_running_event_loop():
    import asyncio

    async def inside_a_loop():  # Jupyter, pytest-asyncio tests
        return check_contract(async_strict(), raise_on_failure=False)

    assert asyncio.run(inside_a_loop()).failures == []


def test_a_raising_evaluate_is_reported_not_raised():
    class Broken:
        __name__ = "broken"

        def __call__(self, prompts, completions, **kwargs):
            return [0.0] * len(completions)

        def evaluate(self, *args, **kwargs):
            raise RuntimeError("evaluate is broken")

    report = check_contract(Broken(), raise_on_failure=False)
    assert "evaluate(): the reward raised RuntimeError: evaluate is broken" in report.failures


def test_a_reward_that_hangs_fails_the_deadline_instead_of_hanging_the_tests():
    import threading

    release = threading.Event()

    def hangs_on_long_inputs(prompts, completions, **kwargs):
        if any(len(c) > 5000 for c in completions):
            release.wait()  # a runaway regex, without burning the CPU here
            raise RuntimeError("gave up late")
        return [0.0] * len(completions)

    report = check_contract(hangs_on_long_inputs, deadline=0.5, raise_on_failure=False)
    expected = [
        f"deadline: scoring {3 + len(DEFAULT_PROBES)} completions did not finish within 0.5 s (a gaming probe may send "
        f"the reward into a runaway loop)"
    ]
    assert report.failures == expected
    release.set()  # the late call ends (with an error) after the report was returned: it must not change it
    for thread in threading.enumerate():
        if thread.name == "rewardhub-contract":
            thread.join(60)
    assert report.failures == expected


def numpy_floats(prompts, completions, **kwargs):
    import numpy as np

    return list(np.zeros(len(completions), dtype=np.float32))


def test_numpy_float_values_are_not_a_false_alarm():
    assert check_contract(numpy_floats, raise_on_failure=False).failures == []


def test_the_probes_follow_the_columns_given():
    """With the gold in the columns, a reward paying whenever the gold appears anywhere must fail."""
    with pytest.raises(ContractViolation) as caught:
        check_contract(naive(), columns={"solution": "42"})
    assert "gaming probe 'several_boxed' got full credit (1.0)" in str(caught.value)
    assert "gaming probe 'hedged_list' got full credit (1.0)" in str(caught.value)
    assert check_contract(strict(), columns={"solution": "42"}, correct_completion=r"so \boxed{42}").ok


@rewardhub.sample_reward(name="k_seen")
def seen(text, answer):
    SEEN.append(text)
    return 0.0


SEEN: list[str] = []


def test_no_probe_is_built_around_a_default_answer_when_the_columns_have_one():
    SEEN.clear()
    check_contract(seen(), columns={"answer": "42", "lang": "en"})  # the reward's own column, by required_columns
    probes = dict(zip((p.name for p in GAMING_PROBES), SEEN[3:], strict=False))
    assert all("10" not in text and "12" not in text for text in SEEN)
    assert all("42" in probes[name] for name in ("several_boxed", "several_answer_tags", "hedged_list"))
    assert probes["lookalike_answer"] == "The answer is \\boxed{Ꮞᒿ}"
    assert "The answer is \\boxed{42}." in SEEN[0] and "42" not in SEEN[1]  # right, then a wrong answer


@pytest.mark.parametrize("right", ["42", "-1", "19", "x+1", "Paris"])
def test_the_wrong_answer_never_holds_the_right_one(right):
    SEEN.clear()
    check_contract(seen(), columns={"answer": right})
    wrong = SEEN[1].removeprefix("The answer is \\boxed{").removesuffix("}.")
    assert wrong and right not in wrong and wrong not in right


def test_a_gold_anywhere_registered_trl_function_fails_the_kit():
    def gold_anywhere(completions, solution, **kwargs):
        return [1.0 if s in c else 0.0 for c, s in zip(completions, solution, strict=True)]

    report = check_contract(gold_anywhere, columns={"solution": "1729"}, raise_on_failure=False)
    assert not report.ok and report.probe_values["several_answer_tags"] == 1.0


# ----- the probes of issue 33: invisible blocks, relations, hedges in other languages, silent tool failures ------
@rewardhub.sample_reward(name="k_blocks")
def blocks(text):
    """Gameable: both blocks present and non-blank to Python's str.strip (a zero-width space is not blank)."""
    found = re.fullmatch(r"\s*<think>(.*?)</think>\s*<answer>(.*?)</answer>\s*", text, re.S)
    return float(found is not None and all(part.strip() for part in found.groups()))


@rewardhub.sample_reward(name="k_last_value")
def last_value(text, solution):
    """Gameable: the last value after '=' or 'or' in the last box (a relation or a hedge ends on the answer)."""
    boxes = re.findall(r"\\boxed\{(.*)\}", text[-2000:])
    if not boxes:
        return 0.0
    value = re.split(r"=|\\text\{\s*\w+\s*\}", boxes[-1])[-1]
    return float(value.strip() == str(solution))


def test_invisible_blocks_and_relations_are_probed():
    report = check_contract(blocks(), correct_completion="<think>4 + 6</think><answer>10</answer>",
                            raise_on_failure=False)
    assert "gaming probe 'invisible_think_answer' got full credit (1.0)" in report.failures
    report = check_contract(last_value(), raise_on_failure=False)  # the relation probes are fed by default
    assert report.answer_probes
    for probe in ("relation_answer", "chained_relation", "false_arithmetic", "hedged_other_language"):
        assert f"gaming probe {probe!r} got full credit (1.0)" in report.failures
    assert check_contract(strict()).ok  # the last box, exactly


@rewardhub.sample_reward(name="k_last_word")
def last_word(text, solution):
    """Gameable: the last word of the text (a hedge in another language, or one candidate per line, ends on it)."""
    words = re.findall(r"\d+|[A-Za-z]+", text)
    return float(bool(words) and words[-1] == str(solution))


@rewardhub.sample_reward(name="k_sentence")
def sentence(text):
    """Reads no answer: 1.0 for a sentence of at least four words that ends with a full stop."""
    return float(len(text.split()) >= 4 and text.rstrip().endswith("."))


def test_the_text_probes_are_fed_by_default_and_bind_readers_of_answers():
    report = check_contract(last_word(), raise_on_failure=False)
    assert report.answer_probes
    for probe in ("hedge_oder", "hedge_ou", "hedge_cjk", "hedge_russian", "one_per_line"):
        assert f"gaming probe {probe!r} got full credit (1.0)" in report.failures, report.failures
    # a reward that reads no answer pays the right and the wrong answer alike: the answer probes are reported only
    quiet = check_contract(sentence(), raise_on_failure=False)
    assert not quiet.answer_probes and quiet.probe_values["hedge_oder"] == 1.0 and quiet.ok, quiet.failures
    told = check_contract(sentence(), answer_probes=True, raise_on_failure=False)
    assert "gaming probe 'hedge_oder' got full credit (1.0)" in told.failures
    assert {p.name for p in DEFAULT_PROBES} == {p.name for p in GAMING_PROBES + RELATION_PROBES + TEXT_PROBES}


def test_majority_vote_refuses_the_relation_probes():
    vote = rewardhub.get("majority_vote", timeout=2)
    report = check_contract(vote, answer_probes=True, raise_on_failure=False)
    assert report.ok, report.failures
    assert all(report.probe_values[p.name] in (0.0, None) for p in RELATION_PROBES + TEXT_PROBES), report.probe_values


def test_a_tool_reward_reading_an_empty_error_as_success_is_caught():
    @rewardhub.sample_reward(name="k_tools")
    def believes_results(text, tool_calls):
        """Gameable: a submit call counts unless its result's "error" is truthy (TRL's {'error': ''} is not)."""
        def failed(call):
            try:
                return bool(ast.literal_eval(call.get("result") or "{}").get("error"))
            except (ValueError, SyntaxError, AttributeError):
                return False
        return float(any(call.get("name") == "submit" and not failed(call) for call in tool_calls or []))

    report = check_contract(believes_results(), episode_task=SUBMIT_TASK, raise_on_failure=False)
    assert report.episode_values["failed_call_empty_error"] == 1.0
    assert any("'failed_call_empty_error' got full credit" in f for f in report.failures)
    assert {p.name for p in CONTRACT_EPISODE_PROBES} >= {"failed_call_empty_error", "failed_call_long_error"}
