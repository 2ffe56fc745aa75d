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


@pytest.mark.parametrize(
    ("text", "mode", "value"),
    [
        ("7", "number", 0.7),
        ("Score: 8", "number", 0.8),
        ("**Rating:** 9. The answer has 3 small issues.", "number", 0.9),
        ("The response is fine overall. I'd give it 6/10.", "number", 0.6),
        ("4 out of 5", "number", 0.8),  # another denominator is rescaled to the range
        ("3. The explanation misses 2 steps.", "number", 0.3),  # a leading number wins over later ones
        ("After weighing it all up, my verdict is 5", "number", 0.5),
        ("Score: 12", "number", 1.0),  # clipped into range
        ("score = -3", "number", 0.0),
        ('{"score": 7.5, "why": "ok"}', "number", 0.75),
        ('Here you go:\n```json\n{"score": "4"}\n```', "json", 0.4),
        ('{"score": 7', "number", 0.7),  # truncated JSON still has a labelled number
        ("Yes", "yes_no", 1.0),
        ("No, the final answer differs.", "yes_no", 0.0),
        ("The response's answer is not correct.", "yes_no", 0.0),
        ("Comparing with the reference, it is correct.", "yes_no", 1.0),
        ("Working: 2+2 is 4, no issues. Verdict: incorrect", "yes_no", 0.0),
        ('{"score": true}', "yes_no", 1.0),
        ("Score: 3 out of 10", "auto", 0.3),
        ("yes", "auto", 1.0),
        ("maybe 2", "auto", 0.2),
        # a negated score is not the score; a stated scale is not a score
        ("I'd give it 7/10, not 10/10", "number", 0.7),
        ("Solid work: 8/10 rather than 9/10.", "number", 0.8),
        ("It deserves no more than 5/10.", "number", 0.5),  # a cap, not a negation
        ("Score (0-10): 7", "number", 0.7),
        ("Rating (1-10): 6", "number", 0.6),
        ("I'd rate it 8 on a scale of 1 to 10.", "number", 0.8),
        ("On a scale from 0 to 10, this deserves a 6.", "number", 0.6),
        ("Score: 8 out of 10", "number", 0.8),
        ("on a scale of 1 to 10, 8", "auto", 0.8),
        # a leading "No" that starts a phrase is not the verdict
        ("No issues found. The response is correct.", "yes_no", 1.0),
        ("No mistakes here, correct.", "yes_no", 1.0),
        ("No. It is correct in form but the value is wrong.", "yes_no", 0.0),
        ("**Yes** - matches the reference.", "yes_no", 1.0),
        ("Yes\n\nThe student's answer has no wrong steps.", "yes_no", 1.0),
    ],
)
def test_parse_answer_reads_chatty_answers(text, mode, value):
    assert parse_answer(text, mode, TEN).value == pytest.approx(value)


def test_parse_notes_clipping_and_verdicts():
    parsed = parse_answer("Score: 15", "number", TEN)
    assert parsed.value == 1.0 and "clipped 15 to 10" in parsed.how
    assert parse_answer("Yes.", "yes_no", TEN).verdict is True
    assert parse_answer("incorrect", "yes_no", TEN).verdict is False
    assert parse_answer("8", "number", TEN).verdict is None


@pytest.mark.parametrize(
    ("text", "mode"),
    [("I cannot grade this.", "number"), ("no json here: score 5", "json"), ('{"score": 7', "json"),
     ('{"verdict": "good"}', "json"), ("7", "yes_no"), ("", "auto")],  # fmt: skip
)
def test_parse_answer_without_a_score_raises(text, mode):
    with pytest.raises(UnparsableAnswer):
        parse_answer(text, mode, TEN)


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.sampled_from(["number", "auto", "json"]))
def test_any_number_lands_in_unit_interval(raw, mode):
    text = f'{{"score": {raw}}}' if mode == "json" else f"Score: {raw:.3f}"
    assert 0.0 <= parse_answer(text, mode, TEN).value <= 1.0


def test_expected_score_from_logprobs():
    tokens = [("Score", [("Score", 0.0)]), (":", [(":", 0.0)]), ("7", [("7", math.log(0.5)), ("8", math.log(0.3)),
              ("9", math.log(0.1)), ("eleven", math.log(0.05)), ("42", math.log(0.05))])]  # fmt: skip
    parsed = expected_score(tokens, "number", TEN)
    # out-of-range and non-numeric alternatives are dropped and the rest renormalised
    assert parsed.value == pytest.approx((7 * 0.5 + 8 * 0.3 + 9 * 0.1) / 0.9 / 10)
    yes = expected_score([(" Yes", [(" Yes", math.log(0.6)), ("No", math.log(0.2)), ("Maybe", math.log(0.2))])],
                         "yes_no", TEN)  # fmt: skip
    assert yes.value == pytest.approx(0.75) and yes.verdict is True
    assert expected_score([("hello", [("hello", 0.0)])], "number", TEN) is None


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
        ("pointwse", "not a built-in template (pointwise, binary)"),
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
