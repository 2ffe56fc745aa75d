"""Forms the world writes (issue 34): each class of right answer pays, each near miss of it scores 0.

The examples are the issue's own, one per class; ``bench/forms.py`` generates many more of each family and
``bench/recall.py`` reports both numbers per family (see BENCHMARKS.md).
"""

import pytest
from bench_modules import load_bench

NNBSP, NBSP, THIN = "\u202f", "\u00a0", "\u2009"

RIGHT = [
    # tiny and big magnitudes, in every notation
    (r"1.6 \times 10^{-19}", r"The charge is $1.6 \times 10^{-19}$."),
    (r"1.6 \times 10^{-19}", "The answer is 1.602e-19."),
    (r"5 \times 10^{-7}", "The answer is 5e-7."),
    ("0.00000081", r"The answer is $8.1 \times 10^{-7}$."),
    (r"5.29 \times 10^{-11}", "So the radius is 5.29 × 10⁻¹¹."),
    (r"1.48 \times 10^{29}", "So the result is 1.48e29."),
    # units spaced the LaTeX way, and converted
    (r"23\,\text{m}", "The answer is 23 m."),
    (r"23 \text{ m }", r"The answer is $23\;\mathrm{m}$."),
    (r"69~\text{s}", r"So the result is $69\text{ s}$."),
    (r"23\,\text{m}", "So the result is 2300 cm."),
    (r"2\,\text{h}", "So the result is 120 min."),
    # other languages and scripts
    ("12", "答案是十二。"),
    ("-19", "答案是负十九。"),
    (r"\frac{1}{9}", "答：九分之一"),
    (r"56\%", "答案是百分之五十六。"),
    ("30000", "答案是3万。"),
    ("-1721", "答案是－１７２１。"),
    ("9.52", "答：９．５２"),
    ("1000", "答：１，０００"),
    ("7610539", f"La réponse est 7{NNBSP}610{NNBSP}539."),
    ("7610539", f"Die Antwort ist 7{NBSP}610{NBSP}539."),
    ("7610539", f"The answer is 7{THIN}610{THIN}539."),
    ("7610539", "Die Antwort ist 7'610'539."),
    ("7610539", "The total is 76,10,539."),
    ("48", "答：48kg。"),
    ("34", "答案是 34 元。"),
    ("866", r"所以一共是 $\text{866 个}$。"),
    ("42", "Die Antwort lautet 42."),
    ("42", "정답은 42입니다."),
    ("42", "答えは42です。"),
    ("(-8, 2)", "먼저 9 + 27 = 36 이고, 나머지를 계산합니다.\n따라서 답은 (－８，２) 입니다."),  # full width, then "is"
    ("(-15, -2)", "まず、38 + 78 = 116 です。次に残りを計算します。\nよって答えは(－１５，－２)です。"),
    ("3.05", "Die Antwort ist 3,05."),
    # corrections read again, in any language
    ("13", "答案是 \\boxed{12}。不对，重新算一下，应该是 13。"),
    ("432", "So the answer is 430. Scratch that, I miscounted: it's 432."),
    ("20", "Die Antwort ist 18. Moment, das ist falsch. Richtig ist 20."),
    # shapes
    ("(1, 2, 3)", r"The answer is $\langle 1, 2, 3 \rangle$."),
    (r"\begin{pmatrix} -5 \\ -9 \end{pmatrix}", r"So the result is $\left\langle -5, -9 \right\rangle$."),
    (r"\frac{1}{3}", r"The answer is $0.\overline{3}$."),
    (r"\frac{1}{6}", "The answer is $0.1(6)$."),
    (r"\pm 4", r"So \boxed{4, -4}"),
    (r"2 \pm \sqrt{7}", r"So \boxed{2+\sqrt{7}, 2-\sqrt{7}}"),
    ("533", r"\boxed{533}, i.e. \boxed{533.0}"),
    (r"\frac{33}{4}", "The answer is 8 and 1/4."),
    (r"\frac{85}{8}", "So the result is 10 and 5/8 cups."),
    ("4, 5", "The answers are 4 and 5."),
    # the completion is the gold
    ("Ada Lovelace", "Ada Lovelace"),
    ("isosceles", "**isosceles**"),
]

