"""Judge building blocks without a server: answer parsing, logprobs, templates, rate buckets, backoff."""

from __future__ import annotations

import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardhub import Batch
from rewardhub.rewards.judge.errors import JudgeConfigError, JudgeInputError
from rewardhub.rewards.judge.limits import TokenBucket, backoff_delay, retry_after
from rewardhub.rewards.judge.parse import ScoreScale, UnparsableAnswer, expected_score, parse_answer
from rewardhub.rewards.judge.prompt import JudgeTemplate

TEN = ScoreScale(0, 10)
FIVE = ScoreScale(1, 5)  # Prometheus' rubric scale
ABSTAIN = None

# Real judge outputs and what they must read as (None: abstain). Rows marked "prometheus" are the
# parser cases of prometheus-eval (libs/prometheus-eval/tests/test_parser.py, 1-5 scale), "mt-bench"
# the rating format of lm-sys/FastChat fastchat/llm_judge ("Rating: [[5]]"); the rest are answers
# of the kinds chat models give to the pointwise and binary templates.
NUMBER_TABLE = [
    # the rubric's own format: a bare number
    ("7", TEN, 0.7),
    ("10\n", TEN, 1.0),
    ("**9**", TEN, 0.9),
    ("8.", TEN, 0.8),
    ("7\n\nThe response is correct but skips 2 steps of the derivation.", TEN, 0.7),
    ("The response is correct and complete, with 3 worked examples.\n\n9", TEN, 0.9),
    ("4 out of 5", TEN, 0.8),  # another denominator is rescaled to the range
    ("on a scale of 1 to 10, 8", TEN, 0.8),
    # labelled
    ("Score: 7", TEN, 0.7),
    ("score: 7 (out of 10)", TEN, 0.7),
    ("**Score**: 6", TEN, 0.6),
    ("**Rating:** 9. The answer has 3 small issues.", TEN, 0.9),
    ("Score (0-10): 7", TEN, 0.7),
    ("Rating (1-10): 6", TEN, 0.6),
    ("Score: 8 out of 10", TEN, 0.8),
    ("Score: 7/10 - clear, but the second step is unjustified.", TEN, 0.7),
    ("Score: 4/5", TEN, 0.8),
    ("After weighing it all up, my verdict is 5", TEN, 0.5),
    ("Score: 12", TEN, 1.0),  # clipped into range, and the reason says so
    ("score = -3", TEN, 0.0),
    ("Score:\n7", TEN, 0.7),
    ("### Evaluation\nThe answer is mostly right.\n\n### Score\n8/10", TEN, 0.8),
    ("- Correctness: good\n- Clarity: fair\n\n**Final score: 6**", TEN, 0.6),
    ("Correctness score: 8\nClarity score: 6\nOverall score: 7", TEN, 0.7),
    ("Correctness score: 8\nClarity score: 6\nScore: 7", TEN, 0.7),  # aspects yield to the plain label
    ("Clarity score: 6", TEN, 0.6),
    ("The answer makes 2 claims and both hold. Score: 9", TEN, 0.9),
    ("Score: 7\n\nA score of 10 would need a proof of the lemma.", TEN, 0.7),
    ("Score: 7. A perfect score of 10 needs a proof.", TEN, 0.7),
    ("The response is solid. Score: 8 points", TEN, 0.8),
    ('{"score": 7', TEN, 0.7),  # truncated JSON still has a labelled number
    # score verbs and fractions over the scale's maximum
    ("The response is fine overall. I'd give it 6/10.", TEN, 0.6),
    ("I'd rate it 8 on a scale of 1 to 10.", TEN, 0.8),
    ("On a scale from 0 to 10, this deserves a 6.", TEN, 0.6),
    ("I would give this response a 7 because it skips the edge case.", TEN, 0.7),
    ("8.5/10", TEN, 0.85),
    ("Clear and correct: 9/10", TEN, 0.9),
    ("Step 1 is fine, step 3 has an arithmetic slip. 6/10", TEN, 0.6),
    ("I'd say 12/10!", TEN, 1.0),
    ("It deserves no more than 5/10.", TEN, 0.5),
    # negated or hypothetical scores are not the score
    ("I'd give it 7/10, not 10/10", TEN, 0.7),
    ("Solid work: 8/10 rather than 9/10.", TEN, 0.8),
    ("I wouldn't give it a 10, but it is a solid 8/10.", TEN, 0.8),
    ("7/10 (10/10 would need the proof of step 2)", TEN, 0.7),
    # JSON fields
    ('{"score": 7.5, "why": "ok"}', TEN, 0.75),
    ('{"reasoning": "It makes 3 errors.", "score": 2}', TEN, 0.2),
    ('Here you go:\n```json\n{"rating": "4"}\n```', TEN, 0.4),
    ('{"evaluation": {"feedback": "Accurate, cites 2 sources.", "score": 9}}', TEN, 0.9),
    # the rubric's own format in public judge suites
    ("The response is helpful and accurate. Rating: [[8]]", TEN, 0.8),  # mt-bench
    ("[[3]]", TEN, 0.3),  # mt-bench
    ("Excellent. [RESULT] 5 out of 5", FIVE, 1.0),  # prometheus
    ("Poor performance. [RESULT] score of 1", FIVE, 0.0),  # prometheus
    ("Good job. [Result] 3", FIVE, 0.5),  # prometheus
    ("Needs improvement. [Result] Score: 2", FIVE, 0.25),  # prometheus
    ("Average. [Result] 4/5", FIVE, 0.75),  # prometheus
    ("Good job. (Score 5)", FIVE, 1.0),  # prometheus
    ("Good job. [Score 4]", FIVE, 0.75),  # prometheus
    ("Good job. score: 3", FIVE, 0.5),  # prometheus
    ("Good job. score of 1", FIVE, 0.0),  # prometheus
    ("Good job. [RESULT] (5)", FIVE, 1.0),  # prometheus
    ("Feedback: The response covers every criterion of the rubric. [RESULT] 4", FIVE, 0.75),
    ("The score is definitely not 3.", FIVE, ABSTAIN),  # prometheus
    ("I rate this a perfect 10!", FIVE, ABSTAIN),  # prometheus: the scale's top, not a verdict on this scale
    ("Result: A", FIVE, ABSTAIN),  # prometheus
    # incidental numbers: no score in a score position, so the answer abstains
    ("I looked at 3 aspects of the answer and all of them are handled well.", TEN, ABSTAIN),
    ("The response lists 5 reasons, each with an example.", TEN, ABSTAIN),
    ("There are 2 errors in step 3.", TEN, ABSTAIN),
    ("The answer 42 matches the reference.", TEN, ABSTAIN),
    ("1. The response is accurate.\n2. It is well structured.", TEN, ABSTAIN),
    ("3. The explanation misses 2 steps.", TEN, ABSTAIN),  # a list item, not a score
    ("Out of the 10 steps, 7 are right.", TEN, ABSTAIN),
    ("It gets 3 of the 4 cases right.", TEN, ABSTAIN),
    ("The answer is 3/4 of the way there.", TEN, ABSTAIN),
    ("The response would suit a grade 5 student.", TEN, ABSTAIN),
    ("I give 2 examples of where it fails.", TEN, ABSTAIN),
    ("The reference answer is\n42", TEN, ABSTAIN),  # out of range alone on a line: not a score
    ("I cannot grade this.", TEN, ABSTAIN),
    ("", TEN, ABSTAIN),
    # hedged or ambiguous: several scores and nothing says which counts
    ("Somewhere between 6 and 7.", TEN, ABSTAIN),
    ("Score: 6-7", TEN, ABSTAIN),
    ("Probably a 7, maybe an 8.", TEN, ABSTAIN),
    ("Correctness: 8/10\nClarity: 6/10", TEN, ABSTAIN),
    ("Correctness score: 8\nClarity score: 6", TEN, ABSTAIN),
    ("Score: 5 for accuracy. Score: 7 for style.", TEN, ABSTAIN),
    ("maybe 2", TEN, ABSTAIN),
]

