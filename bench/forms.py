"""Forms the world writes: a seeded generator of final answers in many languages, scripts and notations.

Each family writes one construction the way people and models write it (a Chinese numeral, a unit spaced
the LaTeX way, a hedge in Russian, a number grouped with narrow no-break spaces, ...) and pairs each right
answer with near misses of the same construction (the last group of a grouped number, a unit with another
prefix, an exponent off by one, a hedge between the right value and a wrong one), so a verifier is measured
on both of its numbers: false positives (a wrong answer paid) and false negatives (a right answer scored 0).

Every case knows its truth by construction. Templates, numbers, languages and spellings are drawn at random
from broad pools, so a fix must hold for the class, not for one example. Written here independently of the
verifiers it measures (no import from ``rewardhub``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["FAMILIES", "Form", "generate"]


@dataclass(frozen=True)
class Form:
    """One case: the gold answer, a completion, and whether the completion's final answer is the gold."""

    family: str
    gold: str
    completion: str
    truth: bool


# ----- building blocks --------------------------------------------------------------------------------

# (language, reasoning preface with distractor numbers, answer statement with {a} for the answer)
STATEMENTS = {
    "en": ("First, {x} + {y} = {z}, then we take the remaining part.\n", ["The answer is {a}.", "Final answer: {a}",
           "So the result is {a}.", "Therefore, the answer is $\\boxed{{{a}}}$."]),
    "zh": ("首先，{x} + {y} = {z}，然后计算剩下的部分。\n", ["答案是 {a}。", "答：{a}。", "所以答案是{a}。", "最终答案：{a}",
           "因此答案为 $\\boxed{{{a}}}$。"]),
    "ja": ("まず、{x} + {y} = {z} です。次に残りを計算します。\n", ["答えは {a} です。", "答え：{a}", "よって答えは{a}です。",
           "したがって、$\\boxed{{{a}}}$ です。"]),
    "ko": ("먼저 {x} + {y} = {z} 이고, 나머지를 계산합니다.\n", ["답은 {a}입니다.", "정답: {a}", "따라서 답은 {a} 입니다.",
           "따라서 $\\boxed{{{a}}}$ 입니다."]),
    "es": ("Primero, {x} + {y} = {z}; luego calculamos el resto.\n", ["La respuesta es {a}.", "Respuesta: {a}",
           "La respuesta final es {a}.", "Por lo tanto, $\\boxed{{{a}}}$."]),
    "de": ("Zuerst gilt {x} + {y} = {z}, dann rechnen wir den Rest.\n", ["Die Antwort ist {a}.", "Antwort: {a}",
           "Die Antwort lautet {a}.", "Also ist das Ergebnis $\\boxed{{{a}}}$."]),
    "fr": ("D'abord, {x} + {y} = {z}, puis on calcule le reste.\n", ["La réponse est {a}.", "Réponse : {a}",
           "La réponse finale est {a}.", "Donc $\\boxed{{{a}}}$."]),
    "pt": ("Primeiro, {x} + {y} = {z}; depois calculamos o resto.\n", ["A resposta é {a}.", "Resposta: {a}",
           "A resposta final é {a}.", "Portanto, $\\boxed{{{a}}}$."]),
    "it": ("Prima, {x} + {y} = {z}; poi calcoliamo il resto.\n", ["La risposta è {a}.", "Risposta: {a}",
           "La risposta finale è {a}.", "Quindi $\\boxed{{{a}}}$."]),
    "ru": ("Сначала {x} + {y} = {z}, затем считаем остаток.\n", ["Ответ: {a}.", "Ответ: {a}", "Итоговый ответ: {a}",
           "Следовательно, $\\boxed{{{a}}}$."]),
}  # fmt: skip
LANGS = tuple(STATEMENTS)
# "or" between two values, per language (a hedge: no single value is stated)
OR_WORDS = {"en": ["or", "or maybe"], "zh": ["或", "或者", "，也可能是 "], "ja": ["か", "または", "あるいは"],
            "ko": ["또는", "혹은"], "es": ["o", "o bien"], "de": ["oder"], "fr": ["ou", "ou bien"], "pt": ["ou"],
            "it": ["o", "oppure"], "ru": ["или", "либо"]}  # fmt: skip
