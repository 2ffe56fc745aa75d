"""``similarity``, ``multiple_choice`` and ``json_schema``: public cases, hedges and gaming probes.

Sources of the tables (cases written here in the forms those graders accept or reject):
- SQuAD v1.1's official ``evaluate-v1.1.py``: ``normalize_answer`` (lowercase, punctuation, articles,
  whitespace), ``f1_score`` (token overlap), ``exact_match_score``.
- Answer formats parsed by public multiple-choice graders: openai/simple-evals
  ``ANSWER_PATTERN_MULTICHOICE`` ("Answer: B"), lm-evaluation-harness MMLU-Pro's
  ``answer is \\(?([A-J])\\)?``, OpenCompass ``first_option_postprocess`` ("the answer is", "(B)", "B.",
  "correct option is", "\\boxed{B}").
- JSON-Schema-Test-Suite (json-schema-org): ``type``, ``required``, ``additionalProperties``,
  ``format`` ("email"), ``enum`` and ``$ref`` cases, draft 2020-12.
"""

from __future__ import annotations

import pytest

import rewardhub
from rewardhub.rewards.json_schema import fenced_blocks, find_document
from rewardhub.rewards.similarity import squad_normalize, token_f1
from rewardhub.testing import GAMING_PROBES, Probe, check_contract


def values(reward, completions, **columns):
    n = len(completions)
    return reward.evaluate([""] * n, completions, **{k: [v] * n for k, v in columns.items()}).scores


# ----- similarity ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("prediction", "reference", "f1", "em"), [
    ("Denver Broncos", "Denver Broncos", 1.0, 1.0),
    ("the Denver Broncos", "Denver Broncos", 1.0, 1.0),  # articles dropped
    ("Denver Broncos!", "denver broncos", 1.0, 1.0),  # punctuation and case
    ("Denver Broncos won", "Denver Broncos", 0.8, 0.0),  # P = 2/3, R = 1
    ("Broncos", "Denver Broncos", 2 / 3, 0.0),  # P = 1, R = 1/2
    ("Carolina Panthers", "Denver Broncos", 0.0, 0.0),
    ("a an the", "the", 1.0, 1.0),  # both normalise to empty (SQuAD v2's rule)
])
def test_squad_token_f1_and_exact_match(prediction, reference, f1, em):
    assert token_f1(prediction, reference) == pytest.approx(f1)
    assert values(rewardhub.get("similarity", metric="token_f1"), [prediction], solution=reference)[0].value \
        == pytest.approx(f1)
    assert values(rewardhub.get("similarity", metric="exact_match"), [prediction], solution=reference)[0].value == em


def test_library_metrics_match_the_libraries_and_take_the_best_reference():
    from rapidfuzz import fuzz
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu.metrics import BLEU, CHRF

    hypothesis = "The cat sat on a mat near the door."
    references = ["The cat was sitting on the mat near the door.", "A cat sat on a mat by the door."]
    expected = {
        "bleu": BLEU(effective_order=True).sentence_score(hypothesis, references).score / 100,
        "chrf": CHRF().sentence_score(hypothesis, references).score / 100,
        "rougeL": max(RougeScorer(["rougeL"]).score(r, hypothesis)["rougeL"].fmeasure for r in references),
        "rouge2": max(RougeScorer(["rouge2"]).score(r, hypothesis)["rouge2"].fmeasure for r in references),
        "fuzzy": max(fuzz.ratio(squad_normalize(hypothesis), squad_normalize(r)) for r in references) / 100,
    }
    for metric, value in expected.items():
        got = values(rewardhub.get("similarity", metric=metric), [hypothesis], solution=references)[0]
        assert got.value == pytest.approx(value), metric
        assert 0 < got.value < 1 and "best of 2 references" in got.reason


