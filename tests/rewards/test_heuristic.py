"""heuristic: weighted unsupervised checks (length window, keywords, ending, repetition) in [0, 1]."""

import pytest

import rewardhub
from rewardhub import ConfigError
from rewardhub.rewards.length import estimated_tokens
from rewardhub.testing import check_contract

MB = 1_000_000


def chat(text):
    return [{"role": "assistant", "content": text}]


ONLY = {"ending_weight": 0.0, "repetition_weight": 0.0}  # switch the default checks off


@pytest.mark.parametrize(
    ("params", "text", "value", "reason"),
    [
        # defaults: ending punctuation + no repetition
        ({}, "A fine sentence.", 1.0, "all checks passed"),
        ({}, "A fine sentence", 0.5, "failed: does not end with one of '.!?'"),
        ({}, 'He said "yes!"', 1.0, "all checks passed"),
        ({}, "<think>x</think><answer>It is 4.</answer>\n", 1.0, "all checks passed"),
        ({}, "spam spam spam spam spam spam.", 0.5 + 0.5 * (1 - (0.5 - 0.2) / 0.8),  # "spam." is its own word
         "failed: 50% of 3-grams repeated > max_repeated 20%"),
        ({}, "", 0.5, "failed: does not end with one of '.!?'"),
        ({"ending_punctuation": "!"}, "Done.", 0.5, "failed: does not end with one of '!'"),
        ({"ending_punctuation": None}, "no ending", 1.0, "all checks passed"),
        # length window (words here: no completion_ids)
        ({**ONLY, "min_len": 4, "max_len": 6}, "one two three four five", 1.0, "all checks passed"),
        ({**ONLY, "min_len": 4}, "one", 0.25, "failed: length 1 token (estimated: no completion_ids) < min_len 4"),
        ({**ONLY, "max_len": 2}, "a b c d", 0.5, "failed: length 4 tokens (estimated: no completion_ids) > max_len 2"),
        ({**ONLY, "min_len": 1}, "", 0.0, "failed: length 0 tokens (estimated: no completion_ids) < min_len 1"),
        # keywords: whole words, case-insensitive by default
        ({**ONLY, "required_keywords": ["because", "therefore"]}, "Because x, therefore y", 1.0, "all checks passed"),
        ({**ONLY, "required_keywords": ["because", "therefore"]}, "because x", 0.5,
         "failed: missing keyword(s) 'therefore'"),
        ({**ONLY, "required_keywords": ["cat"]}, "concatenate", 0.0, "failed: missing keyword(s) 'cat'"),
        ({**ONLY, "forbidden_keywords": ["as an AI"]}, "As an AI, I cannot", 0.0,
         "failed: forbidden keyword(s) 'as an AI'"),
        ({**ONLY, "required_keywords": ["<answer>"], "forbidden_keywords": ["sorry"]}, "x<answer>", 1.0,
         "all checks passed"),
        ({**ONLY, "required_keywords": ["Cat"], "case_sensitive": True}, "cat", 0.0, "failed: missing keyword(s) 'Cat'"),
        # weights: the mean is weighted
        ({"min_len": 10, "length_weight": 3.0, "repetition_weight": 0.0}, "short.", (3 * 0.2 + 1.0) / 4,
         "failed: length 2 tokens (estimated: no completion_ids) < min_len 10"),
    ],
)
def test_checks(params, text, value, reason):
    reward = rewardhub.get("heuristic", **params)
    for form in (text, chat(text)):
        score = reward.evaluate(None, [form]).scores[0]
        assert score.value == pytest.approx(value) and score.reason == reason
        assert 0.0 <= score.value <= 1.0


def test_length_counts_tokens_from_completion_ids():
    reward = rewardhub.get("heuristic", min_len=3, max_len=4, **ONLY)
    result = reward.evaluate(None, ["one two", "a b c d e f"], completion_ids=[[1, 2, 3], [1, 2, 3, 4, 5, 6, 7, 8]])
    assert result.values == [1.0, 0.5]
    assert result.reasons[1] == "failed: length 8 tokens > max_len 4"