VERDICT_TABLE = [
    ("Yes", True),
    ("No, the final answer differs.", False),
    ("**Yes** - matches the reference.", True),
    ("Yes\n\nThe student's answer has no wrong steps.", True),
    ("No. It is correct in form but the value is wrong.", False),
    ("Correct.", True),
    ("Incorrect - the response says 5, the reference says 4.", False),
    ("The response's answer is not correct.", False),
    ("Comparing with the reference, it is correct.", True),
    ("The final answer is correct.", True),
    ("Working: 2+2 is 4, no issues. Verdict: incorrect", False),
    ("No issues found. The response is correct.", True),  # the "No" of "No issues" is not a verdict
    ("No mistakes here, correct.", True),
    ("The response reaches 1/2, which equals the reference 0.5.\n\nYes", True),
    ("It is not wrong.", True),
    ('{"score": true}', True),
    ('{"verdict": "incorrect"}', False),
    ("Feedback: the response matches. [RESULT] Yes", True),
    ("Final answer: no", False),
    ("The method is right but the final answer is wrong.", False),  # the final answer is what the rubric asks
    ("The approach is correct, but the arithmetic is wrong.", ABSTAIN),  # both: no verdict
    ("The reference is 4 and the response gives 4.", ABSTAIN),
    ("There is no way to tell from the response.", ABSTAIN),
    ("7", ABSTAIN),
]