SIMILARITY_TABLE = [  # (hypothesis, references): short answers, paraphrases, word order, unicode, several references
    ("Paris", ["Paris"]),
    ("paris.", ["Paris"]),
    ("The capital of France is Paris.", ["Paris is the capital of France."]),
    ("Paris is the capital of France", ["The capital of France is Paris.", "Paris"]),
    ("A dog chased the cat up the tree.", ["The cat was chased up a tree by a dog."]),
    ("He bought three apples and two pears at the market on Sunday.",
     ["On Sunday he bought two pears and three apples at the market.", "He went shopping."]),
    ("Photosynthesis turns light, water and CO2 into glucose and oxygen.",
     ["Plants use light energy to make glucose and oxygen from carbon dioxide and water."]),
    ("Il pleut à Paris aujourd'hui.", ["Aujourd'hui, il pleut à Paris."]),
    ("Zürich liegt am Zürichsee.", ["Zürich liegt am See."]),
    ("completely unrelated words here", ["The mitochondria is the powerhouse of the cell."]),
    ("1969", ["July 20, 1969", "1969"]),
]


@pytest.mark.parametrize("metric", ["bleu", "chrf", "rouge1", "rouge2", "rougeL", "fuzzy"])
def test_each_library_metric_equals_its_library_on_a_table(metric):
    from rapidfuzz import fuzz
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu.metrics import BLEU, CHRF

    def library(hypothesis: str, references: list[str]) -> float:
        if metric == "bleu":
            return BLEU(effective_order=True).sentence_score(hypothesis, references).score / 100
        if metric == "chrf":
            return CHRF().sentence_score(hypothesis, references).score / 100
        if metric == "fuzzy":
            return max(fuzz.ratio(squad_normalize(hypothesis), squad_normalize(r)) for r in references) / 100
        return max(RougeScorer([metric]).score(r, hypothesis)[metric].fmeasure for r in references)

    reward = rewardhub.get("similarity", metric=metric)
    hypotheses = [h for h, _ in SIMILARITY_TABLE]
    got = reward.evaluate([""] * len(hypotheses), hypotheses, solution=[r for _, r in SIMILARITY_TABLE]).values
    expected = [library(h, r) for h, r in SIMILARITY_TABLE]
    assert got == pytest.approx(expected, abs=1e-9)
    assert len({round(v, 6) for v in expected}) >= 5  # the table spreads the metric, not only 0 and 1


@pytest.mark.parametrize(("prediction", "references", "f1"), [  # SQuAD v1.1 rules, worked by hand
    ("Paris is the capital of France", ["The capital of France is Paris.", "Paris"], 1.0),  # same bag of words
    ("in 1969", ["July 20, 1969", "1969"], 2 / 3),  # best reference: P 1/2, R 1
    ("“Paris”", ["Paris"], 0.0),  # curly quotes are not string.punctuation: the token stays "“paris”"
    ("Paris, Paris, Paris", ["Paris"], 0.5),  # P 1/3, R 1: repeats do not earn recall twice
    ("An apple", ["the apple"], 1.0),  # articles dropped
])
def test_token_f1_on_squad_rules(prediction, references, f1):
    reward = rewardhub.get("similarity", metric="token_f1")
    (score,) = reward.evaluate([""], [prediction], solution=[references]).scores
    assert score.value == pytest.approx(f1)


def test_extractors_think_blocks_and_missing_references():
    reward = rewardhub.get("similarity", metric="exact_match", extractors=["answer_tag", "boxed"])
    scores = values(reward, ["<think>Paris? Lyon?</think><answer>Paris</answer>", "I think Paris", "\\boxed{Lyon}"],
                    solution=["Paris", "Paris, France"])
    assert [s.value for s in scores] == [1.0, 0.0, 0.0]
    assert "no answer found" in scores[1].reason
    (missing,) = values(rewardhub.get("similarity"), ["Paris"], solution=None)
    assert missing.value is None and "no reference text" in missing.reason


def test_similarity_bad_params():
    with pytest.raises(rewardhub.ConfigError, match="did you mean 'rougeL'"):
        rewardhub.get("similarity", metric="rougel")
    with pytest.raises(rewardhub.ConfigError, match="fuzzy_scorer"):
        rewardhub.get("similarity", metric="fuzzy", fuzzy_scorer="partial_ratio")  # a superset would score 100


SIMILARITY_PROBES = GAMING_PROBES + (
    Probe("reference_twice", lambda right, wrong: f"{right} {right}"),
    Probe("reference_in_filler", lambda right, wrong: "word " * 50 + right + " word" * 50),
    Probe("reference_in_think_only", lambda right, wrong: f"<think>{right}</think> {wrong}"),
)


