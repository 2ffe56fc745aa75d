"""The canonical reading of policy-written text: what a person sees, whatever characters wrote it."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardhub.rewards.text import canonical, fold_confusables, is_blank, strip_invisible, unify_lines

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u00ad", "\u200e", "\u200f", "\u202a", "\u202e", "\u2060", "\ufeff",
             "\u2066", "\u180e", "\U000e0041", "\ufe0f", "\u034f"]
BREAKS = ["\r\n", "\r", "\u0085", "\u2028", "\u2029", "\u000b", "\u000c"]


@pytest.mark.parametrize("mark", INVISIBLE)
def test_an_invisible_character_inside_a_word_is_gone(mark):
    assert canonical(f"ban{mark}ana and W{mark}ait") == "banana and Wait"


@pytest.mark.parametrize("brk", BREAKS)
def test_every_line_break_is_a_newline(brk):
    assert canonical(f"answer{brk}- [End of response]") == "answer\n- [End of response]"
    assert unify_lines(f"a{brk}b") == "a\nb"


@pytest.mark.parametrize(("written", "read"), [
    ("Ａ", "A"), ("９．５２", "9.52"), ("－１７２１", "-1721"), ("１，０００", "1,000"), ("Ｓｃｏｒｅ：１０", "Score:10"),
    ("𝐀𝐧𝐬𝐰𝐞𝐫", "Answer"), ("［End of response］", "[End of response]"), ("ﬁnal", "final"), ("½", "1/2"),
    ("\u3000x", " x"),
])
def test_compatibility_forms_are_folded(written, read):
    assert canonical(written) == read


@pytest.mark.parametrize(("written", "read"), [
    ("5.29 × 10⁻¹¹", "5.29 × 10^{-11}"), ("x²", "x^2"), ("H₂O", "H_2O"), ("e⁽ⁿ⁺¹⁾", "e^{(n+1)}"),
])
def test_superscripts_and_subscripts_keep_their_meaning(written, read):
    assert canonical(written) == read


@pytest.mark.parametrize("space", ["\u00a0", "\u202f", "\u2009", "\u2007"])
def test_a_grouping_space_between_digit_groups_joins_the_number(space):
    assert canonical(f"7{space}610{space}539") == "7610539"
    assert canonical(f"12{space}oder 13") == "12 oder 13"  # not a digit group: a plain space
    assert canonical(f"12{space}13") == "12 13"  # two digits are no thousands group


@pytest.mark.parametrize(("written", "read"), [
    ("bаnana", "banana"),          # Cyrillic а inside a Latin word
    ("Thе answer", "The answer"),  # Cyrillic е
    ("nο_comma", "no_comma"),      # Greek ο inside a Latin word
])
def test_look_alike_letters_in_latin_words_are_latin(written, read):
    assert canonical(written) == read


def test_a_standalone_greek_letter_stays_greek():
    assert canonical("Α)") == "Α)"  # a variable in math, not the letter A


def test_a_word_of_cyrillic_look_alikes_in_latin_text_is_latin_but_russian_text_keeps_its_letters():
    assert canonical("The answer is А") == "The answer is A"
    assert canonical("ответ: А") == "ответ: А"
    assert canonical("α + β") == "α + β"


def test_stray_combining_marks_on_ascii_letters_are_dropped_but_accents_compose():
    assert canonical("b\u0332anana") == "banana"
    assert canonical("cafe\u0301") == "café"


@pytest.mark.parametrize("text", ["", "   ", "\u200b", "\u200b\u200d\n", "\u3164", " \u2800 ", "\ufeff\u00ad"])
def test_blank_text(text):
    assert is_blank(text)


def test_visible_text_is_not_blank():
    assert not is_blank("\u200b.")
    assert not is_blank("0")


@given(st.text())
def test_canonical_is_idempotent(text):
    once = canonical(text)
    assert canonical(once) == once


@given(st.text(alphabet=st.characters(codec="ascii")), st.lists(st.sampled_from(INVISIBLE), max_size=5), st.data())
def test_invisible_characters_never_change_the_reading(text, marks, data):
    chars = list(text.replace("\r", "\n").replace("\x0b", "\n").replace("\x0c", "\n"))
    for mark in marks:
        chars.insert(data.draw(st.integers(0, len(chars))), mark)
    assert canonical("".join(chars)) == canonical(text)


@given(st.text())
def test_no_format_character_survives(text):
    assert not any(unicodedata.category(ch) == "Cf" for ch in canonical(text))
    assert "\r" not in canonical(text) and "\u2028" not in canonical(text)


def test_ascii_text_is_returned_as_is():
    text = "The answer is \\boxed{42}.\n"
    assert canonical(text) is text or canonical(text) == text
    assert strip_invisible(text) == text
    assert fold_confusables(text) == text
