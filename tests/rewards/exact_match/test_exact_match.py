"""exact_match: extracted answer vs the reference column, through get() and load(), plain and chat."""

import pytest

import rewardhub
from rewardhub import ConfigError
from rewardhub.testing import check_contract

MB = 1_000_000
TRIED = "open_answer_tag, final_statement, gsm8k, last_math, bare, last_number"


def chat(text):
    return [{"role": "assistant", "content": text}]


@pytest.mark.parametrize(
    ("completion", "solution", "value", "reason"),
    [
        (r"so \boxed{42}", "42", 1.0, "correct: '42' (from final_statement)"),
        (r"so \boxed{41}", "42", 0.0, "expected '42', got '41' (from final_statement)"),
        ("#### 1,000", "1000", 1.0, "correct: '1,000' (from gsm8k)"),
        ("<answer>Paris</answer>", "paris", 1.0, "correct: 'Paris' (from open_answer_tag)"),
        ("The answer is 1e3.", "1,000", 1.0, "correct: '1e3' (from final_statement)"),
        (r"The answer is $\boxed{\text{(B)}}$.", "B", 1.0, r"correct: '\text{(B)}' (from final_statement)"),
        (r"\boxed{3.5}", "35", 0.0, "expected '35', got '3.5' (from final_statement)"),
        # nothing stated: the last number that stands alone in a finished text, as math reads it
        ("It is 42.", "42", 1.0, "correct: '42' (from last_number)"),
        ("It is 42 or 43.", "42", 0.0, f"no answer found (tried {TRIED})"),
        ("", "42", 0.0, f"no answer found (tried {TRIED})"),
        # GSM8K and MATH references hold a worked solution: its marked answer is the reference.
        (r"\boxed{72}", "Natalia sold 48/2 = 24 clips...\n#### 72", 1.0, "correct: '72' (from final_statement)"),
        (r"\boxed{\frac12}", r"so $\boxed{\frac12}$", 1.0, r"correct: '\frac12' (from final_statement)"),
        (r"\boxed{12}", 12, 1.0, "correct: '12' (from final_statement)"),
        (r"\boxed{12}", 12.0, 1.0, "correct: '12' (from final_statement)"),
        (r"\boxed{b}", ["a", "B"], 1.0, "correct: 'b' (from final_statement)"),
        (r"\boxed{c}", ["a", "b"], 0.0, "expected 'a' or 'b', got 'c' (from final_statement)"),
        # issue 34: values read exactly, and what is refused
        ("The answer is 2300 cm.", r"23\,\text{m}", 1.0, "correct: '2300 cm' (from final_statement)"),
        ("The answer is 5 ms.", r"5\text{ s}", 0.0, r"expected '5\text{ s}', got '5 ms' (from final_statement)"),
        (r"\boxed{5!}", "5", 0.0, "expected '5', got '5!' (from final_statement)"),
        (r"\boxed{100000!}", "100000", 0.0, "expected '100000', got '100000!' (from final_statement)"),
        ("The final answer is 55. Final answer: 54", "54", 0.0,
         "two final answers disagree: '55' and '54' (no correction between them) (from final_statement)"),
        ("So we get 47. Or $5\\sqrt{7}$.", r"5\sqrt{7}", 0.0,
         "no answer found (tried open_answer_tag, final_statement, gsm8k, last_math, bare, last_number)"),  # the shared reader's
        ("The total, maybe, is 12.", "12", 0.0,
         "a hedge: the last sentence 'The total, maybe, is 12.' offers no single value (from last_number)"),
        ("Antwort: 196 Moment, das ist falsch. Richtig ist 207.", "207", 1.0, "correct: '207' (from final_statement)"),
        ("Antwort: 196 Moment, das ist falsch. Richtig ist 207.", "196", 0.0, "expected '196', got '207' (from final_statement)"),
        ("Antwort: 196 moment, das ist falsch. Richtig ist 207.", "207", 1.0, "correct: '207' (from final_statement, corrected)"),
        ("Antwort: 196 moment, das ist falsch. Richtig ist 207.", "196", 0.0,
         "expected '196', got '207' (from final_statement, corrected)"),
    ],
)
def test_values_and_reasons(completion, solution, value, reason):
    reward = rewardhub.get("exact_match")
    for form in (completion, chat(completion)):
        score = reward.evaluate(["q"], [form], solution=[solution]).scores[0]
        assert (score.value, score.reason) == (value, reason)
        assert score.verdict is (value == 1.0)