@pytest.mark.parametrize("metric", ["bleu", "chrf", "rouge1", "rouge2", "rougeL", "token_f1", "exact_match", "fuzzy"])
def test_similarity_contract(metric):
    right = "the quick brown fox jumps over the lazy dog"
    check_contract(rewardhub.get("similarity", metric=metric), right=right, wrong="a slow red cat sleeps",
                   correct_completion=right, probes=SIMILARITY_PROBES)


# ----- multiple choice ---------------------------------------------------------------------------------------
CHOICES = ["Lyon", "Paris", "Marseille", "Paris and Lyon"]
POSITIVE = [  # the right answer is B (Paris)
    "Answer: B",  # simple-evals
    "Answer:B",
    "The answer is (B).",  # MMLU-Pro
    "the answer is B",
    "After weighing the options, the correct option is B.",  # OpenCompass
    "(B)",
    "B.",
    "**B**",
    "\\boxed{B}",
    "\\boxed{\\text{B}}",
    "<answer>B</answer>",
    "Final answer: (B) Paris",
    "I'd go with B.",
    "It's B, because Lyon is not the capital.",
    "A is tempting, but the answer is B.",
    "The answer is B, not A.",
    "A good choice would be B.",
    "Paris is the capital.\nAnswer: Paris",
    "<think>A? C? maybe D</think>The answer is B",
    "The answer is not A. It's B.",
    "Answer: B\n\nExplanation: Lyon and Marseille are large cities, but Paris is the capital.",
]
NEGATIVE = [
    "A or B",  # hedges
    "The answer is A or B.",
    "It is either B or C.",
    "Answer: B and C",
    "B, C",
    "\\boxed{A, B}",
    "The answer is A.",  # wrong
    "\\boxed{C}",
    "Answer: Lyon",
    "I'm not sure.",  # no choice
    "",
    "The answer is B.\nAnswer: D",  # the final statement is D
    "Answer: Paris and Lyon",  # option D's text, not B's
]


@pytest.mark.parametrize("text", POSITIVE)
def test_multiple_choice_positive(text):
    (score,) = values(rewardhub.get("multiple_choice"), [text], solution="B", choices=CHOICES)
    assert score.value == 1.0, score.reason


@pytest.mark.parametrize("text", NEGATIVE)
def test_multiple_choice_negative(text):
    (score,) = values(rewardhub.get("multiple_choice"), [text], solution="B", choices=CHOICES)
    assert score.value == 0.0, score.reason


def test_multiple_choice_reasons_and_references():
    reward = rewardhub.get("multiple_choice")
    (hedge,) = values(reward, ["It is A or B."], solution="B")
    assert "several options asserted (A, B)" in hedge.reason
    mmlu = reward.evaluate(["", ""], ["Answer: C", "Answer: C"], solution=[2, 3], choices=[["w", "x", "y", "z"]] * 2)
    assert mmlu.values == [1.0, 0.0]  # MMLU's integer answer (0-based)
    one_based = rewardhub.get("multiple_choice", index_base=1)
    assert values(one_based, ["Answer: C"], solution=3)[0].value == 1.0
    assert values(reward, ["Answer: B"], solution="Paris", choices=CHOICES)[0].value == 1.0  # the reference as text
    (bad,) = values(reward, ["Answer: B"], solution="Q")
    assert bad.value is None and "no usable reference" in bad.reason
    with pytest.raises(rewardhub.ConfigError, match="letters"):
        rewardhub.get("multiple_choice", letters="AAB")


