"""exact_match by value, one property test per class of issue 34: the right value in every spelling of the class
scores 1.0, and a random wrong value written in the same construction never does.

The constructions are written here (not taken from bench/forms.py): magnitudes, units, CJK and full-width
numerals, grouped digits, hedges and corrections in ten languages, vectors, lists of solutions, repeating
decimals, mixed numbers, decimal commas, number words, ± golds (only the Chinese numeral writer is
bench/forms.py's).
"""

from __future__ import annotations

import pytest
from bench_modules import load_bench
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rewardhub

chinese = load_bench("forms").chinese_int  # n in Chinese numerals, as written (十二, 一百零五, 三万零二十)

CHECKS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PREFACE = "First, 12 + 30 = 42, then we take the remaining part.\n"
FULL_WIDTH = str.maketrans("0123456789-.,+()", "０１２３４５６７８９－．，＋（）")


@pytest.fixture(scope="module")
def exact_match():
    reward = rewardhub.get("exact_match")
    return lambda completions, gold: reward(["q"] * len(completions), completions, solution=[gold] * len(completions))


def stated(answer: str) -> list[str]:
    """``answer`` stated the usual ways: a sentence, a box, an answer line."""
    return [f"{PREFACE}The answer is {answer}.", f"{PREFACE}Therefore, the answer is $\\boxed{{{answer}}}$.",
            f"{PREFACE}Final answer: {answer}"]  # fmt: skip


def pays_all(exact_match, gold: str, answers: list[str]) -> None:
    completions = [text for answer in answers for text in stated(answer)]
    assert exact_match(completions, gold) == [1.0] * len(completions), (gold, answers)


def pays_none(exact_match, gold: str, answers: list[str]) -> None:
    completions = [text for answer in answers for text in stated(answer)]
    values = exact_match(completions, gold)
    assert 1.0 not in values, (gold, [c for c, v in zip(completions, values, strict=True) if v == 1.0])


def scientific(mantissa: str, k: int) -> list[str]:
    sup = str(k).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return [f"{mantissa} \\times 10^{{{k}}}", f"{mantissa} \\cdot 10^{{{k}}}", f"{mantissa}e{k}", f"{mantissa}E{k:+03d}",
            f"{mantissa} × 10{sup}", f"{mantissa} x 10^{{{k}}}"]  # fmt: skip


mantissas = st.builds(lambda a, b: f"{a}.{b:02d}".rstrip("0").rstrip("."), st.integers(1, 9), st.integers(0, 99))
exponents = st.one_of(st.integers(-34, -4), st.integers(4, 30))


@CHECKS
@given(mantissas, exponents, st.sampled_from([-1, 1]))
def test_magnitudes_compare_exactly(exact_match, mantissa, k, off):
    gold = f"{mantissa} \\times 10^{{{k}}}"
    pays_all(exact_match, gold, [f"${s}$" if "\\" in s else s for s in scientific(mantissa, k)])
    other = f"{float(mantissa) + 0.5:g}"
    wrong = [*scientific(mantissa, k + off)[:3], *scientific(mantissa, -k)[:1], *scientific(other, k)[:1], "0", "0.0"]
    pays_none(exact_match, gold, [f"${s}$" if "\\" in s else s for s in wrong])


UNITS = {"m": ("mm", 1000, "cm"), "s": ("ms", 1000, "min"), "g": ("mg", 1000, "kg"), "L": ("mL", 1000, "kL"),
         "J": ("mJ", 1000, "kJ"), "N": ("mN", 1000, "kN"), "W": ("mW", 1000, "kW"), "V": ("mV", 1000, "kV")}  # fmt: skip
SPACED = ["{n}\\,\\text{{{u}}}", "{n} \\text{{ {u} }}", "{n}\\;\\mathrm{{{u}}}", "{n}\\ \\text{{{u}}}", "{n}~\\text{{{u}}}"]


@CHECKS
@given(st.integers(2, 900), st.sampled_from(sorted(UNITS)), st.sampled_from(SPACED), st.integers(1, 9))
def test_quantities_in_their_unit_or_converted(exact_match, n, unit, spacing, delta):
    small, factor, other = UNITS[unit]
    gold = spacing.format(n=n, u=unit)
    pays_all(exact_match, gold, [f"{n} {unit}", f"${n}\\text{{ {unit}}}$", f"${n}\\,\\mathrm{{{unit}}}$", f"{n * factor} {small}",
                                 f"{n}"])  # fmt: skip
    pays_none(exact_match, gold, [f"{n} {small}", f"{n} {other}", f"${n}\\,\\text{{{small}}}$", f"{n + delta} {unit}",
                                  f"{n * factor} {unit}"])  # fmt: skip


