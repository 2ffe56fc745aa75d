"""repetition_penalty: fraction of repeated word n-grams scaled to [max_penalty, 0]."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rewardhub
from rewardhub import ConfigError
from rewardhub.rewards.repetition import repeated_fraction, repeated_share, word_readings, words
from rewardhub.rewards.text import canonical
from rewardhub.testing import check_contract

MB = 1_000_000


def chat(text):
    return [{"role": "assistant", "content": text}]


@pytest.mark.parametrize(
    ("tokens", "n", "fraction"),
    [
        ("a b c d".split(), 2, 0.0),
        ("a b a b".split(), 2, 1 / 3),  # (a b) (b a) (a b): one repeat of three
        ("a a a a a".split(), 1, 4 / 5),
        ("a a a a a".split(), 3, 2 / 3),
        ("a b".split(), 3, None),
        ([], 1, None),
        ([1, 2, 1, 2], 2, 1 / 3),  # token ids work too
    ],
)
def test_repeated_fraction(tokens, n, fraction):
    assert repeated_fraction(tokens, n) == (pytest.approx(fraction) if fraction is not None else None)


def test_words_lowercase_and_split_on_whitespace():
    assert words("The  cat\nthe CAT") == ["the", "cat", "the", "cat"]


@pytest.mark.parametrize(
    ("params", "text", "value", "reason"),
    [
        ({}, "the cat sat on the mat", 0.0, "0% of 3-grams repeated"),
        ({}, "go go go go go go", -0.75, "75% of 3-grams repeated"),  # 4 trigrams, 1 distinct
        ({}, "I like it. I like it. I like it.", -4 / 7, "57% of 3-grams repeated"),
        ({"max_penalty": -0.5}, "go go go go go go", -0.375, "75% of 3-grams repeated"),
        ({"ngram_size": 1}, "a b a b", -0.5, "50% of 1-grams repeated"),
        ({"max_penalty": 0.0}, "go go go go go go", 0.0, "75% of 3-grams repeated"),
        ({}, "too short", 0.0, "fewer than 3 words: nothing to penalise"),
        ({}, "", 0.0, "fewer than 3 words: nothing to penalise"),
    ],
)
def test_values(params, text, value, reason):
    reward = rewardhub.get("repetition_penalty", **params)
    for form in (text, chat(text)):
        score = reward.evaluate(None, [form]).scores[0]
        assert score.value == pytest.approx(value) and score.reason == reason
    assert str(score.value) != "-0.0"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"max_penalty": 0.5}, "max_penalty must be <= 0"),
        ({"ngram_size": 0}, "ngram_size must be >= 1"),
        ({"ngram_size": 2.5}, "param 'ngram_size'"),
    ],
)
def test_config_errors(params, message):
    with pytest.raises(ConfigError, match=message):
        rewardhub.get("repetition_penalty", **params)


def test_bad_rows_and_one_megabyte():
    reward = rewardhub.get("repetition_penalty")
    fresh = " ".join(f"w{i}" for i in range(MB // 8))
    values = reward(None, ["loop " * (MB // 5), fresh, None, 42, chat("")])
    assert values[0] == pytest.approx(-(MB // 5 - 3) / (MB // 5 - 2))
    assert values[1:] == [0.0, None, None, 0.0]


def test_through_load_with_weights():
    rewards = rewardhub.load([{"name": "repetition_penalty", "weight": 0.5, "params": {"ngram_size": 2}}])
    scored = rewards.score([{"prompt": "p", "completion": "a b a b"}, {"prompt": "p", "completion": "a b c"}])
    assert [r["reward"] for r in scored] == [pytest.approx(-1 / 6), 0.0]


def test_contract_kit():
    # The best a penalty gives is 0.0, so full credit (1.0) is unreachable: this checks the shape.
    check_contract(rewardhub.get("repetition_penalty"))


# ----- invisible characters cannot make a loop look fresh (issue 33, item 4) --------------------------------------
LOOP = "the cat sat on the mat and looked at the door "
ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e"]


def _varied(mode: str, repeats: int = 40) -> str:
    """The loop, each repetition disguised with zero-width characters in another place."""
    out = []
    for r in range(repeats):
        words = LOOP.split()
        zw = ZW[r % len(ZW)]
        if mode == "inside":  # inside a word: c\u200bat
            i = r % len(words)
            words[i] = words[i][:1] + zw * (1 + r % 3) + words[i][1:]
            out.append(" ".join(words))
        elif mode == "between":  # as the space between two words: the\u200bcat
            i = r % (len(words) - 1)
            out.append(" ".join(words[:i]) + " " + words[i] + zw + " ".join(words[i + 1:]))
        else:  # full-width and look-alike letters: the Cyrillic а
            i = r % len(words)
            words[i] = words[i].replace("a", "\u0430").replace("t", "ｔ")
            out.append(" ".join(words))
    return " ".join(out)


@pytest.mark.parametrize("mode", ["inside", "between", "lookalike"])
def test_a_loop_varied_with_invisible_or_lookalike_characters_is_still_a_loop(mode):
    plain = rewardhub.get("repetition_penalty")(None, [LOOP * 40])[0]
    varied = rewardhub.get("repetition_penalty")(None, [_varied(mode)])[0]
    assert plain < -0.9
    assert varied <= plain + 0.1  # it was 0.00 with a zero-width space moving around


def test_honest_non_latin_text_is_not_a_loop():
    fresh = "Кошка сидела на ковре и смотрела на дверь, потом ушла спать в другую комнату до утра."
    assert rewardhub.get("repetition_penalty")(None, [fresh, "猫はマットの上に座ってドアを見ていた。"]) == [0.0, 0.0]


@given(st.lists(st.sampled_from(["the", "cat", "sat", " ", "\u200b", "\u2060", "а", "\u00ad", "\n", "é"]), max_size=40)
       .map("".join))
def test_word_readings_given_the_canonical_text_read_as_without_it(text):
    assert word_readings(text, canonical(text)) == word_readings(text)
    assert repeated_share(text, 2, canonical(text)) == repeated_share(text, 2)