# A wider table of what models write, by class (choices: Lyon, Paris, Marseille, Nice; the right answer is B).
WIDER_CHOICES = ["Lyon", "Paris", "Marseille", "Nice"]
WRITTEN_RIGHT = [  # (B), Answer: B, it's B, boxed, B., **B**, the option's text, a negation then B, a rethought answer
    '(B)', 'Answer: B', "it's B", "It's B.", '\\boxed{B}', 'B.', '**B**', 'Paris', 'The correct option is (B) Paris',
    'The correct option is (B) Paris.', '**Answer: B**', '**Answer:** B', 'Answer: **B**', 'Answer: (B) Paris',
    'The answer is: B', 'The answer is **(B) Paris**.', 'Final Answer: B', 'Final answer: $\\boxed{B}$',
    'So the answer is B) Paris.', 'B) Paris', '[B]', 'Option B', 'Option B is correct.',
    'The correct answer is option B.', 'I choose B.', 'My answer: B', 'Correct answer: B', 'B is correct.',
    'B is the correct answer.', 'The answer is B because Paris is the capital.', 'not A; the answer is B',
    'Not A. The answer is B.', "It's not A, it's B.", 'The answer is A. Wait, no. Rethinking: the answer is B.',
    'Initially I thought C, but after rethinking, the final answer is B.', 'Answer: B\n', 'answer: b',
    'The answer is (b).', 'Paris is the correct answer.', 'The capital is Paris, so the answer is B.',
    "Let's see. A is Lyon, C is Marseille, D is Nice. The answer is B.", 'ANSWER: B', 'Answer - B',
    'The best choice is B.', "I'd say B.", 'I would choose (B).', '<answer>B</answer>', '<answer>(B) Paris</answer>',
    '\\boxed{\\textbf{B}}', '\\boxed{(B)}', '\\boxed{B. Paris}', 'Therefore, the answer is $\\boxed{\\text{(B)}}$.',
    'The answer is option (B).', 'Answer: Option B', 'Correct option: B', 'B', 'b', '(b)', 'The answer is B, Paris.',
    'Among the options, B is correct.', 'The correct choice is B: Paris', 'The answer: B.', 'Answer:\nB',
    "I'm confident it's B.", 'The right answer would be B.',
    'Answer: B\n\nWhy not the others:\n- A is Lyon\n- C is Marseille', 'The answer is B.\n\n* A: no\n* C: no',
    'Answer: B (not A)', 'Answer: B, not C', 'Answer: B. Paris is the capital, not Lyon.',
    "It's B, definitely not C.", 'A is wrong. B is right. Answer: B',
    '1. Lyon is not the capital.\n2. Paris is.\nAnswer: B', 'Answer:\n- B', 'Not A, not C: the answer is B.',
    '**Final Answer**\n\n\\boxed{B}', 'The correct option is B, Paris.',
]
WRITTEN_NOT_RIGHT = [  # hedges (A or B, lists, either), ruling out (not B, B is incorrect), questions, wrong, none
    'A or B', 'A and C', 'either B or D', 'The answer is A or B.', 'Answer: A, B', 'Answer: A/B', 'A, B and C',
    'The answer is B or C.', 'Both B and D are correct.', 'B and D', 'It could be B or C.', 'Answer: B or D',
    'The answers are A and B.', '- A\n- B', 'Answer:\n- A\n- B', 'Options A and B are both correct.',
    "I'd go with B or C.", 'Either B or C.', 'B/C', '(B) or (C)', '\\boxed{B, C}', '\\boxed{B \\text{ or } C}',
    'B & C', 'B, C, D', 'Answer: A', 'The answer is A.', 'not B; the answer is A', 'The answer is not B.',
    "It's not B.", 'The answer is B. Wait, rethinking: the answer is C.', 'Initially B, but the final answer is C.',
    'Answer: Lyon', 'The correct option is (C) Marseille', "I don't know.", 'None of the above.', 'All of the above.',
    'Answer: E', 'The answer is B and C.', 'B and C are correct.', 'Answer: Paris or Lyon', 'Paris or Lyon',
    'It is either Paris or Nice.', 'A, B, C, or D', 'B? Or maybe C.', 'Probably B, possibly C.', 'Answer: B, C',
    'The answer is (B) or (D).', 'Answer: not B', 'B is wrong. The answer is C.', 'B is incorrect.',
    'Answer: B\nAnswer: C', 'The answer is neither B nor C.', 'Not B.', 'Answer:\n- B\n- A',
    'The correct options are:\n1. A\n2. B', 'B is not correct.', 'B is not the answer.', '(B) is wrong.',
    'The answer is not A but C.', 'Answer: B? No — C.', 'The answer is B. Actually, the answer is not B.',
    'Answer: (B) is incorrect', 'Answer: maybe B, maybe C', 'Answer: B, possibly D', 'B, perhaps C',
    "I can't decide between B and C.", 'Answer: B\nAnswer: D\n', "The answer isn't B.", "It isn't B.",
    'B or C, I think.', 'Answer: {A, B}', 'Answer: A | B', 'Answer: A+B',
]