@pytest.mark.parametrize(("text", "scale", "expected"), NUMBER_TABLE)
def test_number_table_of_real_judge_outputs(text, scale, expected):
    if expected is ABSTAIN:
        with pytest.raises(UnparsableAnswer):
            parse_answer(text, "number", scale)
    else:
        assert parse_answer(text, "number", scale).value == pytest.approx(expected)


@pytest.mark.parametrize(("text", "expected"), VERDICT_TABLE)
def test_verdict_table_of_real_judge_outputs(text, expected):
    if expected is ABSTAIN:
        with pytest.raises(UnparsableAnswer):
            parse_answer(text, "yes_no", TEN)
    else:
        parsed = parse_answer(text, "yes_no", TEN)
        assert parsed.verdict is expected and parsed.value == float(expected)


def test_no_number_is_ever_taken_from_the_wrong_place():
    """The tables' false positives: a value where the answer has none, or another value than its score."""
    wrong = []
    for text, scale, expected in NUMBER_TABLE:
        try:
            got = parse_answer(text, "number", scale).value
        except UnparsableAnswer:
            continue  # abstaining is never a wrong score
        if expected is ABSTAIN or got != pytest.approx(expected):
            wrong.append((text, got, expected))
    for text, expected in VERDICT_TABLE:
        try:
            got = parse_answer(text, "yes_no", TEN).verdict
        except UnparsableAnswer:
            continue
        if got is not expected:
            wrong.append((text, got, expected))
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "mode", "value"),
    [("Score: 3 out of 10", "auto", 0.3), ("yes", "auto", 1.0), ("7", "auto", 0.7), ("Verdict: no", "auto", 0.0),
     ('Here you go:\n```json\n{"score": "4"}\n```', "json", 0.4), ("", "auto", None), ("maybe 2", "auto", None),
     ("no json here: score 5", "json", None), ('{"score": 7', "json", None), ('{"verdict": "good"}', "json", None),
     ("The answer has 3 parts, all correct.", "auto", None)],  # fmt: skip
)
def test_auto_and_json_modes(text, mode, value):
    if value is None:
        with pytest.raises(UnparsableAnswer):
            parse_answer(text, mode, TEN)
    else:
        assert parse_answer(text, mode, TEN).value == pytest.approx(value)


def test_abstentions_say_why():
    with pytest.raises(UnparsableAnswer, match="no score in a score position"):
        parse_answer("I looked at 3 aspects of the answer.", "number", TEN)
    with pytest.raises(UnparsableAnswer, match=r"labelled scores disagree \(5, 7\)"):
        parse_answer("Score: 5 for accuracy. Score: 7 for style.", "number", TEN)
    with pytest.raises(UnparsableAnswer, match="no yes/no verdict in a score position"):
        parse_answer("Hard to say.", "yes_no", TEN)


def test_parse_notes_clipping_and_verdicts():
    parsed = parse_answer("Score: 15", "number", TEN)
    assert parsed.value == 1.0 and "clipped 15 to 10" in parsed.how
    assert parse_answer("Yes.", "yes_no", TEN).verdict is True
    assert parse_answer("incorrect", "yes_no", TEN).verdict is False
    assert parse_answer("8", "number", TEN).verdict is None


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.sampled_from(["number", "auto", "json"]))
def test_any_number_lands_in_unit_interval(raw, mode):
    text = f'{{"score": {raw}}}' if mode == "json" else f"Score: {raw:.3f}"
    assert 0.0 <= parse_answer(text, mode, TEN).value <= 1.0


def _tokens(*pieces: tuple[str, dict[str, float]]) -> list[tuple[str, list[tuple[str, float]]]]:
    return [(token, [(alt, math.log(p)) for alt, p in alts.items()]) for token, alts in pieces]


def test_expected_score_from_logprobs_at_the_parsed_score():
    text = "I checked 3 aspects. Score: 7"
    tokens = _tokens(("I checked ", {"I checked ": 1.0}), ("3", {"3": 0.9, "4": 0.1}), (" aspects. Score: ", {" aspects. Score: ": 1.0}),
                     ("7", {"7": 0.5, "8": 0.3, "9": 0.1, "eleven": 0.05, "42": 0.05}))  # fmt: skip
    parsed = expected_score(tokens, text, parse_answer(text, "number", TEN), TEN)
    # the "3" of "3 aspects" is never used; out-of-range and non-numeric alternatives are dropped
    assert parsed.value == pytest.approx((7 * 0.5 + 8 * 0.3 + 9 * 0.1) / 0.9 / 10)
    yes = _tokens((" Yes", {" Yes": 0.6, "No": 0.2, "Maybe": 0.2}))
    parsed = expected_score(yes, " Yes", parse_answer(" Yes", "yes_no", TEN), TEN)
    assert parsed.value == pytest.approx(0.75) and parsed.verdict is True
    # tokens that do not spell the text, or a score split over tokens: the text's score stands
    assert expected_score(_tokens(("8", {"8": 1.0})), "7", parse_answer("7", "number", TEN), TEN) is None
    split = _tokens(("1", {"1": 1.0}), ("0", {"0": 1.0}))
    assert expected_score(split, "10", parse_answer("10", "number", TEN), TEN) is None


