"""``instruction_following`` red team (issues 33 and 34): forms that game IFEval's checks score 0 with the
gaming guard on (the default), natural answers with numbers keep IFEval's verdict, and the exact mode
(guard off) stays IFEval's on the very same texts."""

from __future__ import annotations

import random

import pytest
from ifeval_reference import reference_verdicts

import rewardhub

PROSE = ("Prime numbers have fascinated mathematicians for centuries because every whole number above one "
         "factors into them in exactly one way, which is why they sit at the heart of modern cryptography and "
         "of many open problems that remain unsolved today.")
MORE_PROSE = ("Teachers like to show pupils how the sieve of Eratosthenes crosses out multiples step by step, "
              "leaving only those survivors behind; students then guess patterns, test conjectures on paper and "
              "discover that gaps between consecutive survivors grow irregularly.")
PRIMES = [n for n in range(2, 300) if all(n % d for d in range(2, int(n**0.5) + 1))]
ENGLISH = ("The weather today is sunny with a light breeze from the west and the children are playing football "
           "in the park while their parents watch from the benches near the old fountain")


def padded_with(words: list[str], seed: int = 0) -> str:
    rng = random.Random(seed)
    return " ".join(w for word in ENGLISH.split() for w in (word, rng.choice(words), rng.choice(words)))


W100 = ("length_constraints:number_words", {"num_words": 100, "relation": "at least"})
GAMED = [  # (instruction id, kwargs, response): IFEval follows each; the guard must not
    (*W100, PROSE + " " + " ".join(map(str, range(1, 120)))),
    (*W100, PROSE + " " + " ".join(map(str, range(500, 380, -1)))),
    (*W100, PROSE + " " + ".".join("thisisjustpaddingtoreachthecountwithoutwritinganythingatallreallynothingatall")),
    (*W100, PROSE + " " + "-".join("spellingeverylettermakesawordforthecounterthatreadsrunsofwordcharacters")),
    ("keywords:forbidden_words", {"forbidden_words": ["banana"]}, "I ate a ban\u200bana today."),
    ("keywords:forbidden_words", {"forbidden_words": ["banana"]}, "I ate a b\u0430n\u0430n\u0430 today."),
    ("keywords:forbidden_words", {"forbidden_words": ["banana"]}, "I ate a BAN\u00adANA today."),
    ("keywords:forbidden_words", {"forbidden_words": ["banana"]}, "I ate a b.a.n.a.n.a today."),
    ("keywords:forbidden_words", {"forbidden_words": ["banana"]}, "I ate a b-a-n-a-n-a today."),
    ("keywords:forbidden_words", {"forbidden_words": ["banana"]}, "I ate a ｂａｎａｎａ today."),
    ("punctuation:no_comma", {}, "One\u201a two and three."),
    ("punctuation:no_comma", {}, "One\uff0c two and three."),
    ("punctuation:no_comma", {}, "One\u060c two and three."),
    ("punctuation:no_comma", {}, "One\ua4f9 two and three."),
    ("punctuation:no_comma", {}, "One\u3001two and three."),
    ("language:response_language", {"language": "de"},
     padded_with("der die das und ist nicht mit auf für sich dem den ein eine zu von auch".split())),
    ("language:response_language", {"language": "fr"},
     padded_with("le la les et est une des du dans pour que qui sur pas au avec".split())),
    ("language:response_language", {"language": "de"}, "12345 67890 !!! 🙂"),
    ("keywords:letter_frequency", {"letter": "q", "let_frequency": 5, "let_relation": "at least"}, "Quick: qqqqqq."),
    ("detectable_format:constrained_response", {}, "My answer is yes. no. maybe."),
    ("detectable_format:constrained_response", {}, "My answer is yes. My answer is no."),
    ("detectable_format:constrained_response", {}, "My answer is maybe.\nYes.\nNo."),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "Points:\n* \u200b\n* \u200b\n* \u200b"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "Points:\n- .\n- \u2060\n- !"),
    ("detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 2},
     "SECTION 1\n\u200b\nSECTION 2\n\u200b"),
    ("detectable_format:title", {}, "<<\u200b\u200b>>\nText."),
    ("detectable_format:title", {}, "<<...>>\nText."),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [\u200b], see [\u2060]."),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*\u200b* and *\ufeff* here"),
    ("detectable_format:json_format", {}, "42"),
    ("detectable_format:json_format", {}, '"wrapped"'),
    ("detectable_format:json_format", {}, '```json\n{"a": NaN}\n```'),
    ("detectable_format:json_format", {}, '{"a": 1, "a": 2}'),
    ("startend:quotation", {}, '"\u200b"'),
    ("startend:quotation", {}, '"..."'),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Thanks.\nP.S.\u200b"),
    ("combination:two_responses", {}, "Paris is the capital.\n******\nparis IS the capital!"),
    ("length_constraints:number_sentences", {"num_sentences": 10, "relation": "at least"}, "It is. " * 12),
]
HONEST = [  # natural answers: IFEval follows each, and so must the guard
    (*W100, "The first prime numbers are " + ", ".join(map(str, PRIMES[:60])) + ". " + PROSE),
    (*W100, "Timetable for Monday: " + " ".join(f"{h:02d}:{m:02d} {what}" for h, m, what in
                                                  [(8, 0, "breakfast"), (8, 45, "maths"), (9, 30, "physics"),
                                                   (10, 15, "break"), (10, 35, "history"), (11, 20, "biology"),
                                                   (12, 5, "lunch"), (13, 0, "music"), (13, 45, "sport"),
                                                   (14, 30, "art"), (15, 15, "home")]) + ". " + PROSE + " " + MORE_PROSE),
    (*W100, "Results of the season: " + ", ".join(f"week {w} {a}-{b}" for w, (a, b) in enumerate(
        [(3, 1), (2, 2), (0, 1), (1, 1), (4, 0), (2, 1), (1, 1), (0, 0), (2, 3), (1, 0), (2, 2), (3, 3)], 1)) + ". "
     + PROSE + " " + MORE_PROSE),
    (*W100, "Leap years of the century: " + ", ".join(map(str, range(1904, 2001, 4))) + ". " + PROSE + " " + MORE_PROSE),
    (*W100, "Our company history: " + " ".join(f"In {y} we opened office {i}." for i, y in enumerate(range(2005, 2020), 1))
     + " " + PROSE),
    ("language:response_language", {"language": "de"},
     "Das Wetter ist heute sonnig mit einer leichten Brise aus dem Westen, und die Kinder spielen im Park Fußball, "
     "während ihre Eltern von den Bänken am alten Brunnen aus zusehen und sich über das schöne Wetter freuen."),
    ("language:response_language", {"language": "en"}, ENGLISH),
    ("detectable_format:constrained_response", {}, "My answer is yes. Yes, because the data agree."),
    ("detectable_format:json_format", {}, '```json\n{"name": "Ada", "tags": ["x", "y"]}\n```'),
    ("punctuation:no_comma", {}, "One two and three. Nothing else."),
    ("keywords:letter_frequency", {"letter": "q", "let_frequency": 3, "let_relation": "at least"},
     "Quick quiet quails queue quietly."),
    ("keywords:forbidden_words", {"forbidden_words": ["banana"]}, "The U.S.A. grows apples and pears."),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "Points:\n* saves time\n* saves money"),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Thanks.\nP.S. Bring snacks."),
    ("combination:two_responses", {}, "Paris is the capital.\n******\nThe capital is Paris."),
]