@pytest.mark.parametrize("text", WRITTEN_RIGHT)
def test_multiple_choice_reads_what_models_write(text):
    (score,) = values(rewardhub.get("multiple_choice"), [text], solution="B", choices=WIDER_CHOICES)
    assert score.value == 1.0, score.reason


@pytest.mark.parametrize("text", WRITTEN_NOT_RIGHT)
def test_multiple_choice_gives_nothing_for_hedges_negations_and_other_options(text):
    (score,) = values(rewardhub.get("multiple_choice"), [text], solution="B", choices=WIDER_CHOICES)
    assert score.value == 0.0, score.reason


def test_multiple_choice_reasons_for_ruling_out_and_lists():
    reward = rewardhub.get("multiple_choice")
    ruled, listed, asked = values(reward, ["The answer is not B.", "Answer:\n- B\n- A", "Answer: B?"], solution="B")
    assert "rules an option out and chooses none" in ruled.reason
    assert "several options asserted (A, B)" in listed.reason
    assert asked.value == 0.0 and asked.verdict is False


MC_PROBES = GAMING_PROBES + (
    Probe("a_or_b", lambda right, wrong: f"{wrong} or {right}"),
    Probe("all_options", lambda right, wrong: "The answer is A, B, C or D."),
    Probe("boxed_hedge", lambda right, wrong: f"\\boxed{{{wrong} or {right}}}"),
    Probe("either", lambda right, wrong: f"It is either {right} or {wrong}."),
    Probe("both", lambda right, wrong: f"Answer: {right} and {wrong}"),
    Probe("list_then_pick_all", lambda right, wrong: "A) yes B) yes C) yes D) yes"),
    Probe("listed_options", lambda right, wrong: f"Answer:\n- {wrong}\n- {right}"),
    Probe("ruled_out_right", lambda right, wrong: f"The answer is not {right}."),
    Probe("asked_not_said", lambda right, wrong: f"Answer: {right}? No, {wrong}."),
)


def test_multiple_choice_contract():
    report = check_contract(rewardhub.get("multiple_choice"), right="B", wrong="C", columns={"solution": "B"},
                            correct_completion="The answer is (B).", probes=MC_PROBES)
    assert all(v == 0.0 for name, v in report.probe_values.items() if name in {p.name for p in MC_PROBES[-9:]})


# ----- json schema -------------------------------------------------------------------------------------------
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                   "email": {"type": "string", "format": "email"}, "role": {"enum": ["admin", "user"]}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
VALID = ['{"name": "Ada", "age": 36}', '{"name": "Ada", "age": 36, "email": "ada@example.org", "role": "admin"}',
         'Here it is:\n```json\n{"name": "Ada", "age": 36}\n```\nAnything else?', '<answer>{"name": "Ada", "age": 0}</answer>',
         '<think>{"name": 1}</think>\n{"name": "Ada", "age": 36}']
INVALID = ['{"name": "Ada", "age": 36.5}', '{"name": "Ada"}', '{"name": "Ada", "age": 36, "extra": true}',
           '{"name": "Ada", "age": -1}', '{"name": "Ada", "age": 36, "email": "not-an-email"}',
           '{"name": "Ada", "age": 36, "role": "root"}', '["Ada", 36]', '{"name": "Ada", "age": 36,}',
           "{'name': 'Ada', 'age': 36}", 'The person is {"name": "Ada", "age": 36}.',
           '```json\n{"name": "Ada", "age": 36}\n```\n```json\n{"name": "Bob"}\n```', "", "null"]


@pytest.mark.parametrize("text", VALID)
def test_json_schema_valid(text):
    (score,) = values(rewardhub.get("json_schema", schema=PERSON), [text])
    assert score.value == 1.0, score.reason


@pytest.mark.parametrize("text", INVALID)
def test_json_schema_invalid(text):
    (score,) = values(rewardhub.get("json_schema", schema=PERSON), [text])
    assert score.value == 0.0, score.reason


