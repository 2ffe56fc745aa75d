"""The last sentence of a text (rewards/text/sentences.py), as the final-answer readers take it."""

import pytest

from rewardhub.rewards.text.sentences import last_sentence


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We add. The answer is 3.5.", "The answer is 3.5."),  # a decimal point ends no sentence
        ("First line\nsecond line", "second line"),
        ("先算。答案是12。", "答案是12。"),  # a stop ending the text ends no sentence before the last one
        ("One sentence only", "One sentence only"),
        ("Done!   \n\n", "Done!"),
        ("", ""),
    ],
)
def test_last_sentence(text, expected):
    assert last_sentence(text) == expected


def test_last_sentence_reads_only_its_reach_and_is_linear_on_a_long_sentence():
    text = "x" * 1_000_000 + ". tail words"
    assert last_sentence(text, 400) == "tail words"
    assert last_sentence("a" * 1_000_000, 400) == "a" * 400
