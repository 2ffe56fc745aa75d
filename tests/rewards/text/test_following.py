"""rewards.text.extract.following and the statements that use it: what the words right after a stated answer
offer beside it (a hedge, a guess, a condition), and a correction inside the answer's own sentence."""

from __future__ import annotations

import pytest

from rewardhub.rewards.text import lexicon
from rewardhub.rewards.text.extract import OR, Unreadable, final_statement
from rewardhub.rewards.text.extract.following import following


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        ("The answer is $12$. Or $13$.", "hedge", " $13$"),
        (r"\boxed{12}. Or maybe 13.", "hedge", " 13"),
        (r"\boxed{12} (or possibly $405$)", "hedge", " $405$"),
        ("Die Antwort ist 12. Oder 13.", "hedge", " 13"),
        ("答案是 12。或者 13。", "hedge", " 13"),
        (r"\boxed{12}, unless it is 7.", "condition", " it is 7"),
        (r"\boxed{12}, in which case it is 13, depending on it.", "condition", "in which case it is 13, depending on it"),
    ],
)
def test_the_offer_after_an_answer_is_found(text, kind, words):
    end = text.find("12") + 2
    end = text.find("}", end) + 1 if text.startswith("\\boxed") else end
    found = following(text, end)
    assert found is not None and found.kind == kind and text[found.start : found.end] == words


@pytest.mark.parametrize("text", [r"\boxed{12}. Next we check it.", r"\boxed{12} u = 5 is the substitution.",
                                  r"\boxed{12}. Then 13 more apples arrive.", "The answer is 12."])  # fmt: skip
def test_other_words_after_an_answer_offer_nothing(text):
    end = text.find("12") + 2
    end = text.find("}", end) + 1 if text.startswith("\\boxed") else end
    assert following(text, end) is None


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("The answer is $12$. Or $13$.", f"12{OR}13"),
        ("Ответ: 12. Или 13.", f"12{OR}13"),
        (r"Final answer: $13.7$ (oder vielleicht 14).", f"13.7{OR}14"),
        ("<answer>12</answer> Or 13.", f"12{OR}13"),
        (r"\boxed{12}. Or so I think.", "12"),
        ("Antwort: 196 Moment, das ist falsch. Richtig ist 207.", "207"),
        ("Réponse : 595 Attends, je me suis trompé : c'est 635.", "635"),
        ("答え: 595 いや、間違えました。正しくは 635 です。", "635"),
        ("The answer is actually 12.", "12"),  # a correction word before any value is no correction
        ("The answer is 12 instead of 13.", None),  # lower case, mid-clause: not a correction that opens a clause
    ],
)
def test_final_statements_read_what_follows(text, read):
    found = final_statement(text, None)
    if read is None:
        assert found is None or isinstance(found, Unreadable) or found != "12"
    else:
        assert found == read


@pytest.mark.parametrize("text", [r"\boxed{12}, unless it is 7.", r"\boxed{12}. Or more.",
                                  "The answer is 250, in which case it is 248, depending on the rounding."])  # fmt: skip
def test_conditions_and_empty_hedges_state_no_single_value(text):
    assert isinstance(final_statement(text, None), Unreadable)


def test_every_language_has_conditions():
    assert set(lexicon.CONDITIONS) == set(lexicon.LANGUAGES)
    assert [word for _, _, word in lexicon.find("12, sonst 7; 12，除非 7", "conditions")] == ["sonst", "除非"]


def test_a_long_text_after_the_answer_is_read_in_a_bounded_stretch():
    text = r"\boxed{12}. Or " + "x " * 500_000 + "13."
    assert final_statement(text, None) == "12"  # the offer's words end where the window ends: no value in them