def test_trl_call_plain_and_chat_and_bad_rows():
    reward = rewardhub.get("exact_match")
    completions = [r"\boxed{1}", chat(r"\boxed{2}"), 123, None, r"\boxed{5}", r"\boxed{6}"]
    solutions = ["1", "2", "3", "4", None, "7"]
    assert reward(prompts=["p"] * 6, completions=completions, solution=solutions) == [1.0, 1.0, None, None, None, 0.0]
    reasons = reward.evaluate(None, completions, solution=solutions).reasons
    assert "not text" in reasons[2]
    assert reasons[4] == "no reference answer in column 'solution'"


def test_missing_column_abstains_with_reason():
    result = rewardhub.get("exact_match").evaluate(None, [r"\boxed{1}", "x"], answer=["1", "2"])
    assert result.values == [None, None]
    assert "needs column 'solution'" in result.reasons[0] and "answer" in result.reasons[0]


def test_column_and_extractor_params():
    reward = rewardhub.get("exact_match", column="answer", extractors=["answer_tag", "last_number"])
    completions = [r"<answer>3</answer> \boxed{4}", "I think 17", r"\boxed{4}", "It is 4."]
    # a number inside a LaTeX argument never stands alone: \boxed{4} has no last number
    assert reward(None, completions, answer=["3", "17", "4", "4"]) == [1.0, 1.0, 0.0, 1.0]
    whole = rewardhub.get("exact_match", extractors=["whole"])
    assert whole(None, ["  Paris. ", "London"], solution=["paris", "paris"]) == [1.0, 0.0]


@pytest.mark.parametrize(
    ("params", "completion", "solution", "value"),
    [
        ({}, r"\boxed{PARIS}", "paris", 1.0),
        ({"case_sensitive": True}, r"\boxed{PARIS}", "paris", 0.0),
        ({"normalize_numbers": False}, r"\boxed{1,000}", "1000", 0.0),
        ({"strip_punctuation": False}, r"\boxed{(A)}", "A", 0.0),
        ({"strip_latex": False}, r"\boxed{\text{A}}", "A", 0.0),
        ({"max_answer_chars": 3}, r"\boxed{1234}", "1234", 0.0),
    ],
)
def test_normalisation_switches(params, completion, solution, value):
    assert rewardhub.get("exact_match", **params)(None, [completion], solution=[solution]) == [value]


@pytest.mark.parametrize(
    ("completion", "solution", "value"),
    [
        # punctuation goes, but signs and operators carry meaning: a sign flip is never a match
        (r"\boxed{-x}", "x", 0.0),
        (r"\boxed{x-1}", "x+1", 0.0),
        (r"\boxed{e^{-x}}", "e^{x}", 0.0),
        (r"\boxed{a<b}", "a>b", 0.0),
        (r"\boxed{3/4}", "3*4", 0.0),
        (r"\boxed{x + 1}", "x+1", 1.0),
        (r"\boxed{-x}", "- x", 1.0),
        ("<answer>well-known</answer>", "well known", 1.0),
        ("<answer>COVID-19</answer>", "covid 19", 1.0),
        (r"\boxed{3-x}", "3+x", 0.0),
        (r"\boxed{2-3}", "2+3", 0.0),
        ("<answer>Paris - France</answer>", "paris, france", 1.0),
        (r"\boxed{(B)}", "B.", 1.0),
    ],
)
def test_punctuation_keeps_signs_and_operators(completion, solution, value):
    assert rewardhub.get("exact_match")(None, [completion], solution=[solution]) == [value]


