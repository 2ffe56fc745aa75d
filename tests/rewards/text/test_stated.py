"""rewards.text.extract.stated: where each final statement of a completion stands, and what it states."""

from __future__ import annotations

import pytest

from rewardhub.rewards.text.extract.stated import Stated, final_statements, statement_places
from rewardhub.rewards.text.extract.statements import answer_is, has_phrase


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
    if not has_phrase(text):
        def read(places):
            return [(place.start, place.end, place.read()) for place in places]

        assert read(statement_places(text[:cut], phrases=False)) == read(statement_places(text[:cut]))
