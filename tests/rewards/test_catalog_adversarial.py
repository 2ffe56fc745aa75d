"""Long adversarial completions through the catalog's rewards: every one is scored, none runs away.

Each text repeats one fragment that a backtracking pattern could stall on (runs of blank lines,
stars, brackets, unclosed quotes and tags, "it's it's ...", "Score: Score: ...") to 20,000
characters. A regex that backtracks without bound takes hours on such input; the rewards' scans take
well under a second. The bound asserted (``RUNAWAY``, minutes) is a runaway detector, not a speed
target: the figures are in BENCHMARKS.md.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from judge_server import KEY_ENV, SECRET, judge_fixture, running_server_fixture, server_fixture  # noqa: F401

import rewardhub

RUNAWAY = 240.0  # seconds for a whole batch; quadratic backtracking on these texts needs far longer
SIZE = 20_000
FRAGMENTS = [" ", "\n", "\n\n", " \t", "*", "* ", "-", "***", "[", "[a", "]", "<", "<<", ">", "> ", "(", "{", '"', '"x',
             "“", "`", "#", "|", "p.", "P.S. ", "1", "1.", "a ", "A or ", "B. ", "(B) ", "Answer: ", "not ", "it's ",
             "the answer is ", "- A\n", "\\boxed{", "<answer>", "Score: ", "[[", "Label: ", "Winner: ", "Ranking: 1 > ",
             '{"a": ', "[1, ", "SECTION 1 ", "[Criterion", "</x", "e.g. "]
TEXTS = [fragment * (SIZE // len(fragment)) for fragment in FRAGMENTS]


def scored_within_bound(reward, texts, **columns):
    """The batch's values, or a failure when it runs past the runaway bound."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(reward.evaluate, [""] * len(texts), texts, **{k: [v] * len(texts) for k, v in columns.items()})
        return future.result(timeout=RUNAWAY).values


def test_multiple_choice_scores_every_adversarial_text():
    values = scored_within_bound(rewardhub.get("multiple_choice"), TEXTS, solution="B", choices=["a b", "c", "d", "e"])
    assert all(v is not None for v in values)


@pytest.mark.parametrize("allow_prose", [False, True])
def test_json_schema_scores_every_adversarial_text(allow_prose):
    reward = rewardhub.get("json_schema", schema={"type": "object"}, allow_prose=allow_prose)
    assert all(v is not None for v in scored_within_bound(reward, TEXTS))


@pytest.mark.parametrize("metric", ["token_f1", "exact_match", "fuzzy", "bleu"])
def test_similarity_scores_every_adversarial_text(metric):
    reward = rewardhub.get("similarity", metric=metric)
    assert all(v is not None for v in scored_within_bound(reward, TEXTS, solution="the quick brown fox"))


# The instructions measured by scans and regexes (sentence, word-token and language measurements are
# NLTK's and langdetect's, linear and the reference's own; tests/test_instruction_following.py).
SCANNED = {
    "detectable_format:number_bullet_lists": {"num_bullets": 1}, "detectable_format:title": {},
    "detectable_content:number_placeholders": {"num_placeholders": 1},
    "detectable_content:postscript": {"postscript_marker": "P.S."},
    "detectable_format:number_highlighted_sections": {"num_highlights": 1},
    "detectable_format:multiple_sections": {"section_spliter": "SECTION", "num_sections": 2},
    "length_constraints:number_paragraphs": {"num_paragraphs": 2}, "detectable_format:json_format": {},
    "startend:quotation": {}, "startend:end_checker": {"end_phrase": "bye"},
    "length_constraints:nth_paragraph_first_word": {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "a"},
    "keywords:existence": {"keywords": ["a b"]}, "keywords:forbidden_words": {"forbidden_words": ["ab"]},
    "keywords:frequency": {"keyword": "a", "frequency": 2, "relation": "at least"},
    "keywords:letter_frequency": {"letter": "a", "let_frequency": 2, "let_relation": "at least"},
    "combination:two_responses": {}, "detectable_format:constrained_response": {}, "punctuation:no_comma": {},
}


@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_instruction_following_scores_every_adversarial_text(mode):
    reward = rewardhub.get("instruction_following", mode=mode, partial_credit=True, max_repeated_share=None)
    values = scored_within_bound(reward, TEXTS, instruction_id_list=list(SCANNED), kwargs=list(SCANNED.values()))
    assert all(v is not None for v in values)


@pytest.mark.parametrize("params", [{}, {"mode": "label"}, {"template": "binary"}, {"mode": "rubric", "rubric": ["x"]}])
def test_judge_reads_adversarial_answers_and_shows_adversarial_completions(server, judge, params):
    """The judge's answer is the adversarial text (parsed here), and so is the completion (escaped here)."""
    answers = iter(TEXTS * 2)
    server.answer = lambda body: next(answers)
    reward = judge(timeout=RUNAWAY, **params)
    texts = TEXTS[::5]
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(reward.evaluate, [""] * len(texts), texts, solution=["5"] * len(texts)).result(RUNAWAY)
    assert len(result.values) == len(texts)
    assert all(outcome != "timeout" for outcome in result.outcomes)
