"""What follows a stated answer (issue 34): a hedge opening the next sentence, a condition, a parenthetical
hedge, a unit written in words, a correction on the same line, in every language of the lexicon.

One property test per class: a random wrong value written in the construction never scores 1 with `math` or
`exact_match`; the honest forms (the same value offered again, a remark with no value, the gold written once)
keep 1 with `math`.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROPERTY = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
seeds = st.lists(st.integers(0, 2**32 - 1), min_size=10, max_size=10)

STATE = {  # a stated answer, per language: {a} the value
    "en": ["The answer is {a}.", "So the answer is ${a}$.", "$\\boxed{{{a}}}$.", "Final answer: {a}."],
    "es": ["La respuesta es {a}.", "Respuesta: {a}."],
    "de": ["Die Antwort ist {a}.", "Antwort: {a}."],
    "fr": ["La réponse est {a}.", "Réponse : {a}."],
    "pt": ["A resposta é {a}.", "Resposta: {a}."],
    "it": ["La risposta è {a}.", "Risposta: {a}."],
    "ru": ["Ответ: {a}."],
    "zh": ["答案是 {a}。", "答案是 $\\boxed{{{a}}}$。"],
    "ja": ["答えは {a} です。", "答え: {a}。"],
    "ko": ["답은 {a}입니다.", "정답: {a}."],
}  # fmt: skip
OR_NEXT = {  # a hedge opening the next sentence: {b} the other value
    "en": ["Or {b}.", "Or maybe {b}.", "Or perhaps $x = {b}$.", "Or possibly ${b}$.", "Maybe {b}.", "Perhaps {b}."],
    "es": ["O {b}.", "O quizás {b}."], "de": ["Oder {b}.", "Oder vielleicht {b}."], "fr": ["Ou {b}.", "Ou peut-être {b}."],
    "pt": ["Ou {b}.", "Ou talvez {b}."], "it": ["Oppure {b}.", "O forse {b}."], "ru": ["Или {b}.", "Либо {b}."],
    "zh": ["或 {b}。", "或者 {b}。", "也可能是 {b}。"], "ja": ["か {b}。", "または {b}。", "あるいは {b}。"],
    "ko": ["또는 {b}.", "아마 {b}."],
}  # fmt: skip
CONDITIONS = ["{s}, unless it is {b}.", "{s} unless it is {b}.", "{s}, depending on whether n = {b}.",
              "{s}, otherwise {b}.", "{s}, sonst {b}.", "{s}, à moins que ce soit {b}.", "{s}，除非是 {b}。",
              "{s}, in which case it is {b}, depending on the rounding."]  # fmt: skip
PARENTHESES = ["{s} (or possibly {b})", "{s} (or maybe {b}).", "{s}, or possibly {b}.", "{s} (oder vielleicht {b}).",
               "{s} (ou {b})."]  # fmt: skip
CORRECTIONS = {  # a correction on the line of the answer, no line break: {b} the corrected value
    "de": "Antwort: {a} Moment, das ist falsch. Richtig ist {b}.",
    "fr": "Réponse : {a} Attends, je me suis trompé : c'est {b}.",
    "ja": "答え: {a} いや、間違えました。正しくは {b} です。",
    "es": "Respuesta: {a} Espera, me equivoqué: en realidad es {b}.",
    "it": "Risposta: {a} Aspetta, ho sbagliato: in realtà è {b}.",
    "zh": "答案: {a} 不对，重新算一下，应该是 {b}。",
    "en": "Answer: {a} Wait, that is wrong. It should be {b}.",
}
LENGTHS = {"m": "meters", "cm": "centimeters", "km": "kilometers", "mm": "millimeters"}


def _value(rng: random.Random) -> tuple[str, str]:
    """A gold and a different value near it (integers, decimals, fractions)."""
    kind = rng.randrange(3)
    if kind == 0:
        a = rng.randint(2, 999)
        return str(a), str(a + rng.choice([-2, -1, 1, 2, 10]))
    if kind == 1:
        a = rng.randint(10, 999)
        return f"{a / 10:g}", f"{(a + rng.choice([-1, 1, 3])) / 10:g}"
    p, q = rng.randint(1, 9), rng.randint(11, 19)
    return f"\\frac{{{p}}}{{{q}}}", f"\\frac{{{p + 1}}}{{{q}}}"


def _written(value: str) -> str:
    return f"${value}$" if "\\" in value else value


def _stated(rng: random.Random, value: str, language: str) -> str:
    return "We compute the total first.\n" + rng.choice(STATE[language]).format(a=_written(value))


def _next_sentence(rng: random.Random, gold: str, other: str) -> str:
    language = rng.choice(list(STATE))
    stated = _stated(rng, gold, language) if rng.random() < 0.75 else f"So we get {_written(gold)}."  # or unmarked
    return stated + " " + rng.choice(OR_NEXT[language]).format(b=_written(other))


def _condition(rng: random.Random, gold: str, other: str) -> str:
    return rng.choice(CONDITIONS).format(s=rng.choice(["The answer is {a}", "$\\boxed{{{a}}}$", "So we get {a}"]).format(
        a=_written(gold)), b=_written(other))  # fmt: skip


def _parenthesis(rng: random.Random, gold: str, other: str) -> str:
    stated = rng.choice(["The answer is {a}", "$\\boxed{{{a}}}$", "Final answer: ${a}$"]).format(a=gold)
    return rng.choice(PARENTHESES).format(s=stated, b=_written(other))


def _correction(rng: random.Random, gold: str, other: str) -> str:
    return "We compute the total first.\n" + CORRECTIONS[rng.choice(list(CORRECTIONS))].format(a=_written(gold), b=_written(other))


CLASSES = {"next_sentence": _next_sentence, "condition": _condition, "parenthesis": _parenthesis}


def _scores(reward, completions: list[str], golds: list[str]) -> list:
    return reward.evaluate(["q"] * len(completions), completions, solution=golds).scores


@pytest.mark.parametrize("kind", list(CLASSES))
@PROPERTY
@given(seeds=seeds)
def test_a_wrong_value_offered_after_the_answer_never_pays(math_reward, exact_match, kind, seeds):
    rngs = [random.Random(seed) for seed in seeds]
    pairs = [_value(rng) for rng in rngs]
    completions = [CLASSES[kind](rng, gold, other) for rng, (gold, other) in zip(rngs, pairs, strict=True)]
    for golds in ([gold for gold, _ in pairs], [other for _, other in pairs]):  # either value as the gold
        paid = [(c, s.reason) for c, s in zip(completions, _scores(math_reward, completions, golds), strict=True) if s.value == 1.0]
        assert paid == []
        values = exact_match(["q"] * len(completions), completions, solution=golds)
        assert [c for c, v in zip(completions, values, strict=True) if v == 1.0] == []


@PROPERTY
@given(seeds=seeds)
def test_the_same_value_offered_again_or_a_remark_keeps_the_answer(math_reward, seeds):
    rngs = [random.Random(seed) for seed in seeds]
    golds = [_value(rng)[0] for rng in rngs]
    completions = []
    for rng, gold in zip(rngs, golds, strict=True):
        language = rng.choice(list(STATE))
        tail = rng.choice([rng.choice(OR_NEXT[language]).format(b=_written(gold)), "Or so I think.",
                           "I double-checked it.", f"(or possibly {_written(gold)})"])  # fmt: skip
        completions.append(_stated(rng, gold, language) + " " + tail)
    completions += ["The answer is 12, unless I made an arithmetic error.", "$\\boxed{12}$, depending on the rounding."]
    golds += ["12", "12"]
    missed = [(c, s.reason) for c, s in zip(completions, _scores(math_reward, completions, golds), strict=True) if s.value != 1.0]
    assert missed == []


@PROPERTY
@given(seeds=seeds)
def test_a_correction_on_the_answer_line_takes_it_back(math_reward, exact_match, seeds):
    rngs = [random.Random(seed) for seed in seeds]
    pairs = [_value(rng) for rng in rngs]
    completions = [_correction(rng, gold, other) for rng, (gold, other) in zip(rngs, pairs, strict=True)]
    stated = [gold for gold, _ in pairs]
    paid = [(c, s.reason) for c, s in zip(completions, _scores(math_reward, completions, stated), strict=True) if s.value == 1.0]
    assert paid == []  # the value taken back never pays
    assert [c for c, v in zip(completions, exact_match(["q"] * 10, completions, solution=stated), strict=True) if v == 1.0] == []
    corrected = [other for _, other in pairs]
    missed = [(c, s.reason) for c, s in zip(completions, _scores(math_reward, completions, corrected), strict=True) if s.value != 1.0]
    assert missed == []  # the corrected value is the answer


@PROPERTY
@given(seeds=seeds)
def test_a_unit_in_words_is_checked_against_the_gold_unit(math_reward, exact_match, seeds):
    completions, golds, truths = [], [], []
    for seed in seeds:
        rng = random.Random(seed)
        n = rng.randint(3, 900)
        unit, other = rng.sample(list(LENGTHS), 2)
        form = rng.choice(["So the length is ${n} {w}$.", "So the length is ${n}$ {w}.", "The answer is ${n} {w}$.",
                           "Thus $d = {n} {w}$.", "So the length is {n} {w}.", "$\\boxed{{{n}}}$ {w}",
                           "The answer is ${n}\\text{{ {u}}}$ (or possibly ${n} {w}$)."])  # fmt: skip
        completions += [form.format(n=n, w=LENGTHS[other], u=unit), form.format(n=n, w=LENGTHS[unit], u=unit)]
        golds += [f"{n} \\text{{ {unit}}}"] * 2
        truths += [False, True]
    scores = _scores(math_reward, completions, golds)
    assert [(c, g, s.reason) for c, g, s, t in zip(completions, golds, scores, truths, strict=True) if (s.value == 1.0) != t] == []
    values = exact_match(["q"] * len(completions), completions, solution=golds)
    assert [(c, g) for c, g, v, t in zip(completions, golds, values, truths, strict=True) if v == 1.0 and not t] == []


@pytest.mark.parametrize(
    ("gold", "completion", "reason"),
    [
        ("12", "The answer is $12$. Or $13$.", "several values offered, not all right: not equal: 13 vs 12"),
        ("12", r"$\boxed{12}$, unless it is 7.", "no answer: a conditional answer"),
        ("12", r"$\boxed{12}$. Or more.", "no answer: a hedge after the answer"),
        ("404 \\text{ km}", "The answer is $404$ (or possibly $404 meters$).", "is in meter, the gold in kilometer"),
        ("196", "Antwort: 196 Moment, das ist falsch. Richtig ist 197.", "not equal: 197 vs 196"),
        ("7", "So we get 12, unless it is 7.", "no answer found"),
        ("5\\sqrt{7}", "So we get 35. Or $5\\sqrt{7}$.", "no answer found"),
        ("3 + 4i", "The answer is $3 + 4i$ unless it is 7.", "no answer: a conditional answer"),
    ],
)
def test_the_reason_names_what_was_refused(math_reward, gold, completion, reason):
    (score,) = _scores(math_reward, [completion], [gold])
    assert score.value == 0.0 and reason in score.reason
