"""canonical runs only the steps a text's characters call for: on any text it reads as the full pipeline does."""

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardhub.rewards.text import canonical, fold_confusables, latin_lookalikes, strip_invisible, unify_lines
from rewardhub.rewards.text.canonical import _GROUP_SPACE, _SCRIPT_RUN, _script_run

_STRAY_MARKS = re.compile("(?<=[A-Za-z0-9])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
# Characters each step reads, and what lies around them: the alphabet the texts below are drawn from.
TRICKY = ["a", "b", "x", "K", "0", "5", " ", ".", "\n", "\r", "\u200b", "\u200d", "\u00ad", "\u202e", "\U000e0041",
          "\ufe0f", "\u034f", "\u3164", "\u2800", "\u00a0", "\u202f", "\u2009", "⁰", "²", "⁻", "₂", "ⁿ", "½", "\u2044",
          "\u0301", "\u0308", "\u0344", "\u20d7", "\ufe20", "Ａ", "９", "ﬁ", "𝐀", "𝛂", "\u1100", "\u1161", "\u11a8",
          "é", "İ", "\u212a", "ı", "ж", "Я", "β", "λ", "—", "答", "\u2028", "⑴", "\u0b47", "\u0b3e", "\U0001F600",
          *sorted(latin_lookalikes())[::40]]


def every_step(text: str) -> str:
    """The canonical reading with every step run on every text (the module docstring's steps, in order)."""
    text = strip_invisible(unify_lines(text))
    text = _SCRIPT_RUN.sub(_script_run, _GROUP_SPACE.sub("", text))
    text = unicodedata.normalize("NFKC", text).replace("\u2044", "/")
    return fold_confusables(_STRAY_MARKS.sub("", text))


@given(st.lists(st.sampled_from(TRICKY), max_size=16).map("".join))
def test_canonical_reads_as_every_step_would(text):
    assert canonical(text) == every_step(text)


@given(st.text())
def test_canonical_reads_any_text_as_every_step_would(text):
    assert canonical(text) == every_step(text)


@pytest.mark.parametrize(("written", "read"), [
    ("b\U0001d6c2nana", "banana"),  # NFKC writes a Greek look-alike (𝛂 is α) inside a Latin word
    ("½ cup", "1/2 cup"),  # NFKC writes the fraction slash
    ("5\u0344", "5"),  # NFKC writes two marks, left on a digit
    ("ｂаnana", "banana"),  # a full-width letter and a Cyrillic one in one word
])
def test_what_nfkc_writes_is_read_by_the_steps_after_it(written, read):
    assert canonical(written) == read


def test_many_kinds_of_invisible_characters_at_once_are_all_gone():
    hidden = "\u200b\u200c\u200d\u2060\u180e\ufeff\u00ad\u061c\u200e\u200f\u202a\u2066\U000e0041"
    assert canonical(f"W{hidden}ait, {hidden}no") == "Wait, no"
    assert canonical(f"ban\u3164{hidden}ana") == "ban ana"


def test_a_lone_surrogate_is_kept_as_written():
    assert canonical("x\ud800 \u200by") == "x\ud800 y"


def test_every_second_half_of_a_composition_is_a_mark_or_a_hangul_vowel_or_final():
    """What canonical's NFKC gate rests on (a text whose other characters are none of these and change under
    NFKC not is NFKC already): checked against this Python's Unicode tables."""
    seconds = set()
    for code in range(0x80, 0x110000):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(chr(int(parts[1], 16)))
    assert seconds and all(unicodedata.combining(char) or unicodedata.category(char).startswith("M")
                           for char in seconds)


@pytest.mark.parametrize(("written", "read"), [
    ("caf" + "e\u0301 ｔｈｅ", "caf\u00e9 the"),  # a mark composes with the ASCII letter before it
    ("x ９" * 100, "x 9" * 100),  # more places than are normalised one by one
    ("ＡＢＣＤＥＦＧＨＩＪ ½ ﬁ", "ABCDEFGHIJ 1/2 fi"),  # more kinds of character than are found one by one
    ("答案是９。", "答案是9。"),  # a stretch of non-ASCII text around the full-width digit
])
def test_nfkc_of_the_stretches_that_need_it_reads_as_nfkc_of_the_whole(written, read):
    assert canonical(written) == read == every_step(written)