def test_score_scale_rejects_empty_range():
    with pytest.raises(ValueError, match="greater than"):
        ScoreScale(5, 5)


# ----- templates ---------------------------------------------------------------------------------
def _row(**columns):
    batch = Batch(["What is 2+2?"], ["It is 4."], {k: [v] for k, v in columns.items()})
    return batch.row(0)


def test_builtin_templates_render_prompt_completion_and_reference():
    binary = JudgeTemplate.load("binary")
    text = binary.render(_row(answer="4"), reference_column="answer")
    assert "What is 2+2?" in text and "It is 4." in text and "[Reference answer]\n4\n" in text
    assert binary.rubric.parse == "yes_no"
    pointwise = JudgeTemplate.load("pointwise")
    assert pointwise.rubric.high == 10 and "{" not in pointwise.render(_row(), "solution")


def test_inline_and_file_templates(tmp_path):
    inline = JudgeTemplate.load('Grade {completion} for level {level}; answer as {{"score": N}}')
    assert inline.render(_row(level=3), "solution") == 'Grade It is 4. for level 3; answer as {"score": N}'
    path = tmp_path / "rubric.txt"
    path.write_text("Q: {prompt}\nA: {completion}\n", encoding="utf-8")
    assert JudgeTemplate.load(str(path)).render(_row(), "solution") == "Q: What is 2+2?\nA: It is 4.\n"


def test_template_renders_chat_prompts():
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}]
    batch = Batch([chat], ["4"], {})
    assert JudgeTemplate.load("{prompt} -> {completion}").render(batch.row(0), "solution") == (
        "system: Be brief.\n\nuser: 2+2? -> 4"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("pointwse", "not a built-in template (pointwise, binary, trajectory, label, criterion, pairwise, groupwise, verify, ruler)"),
        ("Rate the prompt {prompt}", "add {completion}"),
        ("Rate {completion.upper}", "plain column names"),
        ("Rate {completion} {", "not a valid template"),
    ],
)
def test_bad_templates_are_config_errors(spec, message):
    with pytest.raises(JudgeConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("{", r"\{")):
        JudgeTemplate.load(spec)


def test_template_missing_prompt_or_column_is_a_row_error():
    batch = Batch(None, ["x"], {})
    with pytest.raises(JudgeInputError, match="no prompt"):
        JudgeTemplate.load("pointwise").render(batch.row(0), "solution")
    with pytest.raises(KeyError, match="solution"):
        JudgeTemplate.load("binary").render(_row(), "solution")


# ----- pacing ------------------------------------------------------------------------------------
class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_token_bucket_allows_a_minute_burst_then_paces():
    clock = FakeClock()
    bucket = TokenBucket(60, clock=clock)  # one per second, burst of 60
    assert [bucket.reserve(1) for _ in range(60)] == [0.0] * 60
    assert bucket.reserve(1) == pytest.approx(1.0)
    assert bucket.reserve(1) == pytest.approx(2.0)  # queued behind the previous reservation
    clock.now = 10.0
    assert bucket.reserve(1) == 0.0  # refilled 10 tokens minus the 2 owed


def test_token_bucket_give_back_and_oversized_requests():
    clock = FakeClock()
    bucket = TokenBucket(600, clock=clock)  # 10 tokens per second
    assert bucket.reserve(5000) == pytest.approx(0.0)  # capped at one minute's budget
    assert bucket.reserve(100) == pytest.approx(10.0)
    bucket.give_back(100)
    assert bucket.reserve(50) == pytest.approx(5.0)
    clone = pickle.loads(pickle.dumps(bucket))
    assert clone.reserve(10) == pytest.approx(6.0)
    with pytest.raises(ValueError):
        TokenBucket(0)


def test_backoff_grows_exponentially_with_jitter_and_cap():
    assert backoff_delay(0, 0.5, 30, rand=lambda: 0.0) == 0.25
    assert backoff_delay(0, 0.5, 30, rand=lambda: 1.0) == 0.5
    assert backoff_delay(3, 0.5, 30, rand=lambda: 1.0) == 4.0
    assert backoff_delay(10, 0.5, 30, rand=lambda: 1.0) == 30.0
    assert 15.0 <= backoff_delay(10, 0.5, 30) <= 30.0


def test_retry_after_header_forms():
    assert retry_after({"Retry-After": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=lambda: 1445412500.0) == 10.0
    assert retry_after({"Retry-After": "soon"}) is None
    assert retry_after({}) is None and retry_after(None) is None