WRONG = [
    (r"1.6 \times 10^{-19}", r"The answer is $1.6 \times 10^{-18}$."),
    (r"1.6 \times 10^{-19}", r"The answer is $1 \times 10^{-30}$."),
    (r"1.6 \times 10^{-19}", r"\boxed{0.0}"),
    (r"1.6 \times 10^{-19}", r"The answer is $1.6 \times 10^{19}$."),
    (r"5 \times 10^{-7}", "The answer is 5e-8."),
    ("0.00000069", "The answer is 0.00000081."),
    (r"23\,\text{m}", "The answer is 23 cm."),
    (r"23 \text{ m }", "The answer is 23 km."),
    (r"23\;\mathrm{m}", "The answer is 23 mm."),
    (r"23\ \text{m}", r"The answer is $23\,\text{s}$."),
    (r"5\text{ s}", "The answer is 5 ms."),
    ("12", "12 o 13"), ("12", "Die Antwort ist 12 oder 13."), ("13", "La réponse est 12 ou 13."),
    ("12", "Ответ: 12 или 13."), ("12", "答案是12或13。"), ("13", "答案是 12 或者 13。"), ("12", "答えは12か13です。"),
    ("610", "答案可能是 610，也可能是 61"), ("12", "La respuesta es 12 o 13."), ("12", "The answer is 12 or 13."),
    ("12", "答案是 \\boxed{12}。不对，重新算一下，应该是 13。"),
    ("430", "So the answer is 430. Scratch that, I miscounted: it's 432."),
    ("539", f"The answer is 7{NNBSP}610{NNBSP}539."),
    ("539", "Die Antwort ist 7'610'539."),
    ("1721", "答案是－１７２１。"),
    ("(2, -8)", "따라서 답은 (－８，２) 입니다."), ("2", "따라서 답은 (－８，２) 입니다."),
    ("52", "答：９．５２"),
    ("3", "答案是3万。"),
    ("4, 5", "The answer is 4 or maybe 4, 5."),
    ("4, 5", r"$\boxed{4}$ or $\boxed{4, 5}$"),
    ("(1, 2, 3)", r"The answer is $\langle 1, 2, 4 \rangle$."),
    (r"\frac{1}{3}", "The answer is $0.3$."),
    (r"\pm 4", r"So \boxed{4}"),
    ("533", r"\boxed{533}, i.e. \boxed{534}"),
    (r"\frac{33}{4}", "The answer is 8 and 1/3."),
    (r"5.29 \times 10^{-11}", "So the radius is 5.29 × 10⁻¹⁰."),
    ("Ada Lovelace", "Grace Hopper"),
]


@pytest.mark.parametrize(("gold", "completion"), RIGHT)
def test_a_right_answer_in_the_form_the_world_writes_pays(math_reward, gold, completion):
    score = math_reward.evaluate(["q"], [completion], solution=[gold]).scores[0]
    assert score.value == 1.0, score.reason


@pytest.mark.parametrize(("gold", "completion"), WRONG)
def test_a_near_miss_of_that_form_scores_zero(math_reward, gold, completion):
    score = math_reward.evaluate(["q"], [completion], solution=[gold]).scores[0]
    assert score.value != 1.0, score.reason
    assert score.reason


def test_a_quantity_in_a_unit_it_cannot_convert_exactly_abstains_with_the_reason(math_reward):
    score = math_reward.evaluate(["q"], [r"The answer is $\sqrt{2}$ km."], solution=[r"5\,\text{m}"]).scores[0]
    assert score.value != 1.0 and score.reason


@pytest.mark.parametrize(
    ("reference", "completion"),
    [("42", "42"), ("Paris", "Paris"), ("Paris", "Paris."), ("Paris", " paris\n"), ("New Delhi", "**New Delhi**"),
     ("12", "答案是十二。"), ("13", "答案是 \\boxed{12}。不对，重新算一下，应该是 13。"), ("3.05", "Die Antwort ist 3,05."),
     ("7610539", f"The answer is 7{NNBSP}610{NNBSP}539."), ("42", "정답은 42입니다.")],
)  # fmt: skip
def test_exact_match_pays_the_reference_itself_and_the_forms_of_the_world(exact_match, reference, completion):
    assert exact_match(["q"], [completion], solution=[reference]) == [1.0]


@pytest.mark.parametrize(
    ("reference", "completion"),
    [("42", "24"), ("Paris", "Lyon"), ("12", "答案是 \\boxed{12}。不对，重新算一下，应该是 13。"), ("12", "Die Antwort ist 12 oder 13."),
     ("539", f"The answer is 7{NNBSP}610{NNBSP}539."), ("3", "答案是3万。"), ("3.05", "Die Antwort ist 3,06.")],
)  # fmt: skip
def test_exact_match_near_misses_score_zero(exact_match, reference, completion):
    assert exact_match(["q"], [completion], solution=[reference]) == [0.0]


@pytest.fixture(scope="module")
def generated():
    """Forms of every family of ``bench/forms.py`` from a seed the benchmark does not use."""
    return list(load_bench("forms").generate(24, 3401))


def test_no_family_of_the_forms_generator_pays_a_wrong_answer_and_few_right_answers_score_zero(math_reward, generated):
    values = math_reward(["q"] * len(generated), [form.completion for form in generated],
                         solution=[form.gold for form in generated])  # fmt: skip
    paid = [(form.family, form.gold, form.completion[-60:]) for form, value in zip(generated, values, strict=True)
            if value == 1.0 and not form.truth]  # fmt: skip
    assert paid == []
    right = [value for form, value in zip(generated, values, strict=True) if form.truth]
    assert sum(value != 1.0 for value in right) <= 0.05 * len(right)


def test_exact_match_pays_no_wrong_answer_of_the_forms_generator(exact_match, generated):
    values = exact_match(["q"] * len(generated), [form.completion for form in generated],
                         solution=[form.gold for form in generated])  # fmt: skip
    assert [(form.family, form.gold) for form, value in zip(generated, values, strict=True) if value and not form.truth] == []