@CHECKS
@given(st.integers(11, 99_999), st.integers(1, 9))
def test_cjk_numerals(exact_match, n, delta):
    q, p = 9 + n % 11, 1 + n % 8
    pays_all(exact_match, str(n), [chinese(n)])
    pays_all(exact_match, str(-n), ["负" + chinese(n)])
    pays_all(exact_match, f"\\frac{{{p}}}{{{q}}}", [f"{chinese(q)}分之{chinese(p)}"])
    pays_all(exact_match, f"{n % 100}\\%", [f"百分之{chinese(n % 100)}"])
    pays_none(exact_match, str(n), [chinese(n + delta), "负" + chinese(n), chinese(n // 10)])
    pays_none(exact_match, f"\\frac{{{p}}}{{{q}}}", [f"{chinese(p)}分之{chinese(q)}"])


@CHECKS
@given(st.integers(1, 99), st.sampled_from([("万", 10**4), ("亿", 10**8), ("千", 1000), ("百万", 10**6)]))
def test_cjk_scales(exact_match, lead, scale):
    pays_all(exact_match, str(lead * scale[1]), [f"{lead}{scale[0]}"])
    pays_none(exact_match, str(lead * scale[1]), [str(lead), f"{lead + 1}{scale[0]}"])


@CHECKS
@given(st.integers(1001, 99_999_999), st.sampled_from([",", "\u202f", "\u00a0", "\u2009", " ", "'", "’"]))
def test_grouped_digits(exact_match, n, separator):
    written = f"{n:,}".replace(",", separator)
    pays_all(exact_match, str(n), [written, written.translate(FULL_WIDTH) if separator == "," else written])
    pays_none(exact_match, str(n % 1000 or 7), [written])
    pays_none(exact_match, str(n + 1), [written])


@CHECKS
@given(st.integers(100_000, 99_999_999))
def test_indian_grouping(exact_match, n):
    digits = str(n)
    head, pairs = digits[:-3], []
    while len(head) > 2:
        pairs.insert(0, head[-2:])
        head = head[:-2]
    written = ",".join([head, *pairs, digits[-3:]])
    pays_all(exact_match, str(n), [written])
    pays_none(exact_match, str(n % 100_000), [written])


@CHECKS
@given(st.integers(-99, 99), st.integers(10, 99), st.integers(1, 9))
def test_full_width_signs_points_and_pairs(exact_match, a, b, delta):
    pays_all(exact_match, f"{a}.{b}", [f"{a}.{b}".translate(FULL_WIDTH)])
    pays_all(exact_match, f"({a}, {b})", [f"({a},{b})".translate(FULL_WIDTH)])
    pays_none(exact_match, str(b), [f"{a}.{b}".translate(FULL_WIDTH)])
    pays_none(exact_match, f"({b}, {a})" if a != b else f"({a}, {b + delta})", [f"({a},{b})".translate(FULL_WIDTH)])


OR_WORDS = ["or", "or maybe", "或", "或者", "か", "または", "또는", "o", "oder", "ou", "oppure", "или", "либо"]


@CHECKS
@given(st.integers(2, 999), st.integers(1, 50), st.sampled_from(OR_WORDS))
def test_hedges_in_ten_languages_never_pay(exact_match, a, delta, word):
    spaced = "" if word in ("或", "か") else " "
    hedge = f"{a}{spaced}{word}{spaced}{a + delta}"
    pays_none(exact_match, str(a), [hedge])
    pays_none(exact_match, str(a + delta), [hedge])


CORRECTIONS = ["Wait, that is wrong. Let me redo it: it's {b}.", "Scratch that, I miscounted — it's {b}.",
               "不对，重新算一下，应该是 {b}。", "いや、間違えました。正しくは {b} です。", "잠깐, 틀렸습니다. 다시 계산하면 {b}입니다.",
               "Espera, me equivoqué: en realidad es {b}.", "Moment, das ist falsch. Richtig ist {b}.",
               "Attends, je me suis trompé : c'est {b}.", "Aspetta, ho sbagliato: in realtà è {b}.",
               "Подожди, это неверно. На самом деле {b}."]  # fmt: skip


@CHECKS
@given(st.integers(2, 999), st.integers(1, 50), st.sampled_from(CORRECTIONS), st.sampled_from(["\n", " "]))
def test_corrections_pay_the_corrected_value_only(exact_match, a, delta, correction, gap):
    texts = [f"{PREFACE}The answer is {a}.{gap}" + correction.format(b=a + delta),
             f"{PREFACE}答案是 \\boxed{{{a}}}。{gap}" + correction.format(b=a + delta)]  # fmt: skip
    assert 1.0 not in exact_match(texts, str(a))
    assert exact_match(texts, str(a + delta)) == [1.0, 1.0]


@CHECKS
@given(st.lists(st.integers(-9, 9), min_size=2, max_size=4), st.data())
def test_vectors_in_every_spelling_and_in_order(exact_match, values, data):
    inner = ", ".join(map(str, values))
    column = "\\begin{pmatrix} " + " \\\\ ".join(map(str, values)) + " \\end{pmatrix}"
    spellings = [f"({inner})", f"\\langle {inner} \\rangle", f"\\left\\langle {inner} \\right\\rangle", f"⟨{inner}⟩", column]
    gold = data.draw(st.sampled_from(spellings))
    pays_all(exact_match, gold, [f"${s}$" for s in spellings])
    changed = list(values)
    changed[data.draw(st.integers(0, len(values) - 1))] += 1
    wrong = [f"\\langle {', '.join(map(str, changed))} \\rangle", f"({', '.join(map(str, changed))})"]
    if values != values[::-1]:
        wrong.append(f"({', '.join(map(str, values[::-1]))})")
    pays_none(exact_match, gold, [f"${s}$" for s in wrong] + [f"$[{inner}]$", f"$\\{{{inner}\\}}$"])


@CHECKS
@given(st.lists(st.integers(-30, 30), min_size=2, max_size=4, unique=True), st.integers(31, 60))
def test_lists_of_solutions_in_any_order(exact_match, values, extra):
    gold = ", ".join(map(str, values))
    backwards = ", ".join(map(str, values[::-1]))
    pays_all(exact_match, gold, [backwards, " and ".join(map(str, values)), gold.replace(", ", ","), f"\\{{{backwards}\\}}"])
    pays_none(exact_match, gold, [str(values[0]), f"{gold}, {extra}", ", ".join(map(str, values[:-1])),
                                  f"{values[0]} or {gold}", f"({gold})", f"[{gold}]"])  # fmt: skip


@CHECKS
@given(st.integers(1, 40), st.integers(0, 9))
def test_plus_minus_golds(exact_match, n, r):
    pays_all(exact_match, f"\\pm {n}", [f"{n}, -{n}", f"-{n}, {n}"])
    assert exact_match([f"{PREFACE}So $x = {n}$ or $x = -{n}$."], f"\\pm {n}") == [1.0]
    pays_none(exact_match, f"\\pm {n}", [str(n), f"{n}, -{n + 1}", f"-{n}"])
    root = [2, 3, 5, 6, 7, 10, 11, 13, 14, 15][r]
    gold = f"{n} \\pm \\sqrt{{{root}}}"
    pays_all(exact_match, gold, [f"{n}+\\sqrt{{{root}}}, {n}-\\sqrt{{{root}}}"])
    pays_none(exact_match, gold, [f"{n}+\\sqrt{{{root}}}", f"{n}+\\sqrt{{{root}}}, {n}\\sqrt{{{root}}}"])


@CHECKS
@given(st.sampled_from([(1, 3), (2, 3), (1, 9), (4, 9), (1, 6), (5, 6), (1, 11), (3, 11), (2, 7)]), st.integers(1, 8))
def test_repeating_decimals(exact_match, fraction, other):
    p, q = fraction
    digits, period = _repeating(p, q)
    gold = f"\\frac{{{p}}}{{{q}}}"
    right = [f"0.{digits}\\overline{{{period}}}", f"0.{digits}({period})"]
    right += [f"0.{digits}\\dot{{{period}}}"] if len(period) == 1 else []
    pays_all(exact_match, gold, [f"${s}$" for s in right])
    changed = str((int(period[0]) + other) % 10) + period[1:]
    pays_none(exact_match, gold, [f"${s}$" for s in (f"0.{digits}{period}"[:6], f"0.{digits}\\overline{{{changed}}}")])


def _repeating(p: int, q: int) -> tuple[str, str]:
    seen, digits, remainder = {}, "", p
    while remainder not in seen:
        seen[remainder] = len(digits)
        remainder *= 10
        digits += str(remainder // q)
        remainder %= q
    return digits[: seen[remainder]], digits[seen[remainder] :]


@CHECKS
@given(st.integers(1, 30), st.sampled_from([(1, 4), (3, 4), (1, 2), (2, 3), (3, 8)]))
def test_mixed_numbers(exact_match, whole, fraction):
    p, q = fraction
    gold = f"\\frac{{{whole * q + p}}}{{{q}}}"
    pays_all(exact_match, gold, [f"{whole} {p}/{q}", f"{whole} and {p}/{q}", f"{whole}\\frac{{{p}}}{{{q}}}"])
    pays_none(exact_match, gold, [str(whole), f"{whole + 1} and {p}/{q}", f"{whole} and {p + 1}/{q + 1}"])


@CHECKS
@given(st.integers(0, 99), st.integers(1, 99), st.integers(1, 9))
def test_decimal_commas(exact_match, a, b, delta):
    gold = f"{a}.{b:02d}"
    pays_all(exact_match, gold, [f"{a},{b:02d}"])
    pays_none(exact_match, gold, [f"{a},{(b + delta) % 100:02d}", f"{a}{b:02d}"])


ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


@CHECKS
@given(st.integers(21, 99), st.integers(1, 9))
def test_number_words(exact_match, n, delta):
    english = TENS[n // 10 - 2] + (f"-{ONES[n % 10]}" if n % 10 else "")
    pays_all(exact_match, str(n), [english, chinese(n)])
    assert exact_match([f"{PREFACE}x = {n}", f"{PREFACE}The answer is $x = {n}$."], str(n)) == [1.0, 1.0]
    pays_none(exact_match, str(n), [chinese(n + delta), TENS[(n // 10 - 1) % 8]])


@CHECKS
@given(st.integers(2, 10**6))
def test_factorials_are_not_their_numbers(exact_match, n):
    pays_none(exact_match, str(n), [f"{n}!"])
    pays_all(exact_match, f"{n}!", [f"{n}!"])


@CHECKS
@given(st.integers(2, 99).filter(lambda a: a != 10), st.integers(2, 99))  # 10^{k} is a magnitude, read as one
def test_arithmetic_is_no_value(exact_match, a, b):
    pays_none(exact_match, str(a * b), [f"{a} \\cdot {b}", f"{a}~{b}", f"{{{a}}}{{{b}}}", f"{a} \\times {b}"])
    pays_none(exact_match, str(a**2), [f"{a}^2", f"{a}^{{2}}"])


@CHECKS
@given(st.integers(2, 999), st.integers(1, 50))
def test_two_final_statements_that_disagree(exact_match, a, delta):
    b = a + delta
    texts = [f"{PREFACE}The answer is {a}.\n\n$\\boxed{{{b}}}$", f"{PREFACE}$\\boxed{{{a}}}$\n\nSo the answer is {b}.",
             f"{PREFACE}<answer>{a}</answer>\n\nThe final answer is {b}.", f"{PREFACE}The final answer is {a}. Final answer: {b}"]  # fmt: skip
    assert 1.0 not in exact_match(texts, str(a)) + exact_match(texts, str(b))
    agreeing = [text.replace(str(b), str(a)) for text in texts]
    assert exact_match(agreeing, str(a)) == [1.0] * 4


@CHECKS
@given(st.sampled_from(["Paris", "Ada Lovelace", "photosynthesis", "42", "-7", "3.14", "H2O", "New Delhi"]),
       st.sampled_from(["{w}", "{w}.", " {w}\n", "**{w}**", "_{w}_"]))  # fmt: skip
def test_the_reference_itself_always_pays(exact_match, word, form):
    assert exact_match([form.format(w=word), form.format(w=word.upper())], word) == [1.0, 1.0]


MB = 1_000_000
HOSTILE = {
    "a megabyte of spaced digits": "1 " * (MB // 2),
    "a box holding a list of a megabyte": "\\boxed{" + "1, " * (MB // 3) + "}",
    "a megabyte of dollars": "$" * MB,
    "a megabyte of opening angles": "⟨" * MB,
    "a box taken back a hundred thousand times": "\\boxed{1} " + "Wait, it's 2. " * (MB // 14),
    "two disagreeing statements repeated": "The answer is 5. \\boxed{6} " * (MB // 27),
    "a megabyte of CJK numerals": "答案是" + "十" * MB,
    "an exponent of a megabyte of digits": "The answer is 1e" + "9" * MB,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_megabyte_completions_score_zero_with_a_reason(name):
    """Linear-time reading: each completion is scored (no hang, no crash), 0 with the reason (behaviour only)."""
    score = rewardhub.get("exact_match").evaluate(None, [HOSTILE[name]], solution=["5"]).scores[0]
    assert score.value == 0.0 and score.verdict is False and score.reason