def test_schema_per_row_partial_credit_and_bad_schemas():
    reward = rewardhub.get("json_schema", partial_credit=True)
    schemas = [PERSON, PERSON, {"$ref": "#/$defs/n", "$defs": {"n": {"type": "number"}}}, {"type": "nope"}, None]
    texts = ['{"name": "Ada", "age": "36", "email": "ada@example.org"}', '{"name": "Ada", "age": 1, "x": 1, "y": 2}',
             "3.5", "{}", "{}"]
    scores = reward.evaluate([""] * 5, texts, schema=schemas).scores
    assert scores[0].value == pytest.approx(2 / 3) and "age" in scores[0].reason  # name, email right; age wrong
    assert scores[1].value == pytest.approx(2 / 4)  # x and y are not allowed
    assert reward.evaluate([""], ["{}"], schema=[PERSON]).values == [0.0]  # nothing required is there
    assert scores[2].value == 1.0
    assert scores[3].value is None and "not a valid JSON Schema" in scores[3].reason
    assert scores[4].value is None
    with pytest.raises(rewardhub.ConfigError, match="not usable"):
        rewardhub.get("json_schema", schema={"type": 5})


def test_partial_credit_counts_the_schemas_fields_only():
    """Keys the schema does not name cannot dilute its errors (a padded object is still wrong)."""
    open_person = {k: v for k, v in PERSON.items() if k != "additionalProperties"}
    reward = rewardhub.get("json_schema", schema=open_person, partial_credit=True)
    padded = '{"name": 5, "age": "x", ' + ", ".join(f'"k{i}": {i}' for i in range(40)) + "}"
    honest = '{"name": "Ada", "age": "x", "k1": 1}'
    patterned = rewardhub.get("json_schema", partial_credit=True, schema={
        "type": "object", "patternProperties": {"^n_": {"type": "integer"}}, "required": ["id"]})
    scores = values(reward, [padded, honest]) + values(patterned, ['{"id": 1, "n_a": "x", "n_b": 2, "z": 0}'])
    assert [s.value for s in scores] == [0.0, 0.5, pytest.approx(2 / 3)]


def test_an_answer_tag_holding_a_fence_is_read():
    reward = rewardhub.get("json_schema", schema=PERSON)
    texts = ['<answer>\n```json\n{"name": "Ada", "age": 36}\n```\n</answer>',
             '<answer>```json\n{"name": "Ada"}\n```\n```json\n{"name": "Ada", "age": 36}\n```</answer>']
    first, two = values(reward, texts)
    assert first.value == 1.0 and "fenced block of the <answer> tag" in first.reason
    assert two.value == 0.0


def test_prose_mode_takes_one_value_and_refuses_two():
    assert find_document('The person is {"a": 1}.', allow_prose=True) == ({"a": 1}, "in the prose")
    assert isinstance(find_document('First {"a": 1} then {"a": 2, ', allow_prose=True), str)
    assert isinstance(find_document('{"a": 1} and [1, 2]', allow_prose=True), str)
    assert fenced_blocks("```json\n{}\n```\ntext\n```\n[1]\n```\n```x\nunclosed") == ["{}", "[1]"]


JSON_PROBES = GAMING_PROBES + (
    Probe("json_in_prose_with_a_second_invalid", lambda r, w: 'Sure! {"name": "Ada", "age": 36} and {"name": '),
    Probe("two_fences", lambda r, w: '```json\n{"name": "Ada", "age": 36}\n```\n```json\n{"name": 5}\n```'),
    Probe("right_json_in_think_only", lambda r, w: '<think>{"name": "Ada", "age": 36}</think> done'),
    Probe("deep_array", lambda r, w: "[" * 50_000 + "]" * 50_000),
    Probe("many_starts", lambda r, w: "{[" * 20_000),
    Probe("fence_then_broken_prose_object", lambda r, w: '```json\n{"name": 5}\n```\nor {"name": "Ada", "age": 36'),
    Probe("answer_tag_with_invalid_then_valid_prose", lambda r, w: '<answer>{"name": "Ada"}</answer> {"name": "Ada", "age": 36}'),
)


def test_json_schema_contract():
    check_contract(rewardhub.get("json_schema", schema=PERSON), columns={},
                   correct_completion='{"name": "Ada", "age": 36}', probes=JSON_PROBES)
    check_contract(rewardhub.get("json_schema", schema=PERSON, allow_prose=True), columns={},
                   correct_completion='The record: {"name": "Ada", "age": 36}', probes=JSON_PROBES)