@pytest.mark.parametrize(
    ("completion", "solution", "value"),
    [
        # the answer inside a tag is read like a sentence: a phrase, GSM8K's ####, a box
        ("<answer>The answer is 18.</answer>", "18", 1.0),
        ("<answer>#### 8,000</answer>", "8000", 1.0),
        (r"<answer>so \boxed{18}</answer>", "18", 1.0),
        (r"\boxed{8{,}000}", "8000", 1.0),
        (r"\boxed{12,\!000}", "12000", 1.0),
        # unit words after the number, when the reference is a number
        ("#### 18 dollars", "18", 1.0),
        (r"\boxed{18\text{ dollars}}", "18", 1.0),
        ("So the answer is 18 apples.", "18", 1.0),
        ("#### 18 dollars", "19", 0.0),
        ("The answer is 5 or more.", "5", 0.0),  # words that change the value are no unit
        (r"\boxed{2\text{ million}}", "2", 0.0),
        ("#### 18 dollars", "18 dollars", 1.0),
        # primes and brackets carry meaning
        (r"\boxed{E}", "E'", 0.0),
        (r"\boxed{f(x)}", "f'(x)", 0.0),
        (r"\boxed{f'(x)}", "f'(x)", 1.0),
        ("<answer>don't</answer>", "DON'T", 1.0),  # an apostrophe in a word is no prime
        ("The final answer is $(0, 1)$.", "[0,1)", 0.0),
        ("The final answer is $(0, 1)$.", "(0,1)", 1.0),
        (r"\boxed{\mathcal{B}}", "B", 0.0),
    ],
)
def test_issue_13_cases(completion, solution, value):
    assert rewardhub.get("exact_match")(None, [completion], solution=[solution]) == [value]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"extractors": ["boxd"]}, "unknown extractor 'boxd'"),
        ({"extractors": "boxed"}, "expected list or null, got str"),
        ({"max_answer_chars": 0}, "max_answer_chars"),
        ({"column": 3}, "param 'column'"),
        ({"colum": "x"}, "unknown param"),
    ],
)
def test_config_errors(params, message):
    with pytest.raises(ConfigError, match=message):
        rewardhub.get("exact_match", **params)


def test_one_megabyte_completions():
    reward = rewardhub.get("exact_match")
    completions = ["x" * MB + r"\boxed{7}", "{" * MB, r"\boxed{" * (MB // 7), "answer is " * (MB // 10)]
    result = reward.evaluate(None, completions, solution=["7"] * 4)
    assert result.values == [1.0, 0.0, 0.0, 0.0]
    assert result.reasons[1].startswith("no answer found")


def test_through_load_config():
    rewards = rewardhub.load({"rewards": [
        {"name": "exact_match", "weight": 2.0},
        {"name": "exact_match", "alias": "gsm", "params": {"column": "answer", "extractors": ["gsm8k"]}},
    ]})
    rows = [
        {"prompt": "p", "completion": r"\boxed{5} #### 6", "solution": "5", "answer": "6"},
        {"prompt": "p", "completion": chat("#### 6"), "solution": "5", "answer": "#### 6"},
    ]
    scored = rewards.score(rows)
    assert [r["rewards"] for r in scored] == [{"exact_match": 1.0, "gsm": 1.0}, {"exact_match": 0.0, "gsm": 1.0}]
    assert [r["reward"] for r in scored] == [3.0, 1.0]
    assert scored[1]["reasons"]["exact_match"] == "expected '5', got '6' (from gsm8k)"


def test_contract_kit():
    check_contract(rewardhub.get("exact_match"), correct_completion=r"The answer is \boxed{10}.")