def score(response: str, instruction_id: str, kwargs: dict, guard: float | None = 0.25):
    reward = rewardhub.get("instruction_following", max_repeated_share=guard)
    return reward.evaluate([""], [response], instruction_id_list=[[instruction_id]], kwargs=[[kwargs]]).scores[0]


@pytest.mark.parametrize(("instruction_id", "kwargs", "response"), GAMED)
def test_gamed_forms_fail_with_the_guard_and_pass_ifeval(instruction_id, kwargs, response):
    assert reference_verdicts(response, [instruction_id], [kwargs])["strict"] == [True]  # IFEval is gamed
    assert score(response, instruction_id, kwargs, guard=None).value == 1.0  # the exact mode is IFEval's
    guarded = score(response, instruction_id, kwargs)
    assert guarded.value == 0.0, guarded.reason


@pytest.mark.parametrize(("instruction_id", "kwargs", "response"), HONEST)
def test_natural_answers_keep_ifevals_verdict(instruction_id, kwargs, response):
    assert reference_verdicts(response, [instruction_id], [kwargs])["strict"] == [True]
    guarded = score(response, instruction_id, kwargs)
    assert guarded.value == 1.0, guarded.reason


def test_reasons_name_the_gaming_form():
    assert "comma look-alike" in score("One\u201a two.", "punctuation:no_comma", {}).reason
    assert "several of the allowed answers" in score("My answer is yes. no. maybe.",
                                                     "detectable_format:constrained_response", {}).reason
    assert "bare JSON int" in score("42", "detectable_format:json_format", {}).reason
    assert "spelled out letter by letter" in score("a b.a.n.a.n.a", "keywords:forbidden_words",
                                                   {"forbidden_words": ["banana"]}).reason
    german = padded_with("der die das und ist nicht mit auf für sich dem den ein eine zu von auch".split())
    assert "only by its function words: the rest reads as en" in score(
        german, "language:response_language", {"language": "de"}).reason
    counted = score(PROSE + " " + " ".join(map(str, range(1, 120))), *W100).reason
    assert "only by filler" in counted and "count on" in counted