def test_several_failures_are_listed():
    reward = rewardhub.get("heuristic", min_len=20, forbidden_keywords=["lol"])
    score = reward.evaluate(None, ["lol lol lol lol lol"]).scores[0]
    assert score.reason == (
        "failed: length 5 tokens (estimated: no completion_ids) < min_len 20; forbidden keyword(s) 'lol'; "
        "does not end with one of '.!?'; 67% of 3-grams repeated > max_repeated 20%"
    )
    assert score.value == pytest.approx((5 / 20 + 0 + 0 + (1 - (2 / 3 - 0.2) / 0.8)) / 4)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"ending_weight": -1.0}, "ending_weight must be >= 0"),
        ({"min_len": 5, "max_len": 2}, "must not exceed"),
        ({"min_len": -1}, "min_len >= 0"),
        ({"required_keywords": "because"}, "expected list or null, got str"),
        ({"forbidden_keywords": [""]}, "non-empty strings"),
        ({"max_repeated": 1.0}, "max_repeated < 1"),
        ({"ending_weight": 0.0, "repetition_weight": 0.0}, "no check switched on"),
        ({"length_weight": 0.0, "min_len": 3, "ending_punctuation": "", "repetition_weight": 0}, "no check"),
        ({"colour": "red"}, "unknown param"),
    ],
)
def test_config_errors(params, message):
    with pytest.raises(ConfigError, match=message):
        rewardhub.get("heuristic", **params)


def test_bad_rows_one_megabyte_and_load():
    rewards = rewardhub.load({"rewards": [{"name": "heuristic", "params": {"max_len": 100, "required_keywords": ["x"]}}]})
    fresh = " ".join(f"w{i}" for i in range(MB // 8)) + "."
    scored = rewards.score([
        {"prompt": "p", "completion": "x marks the spot."},
        {"prompt": "p", "completion": fresh},
        {"prompt": "p", "completion": "</answer>" * (MB // 9)},
        {"prompt": "p", "completion": {"role": "assistant"}},
        {"prompt": "p", "completion": 3.5},
    ])
    values = [r["reward"] for r in scored]
    assert values[0] == 1.0
    assert values[1] == pytest.approx((100 / estimated_tokens(fresh) + 0 + 1 + 1) / 4)
    glued = "</answer>" * (MB // 9)  # one whitespace "word" of a megabyte is ~250,000 tokens: far too long
    assert values[2] == pytest.approx((100 / estimated_tokens(glued) + 0 + 0 + 1) / 4)
    assert values[3] == pytest.approx(2 / 4)  # a message with no content is empty text
    assert scored[4]["rewards"]["heuristic"] is None and "not text" in scored[4]["reasons"]["heuristic"]
    assert values[4] == 0.0  # the abstaining row counts at its group's floor (at most a failure's 0.0)


def test_contract_kit():
    check_contract(rewardhub.get("heuristic", min_len=3), correct_completion="The answer is \\boxed{10}.")


# ----- what a person sees decides (issue 33, item 4) ---------------------------------------------------------------
def test_a_loop_varied_with_zero_width_spaces_fails_the_repetition_check():
    loop = "I will check the answer again carefully. " * 30
    zwsp = "\u200b"
    varied = " ".join(f"I will check the answer{zwsp * (i % 4)} again care{zwsp}fully." for i in range(30))
    reward = rewardhub.get("heuristic")
    plain, disguised = reward(None, [loop, varied])
    assert plain < 0.6
    assert disguised <= plain + 0.05  # it was 1.0


def test_invisible_characters_neither_hide_a_forbidden_word_nor_forge_a_required_one():
    reward = rewardhub.get("heuristic", forbidden_keywords=["sorry"], required_keywords=["therefore"],
                           ending_punctuation=".", repetition_weight=0.0)
    # keywords (half: 'therefore' there, 'sorry' there too) and ending (a full stop), averaged
    assert reward(None, ["so\u200brry, the\u200brefore it is 4."]) == [0.75]
    assert reward(None, ["ѕоrrу, therefore it is 4."]) == [0.75]  # Cyrillic look-alikes are still 'sorry'
    assert reward(None, ["Therefore it is 4\u200b\u200b"]) == [0.5]  # invisible marks are no full stop
    assert reward(None, ["Therefore it is 4．"]) == [1.0]  # a full-width full stop ends a sentence
    assert reward(None, ["Поэтому ответ 4. Therefore."]) == [1.0]