# A correction after a stated value, then the corrected value: {a} first value, {b} corrected value
CORRECTIONS = {
    "en": ["Wait, that is wrong. Let me redo it: it's {b}.", "Scratch that, I miscounted — it's {b}.",
           "Actually, I made an error; it should be {b}.", "Hmm, on second thought the total is {b}."],
    "zh": ["不对，重新算一下，应该是 {b}。", "等等，我算错了，答案应该是{b}。", "更正：结果是 {b}。"],
    "ja": ["いや、間違えました。正しくは {b} です。", "待って、計算し直すと {b} です。"],
    "ko": ["잠깐, 틀렸습니다. 다시 계산하면 {b}입니다.", "정정: 답은 {b}입니다."],
    "es": ["Espera, me equivoqué: en realidad es {b}.", "Corrijo: la respuesta es {b}."],
    "de": ["Moment, das ist falsch. Richtig ist {b}.", "Warte, ich habe mich verrechnet: es sind {b}."],
    "fr": ["Attends, je me suis trompé : c'est {b}.", "En fait, la réponse est {b}."],
    "pt": ["Espera, errei: na verdade é {b}.", "Correção: a resposta é {b}."],
    "it": ["Aspetta, ho sbagliato: in realtà è {b}.", "Correggo: la risposta è {b}."],
    "ru": ["Подожди, это неверно. На самом деле {b}.", "Исправление: ответ {b}."],
}  # fmt: skip
CN_DIGITS = "零一二三四五六七八九"


def preface(rng: random.Random, lang: str = "en") -> str:
    x, y = rng.randint(2, 90), rng.randint(2, 90)
    return STATEMENTS[lang][0].format(x=x, y=y, z=x + y)


def state(rng: random.Random, answer: str, lang: str = "en", *, boxed_ok: bool = True) -> str:
    """A completion that reasons a little, then states ``answer`` in ``lang``."""
    templates = STATEMENTS[lang][1] if boxed_ok else [t for t in STATEMENTS[lang][1] if "boxed" not in t]
    return preface(rng, lang) + rng.choice(templates).format(a=answer)


