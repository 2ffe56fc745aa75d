"""rewards.text.extract.stated: where each final statement of a completion stands, and what it states."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardhub.rewards.text.extract.stated import Stated, final_statements, statement_places
from rewardhub.rewards.text.extract.statements import answer_is, has_phrase, last_phrase


def test_the_last_statement_of_each_kind_in_text_order():
    text = r"Work. The answer is 55. $\boxed{54}$ then <answer>53</answer>"
    found = final_statements(text)
    assert [s.answer for s in found] == ["55", "54", "53"]
    assert all(isinstance(s, Stated) and text[s.start : s.end] for s in found)
    assert [s.start for s in found] == sorted(s.start for s in found)
    assert text[found[1].start :].startswith(r"\boxed{54}") and text[found[2].start :].startswith("<answer>53")


def test_statements_in_other_languages_and_unreadable_ones():
    assert [s.answer for s in final_statements("答案是 12。")] == ["12"]
    assert final_statements("The answer is 5 or more.") == []  # a hedge states no answer
    assert final_statements("No statement here, 42.") == []


def test_a_megabyte_of_statements_is_read():
    text = "The answer is 5. \\boxed{6} " * 40_000
    assert [s.answer for s in final_statements(text)][-1] == "6"


def test_places_stand_where_the_statements_do_and_read_what_they_state_when_asked():
    text = r"Work. The answer is 5 or more. $\boxed{54}$ then <answer>53</answer>"
    places = statement_places(text)
    assert [(p.start, p.end) for p in places] == sorted((p.start, p.end) for p in places)
    assert [p.read() for p in places][1:] == ["54", "53"]
    assert [(s.start, s.end, s.answer) for s in final_statements(text)] == [(p.start, p.end, p.read()) for p in places[1:]]


@pytest.mark.parametrize("rest", ["", " ", " $", "** $", "\t*$ *", "$"])
def test_a_phrase_followed_on_its_line_by_no_value_states_none(rest):
    for phrase in ("So the answer is", "**Answer:**", "The final answer is"):
        assert answer_is(phrase + rest) is None
        assert answer_is(phrase + rest + "\n\\boxed{5}") is None
    assert answer_is("The answer is $ 5") is not None and answer_is("The answer is $5$") == "5"


@pytest.mark.parametrize("text", [
    r"So the answer is\boxed{5}", r"Antwort:\boxed{5}", r"答案是\boxed{5}", "The answers are<answer>5</answer>",
    r"We get 5. \boxed{5}", r"answer\boxed{5}", r"The answer is 4 \fbox{5}", "<answer>4</answer> <answer>5</answer>",
])
def test_a_stretch_cut_before_a_box_or_tag_holds_a_phrase_only_where_the_text_does(text):
    cut = max(text.rfind("\\boxed"), text.rfind("\\fbox"), text.rfind("<answer>"))
    assert not has_phrase(text[:cut]) or has_phrase(text)
    if not has_phrase(text):  # exact_match then reads the stretch without phrases: every statement reads the same
        from rewardhub.rewards.exact_match.statements import _readable_from_last

        assert list(_readable_from_last(text[:cut], False)) == list(_readable_from_last(text[:cut]))


# Pieces of the stretch before a final box or tag: words, phrases in several languages, brackets that could hold a
# box ("answer (...) is"), math delimiters, bold marks, values, earlier boxes and tags.
PIECES = ["So", "the", "answer", "answers", "is", "are", ":", "(", ")", "$", "$$", "*", "**", " ", "  ", "\n", "\t",
          "5", "12", "x = 3", "\\boxed{4}", "\\fbox{7}", "<answer>9</answer>", "<answer>", "Antwort:", "答案是",
          "la respuesta es", "Ответ:", "or", "not", "Wait,", "isn't", "\\(", "\\)"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.sampled_from(["", "the answer is ", "Answer: $", "答案是",
       "answer (4) is ", "the answer is\n", "answer is $$"]), st.sampled_from(["\\boxed{5}", "\\fbox{5}", "<answer>5</answer>"]),
       st.booleans())  # fmt: skip
def test_a_stretch_whose_last_phrase_only_introduces_the_box_reads_the_same_without_phrases(pieces, lead, final, spaced):
    """exact_match reads the stretch before a box or tag without answer phrases when the text's last phrase only
    introduces it (``So the answer is $\\boxed{5}$``): every statement read there must be the same either way."""
    from rewardhub.rewards.exact_match.statements import _bare_phrase_before, _readable_from_last

    text = (" " if spaced else "").join(pieces) + lead + final
    cut = len(text) - len(final)
    if _bare_phrase_before(text, cut):
        assert list(_readable_from_last(text[:cut], False)) == list(_readable_from_last(text[:cut], True))


@pytest.mark.parametrize("text", [
    r"So the answer is $\boxed{5}$", r"The final answer is **\boxed{5}", "The answer is <answer>5</answer>",
    r"The answer is 4. So the answer is \boxed{5}", r"answer (\boxed{4}) is \boxed{5}", r"the answer is $$\boxed{5}$$",
])
def test_the_last_phrase_before_a_box_states_nothing_in_its_stretch_or_is_read(text):
    from rewardhub.rewards.exact_match.statements import _bare_phrase_before, _readable_from_last

    cut = max(text.rfind("\\boxed"), text.rfind("<answer>"))
    assert last_phrase(text) is not None
    assert list(_readable_from_last(text[:cut], not _bare_phrase_before(text, cut))) == list(_readable_from_last(text[:cut]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["5", "or", "12", "$x^2 + 1$", "\\boxed{3}", "maybe", "but", "and", "$$", "seven",
                                 "$" + "x+" * 30 + "1$", "(or 6)", "unless", "."]), min_size=1, max_size=8),
       st.sampled_from([None, 4, 12, 40, 1000]))  # fmt: skip
def test_a_phrase_read_under_any_bound_is_read_as_a_fresh_reading_under_it_would(words, bound):
    """answer_is reads a phrase's words once at no bound and reuses that reading under a bound it fits."""
    from rewardhub.rewards.text.extract.statements import _read_phrase, _stated_words

    text = "The answer is " + " ".join(words)
    answer_is(text, None)  # the unbounded reading remembered first, as find_answer leaves it
    stated = _stated_words(text)
    expected = _read_phrase(stated, bound) if isinstance(stated, str) else stated
    assert answer_is(text, bound) == expected


def test_where_the_last_phrase_stands():
    text = "The answer is 4. Die Antwort ist 5."
    assert last_phrase(text) == (text.index("Die"), text.index("ist") + 3)  # "die antwort ist", the later one
    assert last_phrase("No phrase, 5.") is None