def chinese_int(n: int) -> str:
    """``n`` (0 <= n < 10**8) in Chinese numerals, as written (十二, 一百零五, 三万零二十)."""
    if n < 10:
        return CN_DIGITS[n]
    if n < 20:
        return "十" + (CN_DIGITS[n % 10] if n % 10 else "")
    out, zero = "", False
    for value, name in ((10**4, "万"), (1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // value
        n %= value
        if value == 10**4 and digit:
            out += chinese_int(digit) + name
            continue
        if digit:
            out += ("零" if zero and out else "") + CN_DIGITS[digit] + name
            zero = False
        elif out:
            zero = True
    return out


def sci(mantissa: str, exponent: int, style: str) -> str:
    if style == "times":
        return f"{mantissa} \\times 10^{{{exponent}}}"
    if style == "cdot":
        return f"{mantissa} \\cdot 10^{{{exponent}}}"
    if style == "e":
        return f"{mantissa}e{exponent}"
    if style == "E":
        return f"{mantissa}E{exponent:+03d}"
    return f"{mantissa} × 10{superscript(exponent)}"


def superscript(n: int) -> str:
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def pick_other(rng: random.Random, value: int, spread: int = 9) -> int:
    other = value
    while other == value:
        other = value + rng.randint(-spread, spread)
    return other


# ----- families ---------------------------------------------------------------------------------------
# Each returns a few forms: right answers (truth True) and near misses (truth False).

def tiny_magnitudes(rng: random.Random) -> list[Form]:
    mantissa = f"{rng.randint(1, 9)}.{rng.randint(0, 99):02d}".rstrip("0").rstrip(".")
    k = -rng.randint(5, 34)
    gold = sci(mantissa, k, rng.choice(["times", "cdot"]))
    right = sci(mantissa, k, rng.choice(["times", "e", "E", "unicode", "cdot"]))
    wrong_exponent = sci(mantissa, k + rng.choice([-1, 1]), rng.choice(["times", "e", "unicode"]))
    other_mantissa = f"{float(mantissa) + rng.choice([-0.3, 0.2, 0.5]):.2f}".rstrip("0").rstrip(".")
    return [
        Form("tiny_magnitudes", gold, state(rng, f"${right}$" if "\\" in right else right), True),
        Form("tiny_magnitudes", gold, state(rng, f"${wrong_exponent}$" if "\\" in wrong_exponent else wrong_exponent), False),
        Form("tiny_magnitudes", gold, state(rng, sci(mantissa, -k, "times").join("$$")), False),  # the opposite sign
        Form("tiny_magnitudes", gold, state(rng, rng.choice(["0", "0.0", "$\\boxed{0.0}$", "0.000000"])), False),
        Form("tiny_magnitudes", gold, state(rng, sci(other_mantissa, k, "times").join("$$")), False),
    ]


def tiny_decimals(rng: random.Random) -> list[Form]:
    zeros = rng.randint(5, 12)
    digits = rng.randint(11, 99)
    gold = "0." + "0" * zeros + str(digits)
    other = "0." + "0" * zeros + str(min(99, max(11, pick_other(rng, digits, 20))) if digits not in (11, 99) else 50)
    scaled = "0." + "0" * (zeros + rng.choice([-1, 1])) + str(digits)
    return [
        Form("tiny_decimals", gold, state(rng, gold), True),
        Form("tiny_decimals", gold, state(rng, f"${digits / 10:g} \\times 10^{{{-(zeros + 1)}}}$"), True),
        Form("tiny_decimals", gold, state(rng, other), False),
        Form("tiny_decimals", gold, state(rng, scaled), False),
    ]


def big_magnitudes(rng: random.Random) -> list[Form]:
    mantissa = f"{rng.randint(1, 9)}.{rng.randint(1, 99):02d}".rstrip("0")
    k = rng.randint(7, 30)
    gold = sci(mantissa, k, "times")
    return [
        Form("big_magnitudes", gold, state(rng, sci(mantissa, k, rng.choice(["e", "E", "unicode", "cdot"]))), True),
        Form("big_magnitudes", gold, state(rng, sci(mantissa, k - 1, rng.choice(["e", "times", "unicode"]))), False),
        Form("big_magnitudes", gold, state(rng, sci(mantissa, -k, rng.choice(["e", "unicode"]))), False),
    ]


UNITS = [("m", ["cm", "km", "mm"]), ("s", ["ms", "min"]), ("g", ["kg", "mg"]), ("L", ["mL"]), ("J", ["kJ"]),
         ("N", ["kN", "mN"]), ("W", ["kW"]), ("Pa", ["kPa"]), ("V", ["mV", "kV"])]  # fmt: skip
LATEX_SPACED = ["{n}\\,\\text{{{u}}}", "{n} \\text{{ {u} }}", "{n}\\;\\mathrm{{{u}}}", "{n}\\ \\text{{{u}}}",
                "{n}~\\text{{{u}}}", "{n}\\,\\mathrm{{{u}}}", "{n} \\mathrm{{ {u}}}"]  # fmt: skip


def latex_units(rng: random.Random) -> list[Form]:
    unit, others = rng.choice(UNITS)
    n = rng.randint(2, 900)
    gold = rng.choice(LATEX_SPACED).format(n=n, u=unit)
    right = rng.choice([f"{n} {unit}", f"${n}\\text{{ {unit}}}$", f"${n}\\,\\mathrm{{{unit}}}$", f"{n}{unit}"])
    wrong = rng.choice(others)
    return [
        Form("latex_units", gold, state(rng, right), True),
        Form("latex_units", gold, state(rng, rng.choice([f"{n} {wrong}", f"${n}\\,\\text{{{wrong}}}$"])), False),
        Form("latex_units", gold, state(rng, f"{pick_other(rng, n)} {unit}"), False),
    ]


def converted_units(rng: random.Random) -> list[Form]:
    n = rng.randint(2, 90)
    base, small, factor = rng.choice([("m", "cm", 100), ("km", "m", 1000), ("kg", "g", 1000), ("s", "ms", 1000),
                                      ("L", "mL", 1000), ("h", "min", 60)])  # fmt: skip
    gold = f"{n}\\,\\text{{{base}}}"
    return [
        Form("converted_units", gold, state(rng, f"{n * factor} {small}"), True),
        Form("converted_units", gold, state(rng, f"{n} {small}"), False),
        Form("converted_units", gold, state(rng, f"{n * factor} {base}"), False),
    ]


def cjk_numerals(rng: random.Random) -> list[Form]:
    n = rng.randint(11, 9999)
    kind = rng.choice(["int", "negative", "fraction", "percent"])
    other = pick_other(rng, n)
    if kind == "int":
        gold, right, wrong = str(n), chinese_int(n), chinese_int(other)
    elif kind == "negative":
        gold, right, wrong = str(-n), "负" + chinese_int(n), chinese_int(n)
    elif kind == "fraction":
        p, q = rng.randint(1, 8), rng.randint(9, 19)
        gold, right, wrong = f"\\frac{{{p}}}{{{q}}}", f"{chinese_int(q)}分之{chinese_int(p)}", f"{chinese_int(p)}分之{chinese_int(q)}"
    else:
        p = rng.randint(1, 99)
        gold, right, wrong = f"{p}\\%", f"百分之{chinese_int(p)}", f"百分之{chinese_int(pick_other(rng, p, 5) % 100 or 3)}"
    template = rng.choice(["答案是{a}。", "答：{a}", "所以结果为{a}。", "最终答案是 {a}"])
    return [
        Form("cjk_numerals", gold, preface(rng, "zh") + template.format(a=right), True),
        Form("cjk_numerals", gold, preface(rng, "zh") + template.format(a=wrong), False),
    ]


def cjk_scale(rng: random.Random) -> list[Form]:
    lead = rng.choice([str(rng.randint(2, 99)), f"{rng.randint(1, 9)}.{rng.randint(1, 9)}"])
    scale, factor = rng.choice([("万", 10**4), ("亿", 10**8), ("千", 10**3), ("百万", 10**6), ("万亿", 10**12)])
    value = round(float(lead) * factor)
    gold = str(value)
    lang = rng.choice(["zh", "ja"])
    return [
        Form("cjk_scale", gold, state(rng, f"{lead}{scale}", lang, boxed_ok=False), True),
        Form("cjk_scale", gold, state(rng, lead, lang, boxed_ok=False), False),
        Form("cjk_scale", lead, state(rng, f"{lead}{scale}", lang, boxed_ok=False), False),
    ]


FULL = str.maketrans("0123456789-.,+", "０１２３４５６７８９－．，＋")


def full_width(rng: random.Random) -> list[Form]:
    kind = rng.choice(["negative", "decimal", "grouped", "pair"])
    if kind == "negative":
        n = rng.randint(10, 9999)
        gold, right, wrong_gold = str(-n), f"-{n}", str(n)
    elif kind == "decimal":
        a, b = rng.randint(1, 99), rng.randint(10, 99)
        gold, right, wrong_gold = f"{a}.{b}", f"{a}.{b}", str(b)
    elif kind == "grouped":
        n = rng.randint(1001, 999_999)
        gold, right, wrong_gold = str(n), f"{n:,}", str(n % 1000 or 7)
    else:
        a, b = rng.randint(-20, 20), rng.randint(-20, 20)
        gold, right, wrong_gold = f"({a}, {b})", f"({a},{b})", f"({b}, {a})" if a != b else f"({a}, {b + 1})"
    written = right.translate(FULL)
    lang = rng.choice(["zh", "ja", "ko"])
    text = state(rng, written, lang, boxed_ok=False)
    return [Form("full_width", gold, text, True), Form("full_width", wrong_gold, text, False)]


SPACES = ["\u202f", "\u00a0", "\u2009", " "]


def grouped_spaces(rng: random.Random) -> list[Form]:
    n = rng.randint(1_000_000, 99_999_999)
    space = rng.choice(SPACES)
    written = f"{n:,}".replace(",", space)
    lang = rng.choice(["fr", "en", "de", "ru"])
    text = state(rng, written, lang, boxed_ok=False)
    return [Form("grouped_spaces", str(n), text, True), Form("grouped_spaces", str(n % 1000), text, False),
            Form("grouped_spaces", str(n % 1_000_000), text, False)]


def indian_swiss(rng: random.Random) -> list[Form]:
    n = rng.randint(1_000_000, 99_999_999)
    if rng.random() < 0.5:
        written = f"{n:,}".replace(",", rng.choice(["'", "’"]))
    else:
        s = str(n)
        head, tail = s[:-3], s[-3:]
        pairs = []
        while len(head) > 2:
            pairs.insert(0, head[-2:])
            head = head[:-2]
        written = ",".join([head, *pairs, tail])
    text = state(rng, written, rng.choice(["en", "de", "fr"]), boxed_ok=False)
    return [Form("indian_swiss", str(n), text, True), Form("indian_swiss", str(n % 1000), text, False),
            Form("indian_swiss", str(n % 100000), text, False)]


def hedges(rng: random.Random) -> list[Form]:
    lang = rng.choice(LANGS)
    a = rng.randint(2, 999)
    b = pick_other(rng, a, 50)
    word = rng.choice(OR_WORDS[lang])
    spaced = "" if lang in ("zh", "ja") and len(word) <= 2 and rng.random() < 0.5 else " "
    phrase = f"{a}{spaced}{word}{spaced}{b}" if not word.startswith("，") else f"{a}{word}{b}"
    text = state(rng, phrase, lang, boxed_ok=False)
    plain = state(rng, str(a), lang)
    return [Form("hedges", str(a), text, False), Form("hedges", str(b), text, False), Form("hedges", str(a), plain, True)]


def corrections(rng: random.Random) -> list[Form]:
    lang = rng.choice(LANGS)
    a = rng.randint(2, 999)
    b = pick_other(rng, a, 50)
    first = rng.choice(STATEMENTS[lang][1]).format(a=rng.choice([str(a), f"\\boxed{{{a}}}"]))
    text = preface(rng, lang) + first + rng.choice([" ", "\n"]) + rng.choice(CORRECTIONS[lang]).format(b=b)
    return [Form("corrections", str(a), text, False), Form("corrections", str(b), text, True)]


def vectors(rng: random.Random) -> list[Form]:
    values = [rng.randint(-9, 9) for _ in range(rng.choice([2, 3]))]
    inner = ", ".join(map(str, values))
    column = "\\begin{pmatrix} " + " \\\\ ".join(map(str, values)) + " \\end{pmatrix}"
    gold = rng.choice([f"({inner})", f"\\langle {inner} \\rangle", column])
    right = rng.choice([f"\\langle {inner}\\rangle", f"\\left\\langle {inner} \\right\\rangle", f"({inner})",
                        f"⟨{inner}⟩", column])
    changed = list(values)
    changed[rng.randrange(len(values))] += rng.choice([-1, 1])
    wrong = f"\\langle {', '.join(map(str, changed))} \\rangle"
    return [Form("vectors", gold, state(rng, f"${right}$"), True), Form("vectors", gold, state(rng, f"${wrong}$"), False)]


def repeating_decimals(rng: random.Random) -> list[Form]:
    p, q = rng.choice([(1, 3), (2, 3), (1, 9), (4, 9), (7, 9), (1, 6), (5, 6), (1, 11), (3, 11), (2, 7), (1, 7)])
    from fractions import Fraction

    digits, period = _repeating(Fraction(p, q))  # a wrong answer stops short of 6 decimals (0.142857 rounds to 1/7)
    gold = f"\\frac{{{p}}}{{{q}}}"
    right = rng.choice([f"0.{digits}\\overline{{{period}}}", f"0.{digits}({period})", f"0.{digits}\\dot{{{period}}}"
                        if len(period) == 1 else f"0.{digits}\\overline{{{period}}}"])
    wrong = rng.choice([f"0.{digits}{period}"[:6], f"0.{digits}\\overline{{{int(period[0]) % 9 + 1}{period[1:]}}}"])
    return [Form("repeating_decimals", gold, state(rng, f"${right}$"), True),
            Form("repeating_decimals", gold, state(rng, f"${wrong}$"), False)]


def _repeating(value) -> tuple[str, str]:
    """The non-repeating digits and the period of a fraction below 1."""
    seen, digits, remainder = {}, "", value.numerator
    while remainder not in seen:
        seen[remainder] = len(digits)
        remainder *= 10
        digits += str(remainder // value.denominator)
        remainder %= value.denominator
    start = seen[remainder]
    return digits[:start], digits[start:]


def plus_minus(rng: random.Random) -> list[Form]:
    if rng.random() < 0.5:
        n = rng.randint(2, 30)
        gold = f"\\pm {n}"
        right = rng.choice([f"\\boxed{{{n}, -{n}}}", f"$x = {n}$ or $x = -{n}$", f"\\boxed{{-{n}, {n}}}"])
        wrong = rng.choice([f"\\boxed{{{n}}}", f"\\boxed{{{n}, -{n + 1}}}"])
    else:
        a, r = rng.randint(1, 9), rng.choice([2, 3, 5, 6, 7, 10, 11])
        gold = f"{a} \\pm \\sqrt{{{r}}}"
        right = rng.choice([f"\\boxed{{{a}+\\sqrt{{{r}}}, {a}-\\sqrt{{{r}}}}}", f"$x = {a} + \\sqrt{{{r}}}$ and $x = {a} - \\sqrt{{{r}}}$"])
        wrong = f"\\boxed{{{a}+\\sqrt{{{r}}}}}"
    return [Form("plus_minus", gold, preface(rng) + "So " + right, True),
            Form("plus_minus", gold, preface(rng) + "So " + wrong, False)]


def restated_boxes(rng: random.Random) -> list[Form]:
    n = rng.randint(2, 999)
    again = rng.choice([f"{n}.0", f"{n}.00", f"{n}", f"{n:,}" if n >= 1000 else f"{n}.0"])
    joiner = rng.choice([", i.e. ", ", that is, ", " (= ", " = "])
    close = ")" if joiner == " (= " else ""
    right = f"\\boxed{{{n}}}{joiner}\\boxed{{{again}}}{close}"
    wrong = f"\\boxed{{{n}}}{joiner}\\boxed{{{pick_other(rng, n)}}}{close}"
    return [Form("restated_boxes", str(n), preface(rng) + right, True),
            Form("restated_boxes", str(n), preface(rng) + wrong, False)]


def mixed_numbers(rng: random.Random) -> list[Form]:
    whole, p, q = rng.randint(1, 20), *rng.choice([(1, 4), (3, 4), (1, 2), (2, 3), (1, 3), (3, 8), (5, 8)])
    gold = rng.choice([f"\\frac{{{whole * q + p}}}{{{q}}}", f"{whole}\\frac{{{p}}}{{{q}}}"])
    right = rng.choice([f"{whole} and {p}/{q}", f"{whole} {p}/{q}", f"{whole} and {p}/{q} cups"])
    wrong = rng.choice([f"{whole} and {p + 1}/{q + 1}", f"{whole + 1} and {p}/{q}", f"{whole}"])
    return [Form("mixed_numbers", gold, state(rng, right, boxed_ok=False), True),
            Form("mixed_numbers", gold, state(rng, wrong, boxed_ok=False), False)]


def cjk_units(rng: random.Random) -> list[Form]:
    n = rng.randint(2, 999)
    unit = rng.choice(["kg", "元", "个", "米", "千克", "厘米", "cm", "人", "本", "円", "개", "km"])
    template = rng.choice(["答：{n}{u}。", "答案是 {n} {u}。", "所以一共是 $\\text{{{n} {u}}}$。", "答え：{n}{u}", "답: {n}{u}",
                           "共 {n} {u}。"])  # fmt: skip
    text = preface(rng, "zh") + template.format(n=n, u=unit)
    wrong = preface(rng, "zh") + template.format(n=pick_other(rng, n), u=unit)
    return [Form("cjk_units", str(n), text, True), Form("cjk_units", str(n), wrong, False)]


def superscript_exponents(rng: random.Random) -> list[Form]:
    mantissa = f"{rng.randint(1, 9)}.{rng.randint(10, 99)}"
    k = rng.choice([-1, 1]) * rng.randint(2, 30)
    gold = sci(mantissa, k, "times")
    mark = rng.choice(["×", "x", "·", "*"])
    right = f"{mantissa} {mark} 10{superscript(k)}"
    wrong = f"{mantissa} {mark} 10{superscript(k + rng.choice([-1, 1]))}"
    return [Form("superscript_exponents", gold, state(rng, right, boxed_ok=False), True),
            Form("superscript_exponents", gold, state(rng, wrong, boxed_ok=False), False),
            Form("superscript_exponents", gold, state(rng, f"{mantissa} {mark} 10{superscript(-k)}", boxed_ok=False), False)]


def taken_back(rng: random.Random) -> list[Form]:
    a = rng.randint(10, 999)
    b = pick_other(rng, a, 30)
    words = rng.choice(["Scratch that", "Wait, no", "Hold on, I miscounted", "Oops, that's wrong", "Actually, no"])
    ending = rng.choice(["it's {b}.", "the answer is {b}.", "the total is {b}.", "it should be {b}.", "so we get $\\boxed{{{b}}}$."])
    text = preface(rng) + f"So the answer is {a}. {words}, " + ending.format(b=b)
    return [Form("taken_back", str(b), text, True), Form("taken_back", str(a), text, False)]


def list_gold_hedges(rng: random.Random) -> list[Form]:
    a, b = sorted(rng.sample(range(1, 30), 2))
    gold = rng.choice([f"{a}, {b}", f"{a}, {b}".replace(", ", ",")])
    hedge = rng.choice([f"The answer is {a} or maybe {a}, {b}.", f"The answer is {a}, {b} or possibly {b}.",
                        f"The answer is {a} or {a}, {b}.", f"$\\boxed{{{a}}}$ or $\\boxed{{{a}, {b}}}$",
                        f"The answer is {b} or {a}, {b}."])  # fmt: skip
    right = rng.choice([f"The answers are {a} and {b}.", f"$\\boxed{{{a}, {b}}}$", f"The answer is {b}, {a}."])
    return [Form("list_gold_hedges", gold, preface(rng) + hedge, False),
            Form("list_gold_hedges", gold, preface(rng) + right, True)]


def bare_references(rng: random.Random) -> list[Form]:
    word = rng.choice(["Paris", "Jupiter", "photosynthesis", "Tokyo", "oxygen", "Shakespeare", "isosceles", "mitochondria",
                       "42", "3.14", "1789", "-7", "Ada Lovelace", "New Delhi", "H2O", "True", "no", "yes"])  # fmt: skip
    other = rng.choice(["Lyon", "Saturn", "osmosis", "Kyoto", "nitrogen", "Marlowe", "scalene", "24", "2.71", "1776",
                        "7", "Grace Hopper", "Mumbai", "CO2", "False"])  # fmt: skip
    right = rng.choice([word, f"{word}.", f" {word}\n", f"**{word}**", word.upper() if not word[0].isdigit() else word])
    return [Form("bare_references", word, right, True), Form("bare_references", word, other if other != word else "none", False)]


def answer_phrases(rng: random.Random) -> list[Form]:
    lang = rng.choice(LANGS)
    n = rng.randint(2, 9999)
    text = state(rng, str(n), lang)
    distractor = preface(rng, lang) + f"{n} " + "\n" + rng.choice(STATEMENTS[lang][1]).format(a=pick_other(rng, n))
    return [Form("answer_phrases", str(n), text, True), Form("answer_phrases", str(n), distractor, False)]


def decimal_commas(rng: random.Random) -> list[Form]:
    a, b = rng.randint(0, 99), rng.randint(1, 99)
    gold = f"{a}.{b:02d}"
    lang = rng.choice(["de", "fr", "es", "pt", "it", "ru"])
    right = state(rng, f"{a},{b:02d}", lang, boxed_ok=False)
    wrong = state(rng, f"{a},{(b + rng.randint(1, 9)) % 100:02d}", lang, boxed_ok=False)
    return [Form("decimal_commas", gold, right, True), Form("decimal_commas", gold, wrong, False)]


def worded_numbers(rng: random.Random) -> list[Form]:
    lang = rng.choice(["ja", "ko", "zh"])
    n = rng.randint(11, 99)
    if lang == "ko":
        tens = ["", "십", "이십", "삼십", "사십", "오십", "육십", "칠십", "팔십", "구십"]
        units = ["", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구"]
        written, wrong = tens[n // 10] + units[n % 10], tens[(n + 10) // 10 % 10 or 1] + units[n % 10]
    else:
        written, wrong = chinese_int(n), chinese_int(n + 1)
    return [Form("worded_numbers", str(n), state(rng, written, lang, boxed_ok=False), True),
            Form("worded_numbers", str(n), state(rng, wrong, lang, boxed_ok=False), False)]


FAMILIES: dict[str, Callable[[random.Random], list[Form]]] = {
    f.__name__: f
    for f in (tiny_magnitudes, tiny_decimals, big_magnitudes, latex_units, converted_units, cjk_numerals, cjk_scale,
              full_width, grouped_spaces, indian_swiss, hedges, corrections, vectors, repeating_decimals, plus_minus,
              restated_boxes, mixed_numbers, cjk_units, superscript_exponents, taken_back, list_gold_hedges,
              bare_references, answer_phrases, decimal_commas, worded_numbers)
}  # fmt: skip


def generate(per_family: int, seed: int, families: tuple[str, ...] = tuple(FAMILIES)) -> Iterator[Form]:
    """About ``per_family`` forms of each family (whole draws of right answers and their near misses)."""
    for name in families:
        rng = random.Random(f"{seed}:{name}")
        count = 0
        while count < per_family:
            forms = FAMILIES[name](rng)
            count += len(forms)
            yield from forms
