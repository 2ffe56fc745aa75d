"""Held-out-style math cases by construction: for each class of misreading (issue 20), completions that offer a
wrong value in that construction (truth: 0) and completions that state the gold faithfully, re-spelled
(truth: 1).

The cases are generated from a seed, never from a table of examples: golds of many shapes (integers,
fractions, radicals, multiples of pi, expressions, intervals, pairs, sets, words, numbers in a base), wrong
values by small perturbations of the gold (off by one, a swapped fraction, another base, a dropped
element), distractors beside the gold, and the gold re-spelled in the notations models use (unicode
radicals, thousands separators, number words, ``x =``, percentages, scientific notation). Used by
``bench/math_heldout.py`` (false positives and agreement of `math`, `exact_match` and Math-Verify per class)
and by the property tests of ``tests/test_math_false_positives.py`` (each builder takes a ``random.Random``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    kind: str  # the class of construction
    gold: str
    completion: str
    truth: bool  # is the completion's final answer the gold?


@dataclass(frozen=True)
class Value:
    """A gold value: its canonical LaTeX, faithful re-spellings of it, and wrong values near it."""

    shape: str
    latex: str
    spellings: tuple[str, ...]
    wrong: tuple[str, ...]
    scalar: bool = True  # one number (so that ``x = ...`` and number words apply)


# ----- number words (the generator's side: integers written out) -----------------------------------------

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def in_words(n: int, rng: random.Random | None = None) -> str:
    """``n`` (0 <= n < 10**6) in English words: 52 -> "fifty-two" (or "fifty two"), 105 -> "one hundred five"."""
    hyphen = "-" if rng is None or rng.random() < 0.7 else " "
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else hyphen + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        joiner = " and " if rng is not None and rng.random() < 0.3 else " "
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else joiner + in_words(rest, rng))
    rest = n % 1000
    return in_words(n // 1000, rng) + " thousand" + ("" if rest == 0 else " " + in_words(rest, rng))


# ----- golds -----------------------------------------------------------------------------------------------


def integer(rng: random.Random, low: int = 2, high: int = 400) -> Value:
    n = rng.randint(low, high)
    spellings = [str(n), f"{n}.0", f"{n}.00", f"\\text{{{n}}}", f"{{{n}}}", f"\\mathbf{{{n}}}"]
    if n >= 1000:
        spellings += [f"{n:,}", f"{n:,}".replace(",", "{,}"), f"{n:,}".replace(",", "\\,")]
    wrong = [str(n + 1), str(n - 1), str(n * 10), str(n + 10), str(-n), str(n // 2 if n > 3 else n + 2)]
    return Value("integer", str(n), tuple(spellings), tuple(w for w in wrong if w != str(n)))


def fraction(rng: random.Random) -> Value:
    p, q = sorted(rng.sample([1, 2, 3, 5, 7, 11, 13], 2))
    spellings = [f"\\frac{{{p}}}{{{q}}}", f"\\dfrac{{{p}}}{{{q}}}", f"{p}/{q}", f"\\frac{{{2 * p}}}{{{2 * q}}}",
                 f"\\tfrac{{{p}}}{{{q}}}"]  # fmt: skip
    if q in (2, 5):
        spellings.append(f"{p / q:g}")
    wrong = [f"\\frac{{{q}}}{{{p}}}", f"\\frac{{{p + 1}}}{{{q}}}", f"\\frac{{{p}}}{{{q + 1}}}", str(q), str(p), f"-\\frac{{{p}}}{{{q}}}"]
    return Value("fraction", f"\\frac{{{p}}}{{{q}}}", tuple(spellings), tuple(wrong))


def radical(rng: random.Random) -> Value:
    a, b = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7])
    spellings = [f"{a}\\sqrt{{{b}}}", f"{a}\\sqrt{b}", f"\\sqrt{{{a * a * b}}}", f"{a}√{b}", f"{a} \\sqrt{{{b}}}"]
    wrong = [f"{a + 1}\\sqrt{{{b}}}", f"{a}\\sqrt{{{b + 1 if b != 3 else 2}}}", f"\\sqrt{{{b}}}", str(a * b),
             f"{a}√{b + 1 if b != 3 else 2}", f"{a}\\sqrt{{{b}}}+1"]  # fmt: skip
    return Value("radical", f"{a}\\sqrt{{{b}}}", tuple(spellings), tuple(wrong))


def pi_multiple(rng: random.Random) -> Value:
    a = rng.randint(2, 12)
    spellings = [f"{a}\\pi", f"{a} \\pi", f"{a}π", f"\\frac{{{2 * a}\\pi}}{{2}}"]
    wrong = [f"{a + 1}\\pi", f"{a}", f"\\frac{{{a}\\pi}}{{2}}", f"{a}\\pi^2"]
    return Value("pi", f"{a}\\pi", tuple(spellings), tuple(wrong))


def expression(rng: random.Random) -> Value:
    a, b = rng.randint(2, 9), rng.randint(1, 9)
    spellings = [f"{a}x+{b}", f"{a}x + {b}", f"{b} + {a}x", f"{a}*x + {b}", f"{a} x+{b}"]
    wrong = [f"{a}x-{b}", f"{a + 1}x+{b}", f"{a}x+{b + 1}", f"{a}x^2+{b}", f"{b}x+{a}" if a != b else f"{a}x"]
    return Value("expression", f"{a}x+{b}", tuple(spellings), tuple(wrong), scalar=False)


def interval(rng: random.Random) -> Value:
    a = rng.randint(-9, 5)
    b = a + rng.randint(1, 9)
    left, right = rng.choice(["(", "["]), rng.choice([")", "]"])
    text = f"{left}{a}, {b}{right}"
    spellings = [text, f"\\left{left}{a}, {b}\\right{right}", f"{left}{a},{b}{right}"]
    other = {"(": "[", "[": "("}[left]
    wrong = [f"{other}{a}, {b}{right}", f"{left}{a}, {b + 1}{right}", f"{left}{a - 1}, {b}{right}",
             f"\\{{{a}, {b}\\}}", f"{left}{b}, {a}{right}"]  # fmt: skip
    return Value("interval", text, tuple(spellings), tuple(wrong), scalar=False)


def infinite_interval(rng: random.Random) -> Value:
    b = rng.randint(-9, 9)
    text = f"(-\\infty, {b})"
    spellings = [text, f"(−∞, {b})", f"(-∞, {b})", f"\\left(-\\infty, {b}\\right)", f"(-\\infty,{b})"]
    wrong = [f"(-\\infty, {b}]", f"(-\\infty, {b + 1})", f"({b}, \\infty)", f"(−∞, {b + 1})", f"({b}, ∞)"]
    return Value("interval", text, tuple(spellings), tuple(wrong), scalar=False)


def pair(rng: random.Random) -> Value:
    a, b = rng.sample(range(-9, 10), 2)
    text = f"({a}, {b})"
    spellings = [text, f"({a},{b})", f"\\left({a}, {b}\\right)"]
    wrong = [f"({b}, {a})", f"({a}, {b + 1})", f"\\{{{a}, {b}\\}}", f"({a + 1}, {b})", f"[{min(a, b)}, {max(a, b)}]"]
    return Value("pair", text, tuple(spellings), tuple(wrong), scalar=False)


def number_set(rng: random.Random) -> Value:
    a, b = sorted(rng.sample(range(-9, 10), 2))
    text = f"\\{{{a}, {b}\\}}"
    spellings = [text, f"\\{{{b}, {a}\\}}", f"\\{{{a},{b}\\}}", f"\\left\\{{{a}, {b}\\right\\}}"]
    wrong = [f"({a}, {b})", f"[{a}, {b}]", f"\\{{{a}, {b + 1}\\}}", f"\\{{{a}\\}}", f"\\{{{a}, {b}, {b + 1}\\}}"]
    return Value("set", text, tuple(spellings), tuple(wrong), scalar=False)


def roots(rng: random.Random) -> Value:
    a, b = sorted(rng.sample(range(-9, 10), 2))
    text = f"{a}, {b}"
    spellings = [text, f"{b}, {a}", f"{a},{b}", f"x = {a}, x = {b}"]
    wrong = [f"{a}", f"{b}", f"{a}, {b + 1}", f"{a}, {b}, {b + 2}", f"{-a}, {b}" if a else f"{a + 1}, {b}"]
    return Value("roots", text, tuple(spellings), tuple(wrong), scalar=False)


def word(rng: random.Random) -> Value:
    pairs = [("odd", "even"), ("even", "odd"), ("Evelyn", "Emily"), ("hyperbola", "parabola"), ("Tuesday", "Monday"),
             ("yes", "no"), ("never", "always"), ("circle", "ellipse")]  # fmt: skip
    right, wrong = rng.choice(pairs)
    spellings = [right, f"\\text{{{right}}}", f"\\textbf{{{right}}}", f"\\mathrm{{{right}}}", right.capitalize()]
    return Value("word", right, tuple(spellings), (wrong, f"\\text{{{wrong}}}", f"not {right}"), scalar=False)


def in_base(rng: random.Random) -> Value:
    base = rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 12, 16])
    n = rng.randint(base + 1, 2000)
    digits = _digits(n, base)
    text = f"{digits}_{{{base}}}" if base > 9 or rng.random() < 0.5 else f"{digits}_{base}"
    spellings = [f"{digits}_{{{base}}}", f"{digits}_{base}" if base < 10 else f"{digits}_{{{base}}}", f"{digits}_{{({base})}}"]
    other = rng.choice([b for b in (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20) if b != base and b > max(_digit_values(digits))])
    wrong = [f"{digits}_{{{other}}}", f"{_digits(n + 1, base)}_{{{base}}}", f"{digits}_{other}" if other < 10 else f"{digits}_{{{other}}}",
             f"{_digits(n, base)[:-1] or '1'}_{{{base}}}", str(n)]  # fmt: skip
    return Value("base", text, tuple(spellings), tuple(wrong), scalar=False)


def _digits(n: int, base: int) -> str:
    out = ""
    while n:
        out = "0123456789ABCDEF"[n % base] + out
        n //= base
    return out or "0"


def _digit_values(digits: str) -> list[int]:
    return ["0123456789ABCDEF".index(c) for c in digits]


GOLDS: dict[str, Callable[[random.Random], Value]] = {
    "integer": integer, "fraction": fraction, "radical": radical, "pi": pi_multiple, "expression": expression,
    "interval": interval, "infinite_interval": infinite_interval, "pair": pair, "set": number_set, "roots": roots,
    "word": word,
}  # fmt: skip
SCALARS = ("integer", "fraction", "radical", "pi")


def any_gold(rng: random.Random, shapes: tuple[str, ...] = tuple(GOLDS)) -> Value:
    return GOLDS[rng.choice(shapes)](rng)


# ----- reasoning filler ------------------------------------------------------------------------------------


def _reasoning(rng: random.Random, mention: str | None = None) -> str:
    """A few sentences of working with intermediate numbers (and ``mention``, a distractor value, among them)."""
    a, b = rng.randint(2, 60), rng.randint(2, 60)
    lines = [
        f"We start from the given conditions. Multiplying, ${a} \\times {b} = {a * b}$.",
        f"Let me set up the equation: adding {a} and {b} gives {a + b}.",
        f"First, note that ${a} + {b} = {a + b}$, and we subtract {min(a, b)} from it.",
        f"Step 1: simplify. We get {a * b} after multiplying {a} by {b}.",
    ]
    text = rng.choice(lines)
    if mention is not None:
        text += rng.choice([
            f" One of the intermediate values is ${mention}$.",
            f" At first I thought the answer was ${mention}$, but let me check.",
            f" A tempting guess is {mention}.",
            f"\n\nNote that ${mention}$ appears as a candidate.",
        ])  # fmt: skip
    return text + "\n\n"


# ----- the classes --------------------------------------------------------------------------------------------
# Each builder returns one case for a random gold; ``wrong`` cases must score 0, the others 1.


def hedge(rng: random.Random) -> Case:
    """Several values offered in the answer statement (a hedge): 0 unless every value offered is the gold."""
    gold = any_gold(rng)
    g, w = rng.choice(gold.spellings), rng.choice(gold.wrong)
    first, second = (g, w) if rng.random() < 0.5 else (w, g)
    templates = [
        "The answer is {a} or {b}.", "The answer is either {a} or {b}.", "The answer is ${a}$ or {b}.",
        "The answer is ${a}$ or ${b}$.", "So the final answer is $\\boxed{{{a}}}$ or $\\boxed{{{b}}}$.",
        "$\\boxed{{{a} \\text{{ or }} {b}}}$", "Final answer: {a} (or possibly {b}).", "The answer is {a}, or maybe {b}.",
        "The final answer is $\\boxed{{{a}}}$, or perhaps $\\boxed{{{b}}}$.", "<answer>{a} or {b}</answer>",
        "The answer is: ${a}$ or ${b}$", "Therefore, the answer is $\\boxed{{{a}}}$ or $\\boxed{{{b}}}$",
        "Thus the answer could be {a} or {b}.", "**Final Answer**: ${a}$ or ${b}$",
    ]  # fmt: skip
    if gold.scalar:
        templates += ["The answer is either $x = {a}$ or $x = {b}$.", "So $x = {a}$ or $x = {b}$.",
                      "The answer is either x = {a} or x = {b}."]  # fmt: skip
    text = _reasoning(rng) + rng.choice(templates).format(a=first, b=second)
    if rng.random() < 0.25:  # the same value twice is one answer
        g2 = rng.choice(gold.spellings)
        return Case("hedge", gold.latex, _reasoning(rng) + f"The answer is ${g}$, or equivalently ${g2}$.", True)
    return Case("hedge", gold.latex, text, False)


def base_subscript(rng: random.Random) -> Case:
    """A number in a base: its subscript is part of the value."""
    gold = in_base(rng)
    right = rng.random() < 0.4
    answer = rng.choice(gold.spellings if right else gold.wrong)
    template = rng.choice(["The answer is $\\boxed{{{a}}}$.", "$\\boxed{{{a}}}$", "So the number is ${a}$.",
                           "The final answer is ${a}$. I hope it is correct."])  # fmt: skip
    return Case("base", gold.latex, _reasoning(rng) + template.format(a=answer), right)


def words_final(rng: random.Random) -> Case:
    """A final answer in words, with a number earlier in the text: the words are the answer."""
    n = rng.randint(0, 999)
    right = rng.random() < 0.5
    stated = n if right else rng.choice([n + 1, n + 10, n * 2 + 1, max(0, n - 3) if n > 3 else n + 3])
    distractor = n if not right else rng.randint(1000, 2000)
    words = in_words(stated, rng)
    words = words.capitalize() if rng.random() < 0.2 else words
    ending = rng.choice([
        "Therefore, the answer is {w}.", "So the final answer is {w}.", "The answer is {w}.", "Answer: {w}.",
        "The answer is **{w}**.", "So, the answer is {w} apples.", "Hence the final answer is: {w}",
    ])  # fmt: skip
    text = f"One of the intermediate totals is {distractor}.\n" + ending.format(w=words)
    return Case("words_final", str(n), _reasoning(rng) + text, right)


def compound_gold(rng: random.Random) -> Case:
    """A gold that is not one value: none of its parts alone is the answer."""
    a, b, c = rng.sample(range(1, 12), 3)
    golds = [
        (f"({a}, {b}), ({c}, n) \\text{{ for any }} n \\ge 1", [str(c), str(a), f"({a}, {b})", "1", f"({c}, n)"]),
        (f"x = {a}, y = {b}", [str(a), str(b), f"x = {a}"]),
        (f"{a} \\text{{ if }} n \\text{{ is even}}, {b} \\text{{ otherwise}}", [str(a), str(b)]),
        (f"n = {a} \\text{{ or }} n = {b}", [str(a), str(b), f"n = {a}"]),
        (f"\\text{{all }} n \\ge {a}", [str(a), f"n = {a}"]),
        (f"({a}, {b}) \\text{{ and }} ({b}, {a})", [f"({a}, {b})", f"({b}, {a})", str(a)]),
        (f"{a} \\text{{ and }} {b}", [str(a), str(b)]),
        (f"k = {a} \\text{{ for }} m \\le {c}", [str(a), str(c)]),
    ]
    gold, parts = rng.choice(golds)
    if rng.random() < 0.25:
        return Case("compound_gold", gold, _reasoning(rng) + f"The answer is $\\boxed{{{gold}}}$.", True)
    part = rng.choice(parts)
    template = rng.choice(["$\\boxed{{{a}}}$", "The answer is ${a}$.", "So the answer is {a}.", "#### {a}"])
    return Case("compound_gold", gold, _reasoning(rng) + template.format(a=part), False)


def set_shape(rng: random.Random) -> Case:
    """Sets, intervals and ordered pairs are different shapes, whatever their numbers."""
    a, b = sorted(rng.sample(range(-9, 10), 2))
    shapes = {"set": f"\\{{{a}, {b}\\}}", "open": f"({a}, {b})", "closed": f"[{a}, {b}]", "half": f"[{a}, {b})"}
    gold_shape, answer_shape = rng.choice(list(shapes)), rng.choice(list(shapes))
    right = gold_shape == answer_shape
    answer = shapes[answer_shape]
    if right and gold_shape == "set" and rng.random() < 0.5:
        answer = f"\\{{{b}, {a}\\}}"
    template = rng.choice(["$\\boxed{{{a}}}$", "The answer is ${a}$.", "So the solution is $\\boxed{{{a}}}$."])
    return Case("set_shape", shapes[gold_shape], _reasoning(rng) + template.format(a=answer), right)


def or_duplicates(rng: random.Random) -> Case:
    """Boxes or spans joined by "or" are alternatives; a duplicate hides the second one."""
    a, b = sorted(rng.sample(range(-9, 10), 2))
    gold = f"{a}, {b}"
    wrong = [
        f"$\\boxed{{{a}, {b}}}$ or $\\boxed{{{b}}}$", f"$\\boxed{{{a}}}$ or $\\boxed{{{a}, {b}}}$",
        f"The solutions are ${a}, {b}$ or ${a}$.", f"$\\boxed{{{a}, {b}}}$ or $\\boxed{{{a}}}$",
        f"$\\boxed{{{b}}}$ or $\\boxed{{{a}}}$ or $\\boxed{{{a}, {b}}}$", f"The roots are ${a}$, ${b}$ or ${b + 1}$.",
    ]  # fmt: skip
    right = [f"$\\boxed{{{a}}}$ and $\\boxed{{{b}}}$", f"$\\boxed{{{a}, {b}}}$", f"The solutions are ${a}$ and ${b}$.",
             f"$\\boxed{{{b}, {a}}}$"]  # fmt: skip
    is_right = rng.random() < 0.3
    return Case("or_duplicates", gold, _reasoning(rng) + rng.choice(right if is_right else wrong), is_right)


def truncated(rng: random.Random) -> Case:
    """A completion cut off at the length limit: a label or number in its unfinished tail is no answer."""
    gold = rng.randint(1, 9)
    labels = [f"({gold}) Now, for the next part, we need to", f"{gold}. Next, we compute the", f"Case {gold}: Suppose that",
              f"Step {gold}: Now we", f"({gold}) For the second part, consider", f"Part ({gold}): We need to find the",
              f"\n\n{gold}) Now let us look at the", f"For $n = {gold}$, we have to check whether the"]  # fmt: skip
    text = _reasoning(rng) + "Now we handle the remaining parts.\n\n" + rng.choice(labels)
    return Case("truncated", str(gold), text, False)


def last_statement(rng: random.Random) -> Case:
    """A box, then a correction: the last statement is the answer."""
    gold = any_gold(rng, SCALARS)
    g, w = rng.choice(gold.spellings), rng.choice(gold.wrong)
    right = rng.random() < 0.4
    first, last = (w, g) if right else (g, w)
    corrections = ["Wait, I made an arithmetic error above. Fixing it, the correct answer is {b}.",
                   "Hmm, that is wrong. Rechecking, the answer is ${b}$.",
                   "But wait, we double counted. The final answer is $\\boxed{{{b}}}$.",
                   "Let me recheck: actually the answer is {b}."]  # fmt: skip
    text = _reasoning(rng) + f"$\\boxed{{{first}}}$ " + rng.choice(corrections).format(b=last)
    return Case("last_statement", gold.latex, text, right)


def vectors(rng: random.Random) -> Case:
    """A row vector is not a column vector, and a matrix is not its transpose."""
    a, b, c = rng.sample(range(-9, 10), 3)
    column = f"\\begin{{pmatrix}} {a} \\\\ {b} \\\\ {c} \\end{{pmatrix}}"
    row = f"\\begin{{pmatrix}} {a} & {b} & {c} \\end{{pmatrix}}"
    gold, answer = rng.choice([(column, row), (row, column)])
    right = rng.random() < 0.3
    answer = gold.replace(" ", "") if right else answer
    return Case("vectors", gold, _reasoning(rng) + f"The answer is $\\boxed{{{answer}}}$.", right)


def distractor(rng: random.Random) -> Case:
    """The gold beside a wrong final answer: only the final answer counts."""
    gold = any_gold(rng)
    w = rng.choice(gold.wrong)
    g = rng.choice(gold.spellings)
    ending = rng.choice(["The answer is ${a}$.", "$\\boxed{{{a}}}$", "#### {a}", "<answer>{a}</answer>",
                         "So the final answer is {a}.", "Therefore, we get ${a}$."])  # fmt: skip
    right = rng.random() < 0.3
    mention, final = (w, g) if right else (g, w)
    return Case("distractor", gold.latex, _reasoning(rng, mention) + ending.format(a=final), right)


def several_values(rng: random.Random) -> Case:
    """An answer sentence that states several values (one of them the gold) is not one answer."""
    gold = integer(rng)
    g, w = gold.latex, rng.choice(gold.wrong)
    templates = ["The answer is {w} apples and {g} oranges.", "The answer is $x = {w}$, giving $y = {g}$.",
                 "The answer is {w}; alternatively {g}.", "The answer is {w} hours and {g} minutes.",
                 "The answer is {w}, wait, no, {g}.", "The final answer is {w} for part (a) and {g} for part (b)."]
    if rng.random() < 0.3:  # a reason or the arithmetic that ends on the answer is not a second value
        right = rng.choice([f"The answer is {g} because there are {w} boxes.", f"The answer is {g}, since {w} is too many.",
                            f"The answer is {int(g) + 3} - 3 = {g}."])
        return Case("several_values", gold.latex, _reasoning(rng) + right, True)
    return Case("several_values", gold.latex, _reasoning(rng) + rng.choice(templates).format(w=w, g=g), False)


def bound(rng: random.Random) -> Case:
    """A bound is not a value: "at least 5", "more than 5", "n \\ge 5"."""
    gold = integer(rng)
    g = gold.latex
    templates = ["The answer is at least {g}.", "The answer is more than {g}.", "So the answer is less than {g}.",
                 "Therefore $n \\ge {g}$.", "Thus we need $x > {g}$.", "Hence it is at most {g}", "The answer is {g}?"]
    return Case("bound", g, _reasoning(rng) + rng.choice(templates).format(g=g), False)


def retraction(rng: random.Random) -> Case:
    """A stated answer taken back after it (and another value given) is no final answer."""
    gold = any_gold(rng, ("integer", "fraction"))
    g, w = rng.choice(gold.spellings), rng.choice(gold.wrong)
    later = rng.choice(["Wait, I made an error. It should be {w}.", "Wait, recheck: {w} is correct.",
                        "Actually, that is wrong; we get {w}.", "Oops, a mistake above: the total is {w}."])
    head = rng.choice(["$\\boxed{{{g}}}$", "<answer>{g}</answer>", "The answer is {g}."])
    return Case("retraction", gold.latex, _reasoning(rng) + head.format(g=g) + " " + later.format(w=w), False)


# Correct answers in notations a reader must accept (truth: 1), each beside a wrong twin (truth: 0).


def unicode_math(rng: random.Random) -> Case:
    a, b = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7])
    n = rng.randint(-9, 9)
    options = [(f"{a}\\sqrt{{{b}}}", f"{a}√{b}", f"{a}√{b + 1 if b != 3 else 2}"),
               (f"\\sqrt{{{b}}}", f"√{b}", f"√{b + 1 if b != 3 else 2}"),
               (f"(-\\infty, {n})", f"(−∞, {n})", f"(−∞, {n + 1})"),
               (f"({n}, \\infty)", f"({n}, ∞)", f"[{n}, ∞)"),
               (f"{a}\\pi", f"{a}π", f"{a + 1}π"),
               (f"\\frac{{\\sqrt{{{b}}}}}{{{a}}}", f"√{b}/{a}", f"√{b}/{a + 1}")]  # fmt: skip
    gold, right, wrong = rng.choice(options)
    is_right = rng.random() < 0.6
    template = rng.choice(["The answer is {a}.", "$\\boxed{{{a}}}$", "So the answer is: {a}", "Final answer: {a}"])
    return Case("unicode", gold, _reasoning(rng) + template.format(a=right if is_right else wrong), is_right)


def equation_rhs(rng: random.Random) -> Case:
    if rng.random() < 0.5:
        n = rng.randint(1000, 999_999)
        gold, right, wrong = str(n), f"{n:,}", f"{n + 1000:,}"
    else:
        w, p, q = rng.randint(1, 20), *rng.choice([(1, 2), (1, 3), (2, 3), (3, 4), (1, 4)])
        gold, right, wrong = f"{w}\\frac{{{p}}}{{{q}}}", f"{w} {p}/{q}", f"{w + 1} {p}/{q}"
    is_right = rng.random() < 0.6
    template = rng.choice(["So x = {a}", "x = {a}", "Therefore x = {a}.", "The answer is x = {a}.", "$\\boxed{{x = {a}}}$"])
    return Case("equation_rhs", gold, _reasoning(rng) + template.format(a=right if is_right else wrong), is_right)


def number_words(rng: random.Random) -> Case:
    n = rng.randint(0, 120)
    is_right = rng.random() < 0.6
    stated = n if is_right else n + rng.choice([1, 2, 10])
    template = rng.choice(["the answer is {w}", "The answer is {w}.", "Final answer: {w}", "So the answer is {w} dollars.",
                           "The final answer is {w}. I hope it is correct."])  # fmt: skip
    return Case("number_words", str(n), _reasoning(rng) + template.format(w=in_words(stated, rng)), is_right)


def word_span(rng: random.Random) -> Case:
    if rng.random() < 0.5:
        gold = word(rng)
        right, wrong = gold.latex, gold.wrong[0]
        gold_text = gold.latex
    else:
        n = rng.randint(16, 4095)
        gold_text, right, wrong = str(n), hex(n), hex(n + 1)
    is_right = rng.random() < 0.6
    template = rng.choice(["So the number is ${a}$.", "The result is ${a}$.", "Thus the value is $ {a} $."])
    return Case("word_span", gold_text, _reasoning(rng) + template.format(a=right if is_right else wrong), is_right)


def percent(rng: random.Random) -> Case:
    n = rng.randint(1, 99)
    is_right = rng.random() < 0.6
    stated = n if is_right else n + 1
    spelled = rng.choice([f"{stated}.0\\%", f"{stated}.00\\%", f"{stated}.0%", f"{stated}\\%"])
    template = rng.choice(["$\\boxed{{{a}}}$", "The answer is ${a}$.", "The final answer is {a}."])
    return Case("percent", str(n), _reasoning(rng) + template.format(a=spelled), is_right)


def answer_parenthetical(rng: random.Random) -> Case:
    n = rng.randint(2, 999)
    is_right = rng.random() < 0.6
    stated = n if is_right else n + rng.choice([1, 7])
    rambling = rng.choice([
        f" Note that the problem has {rng.randint(2, 9)} steps and I checked each of them twice.",
        f"\n\nSome more thoughts: if we used {rng.randint(2, 99)} instead, the total would change.",
        " That is all.",
    ])  # fmt: skip
    head = rng.choice(["The answer (arabic numerals) is {a}.", "The answer (in arabic numerals) is: {a}.",
                       "Answer (arabic numerals): {a}."])  # fmt: skip
    return Case("answer_parenthetical", str(n), _reasoning(rng) + head.format(a=stated) + rambling, is_right)


def scientific(rng: random.Random) -> Case:
    mantissa, exponent = rng.choice(["6.02", "1.5", "3.0", "2.25", "9.81"]), rng.randint(3, 30)
    gold = rng.choice([f"{mantissa}\\times10^{{{exponent}}}", f"{mantissa} \\times 10^{{{exponent}}}", f"{mantissa}e{exponent}"])
    is_right = rng.random() < 0.6
    e = exponent if is_right else exponent + 1
    answer = rng.choice([f"{mantissa}e{e}", f"{mantissa}E{e}", f"{mantissa} \\times 10^{{{e}}}", f"{mantissa}\\cdot 10^{{{e}}}"])
    template = rng.choice(["$\\boxed{{{a}}}$", "The answer is ${a}$.", "The answer is {a}."])
    return Case("scientific", gold, _reasoning(rng) + template.format(a=answer), is_right)


def respelled(rng: random.Random) -> Case:
    """The gold in any of its spellings, in any answer format (and a wrong value in the same formats)."""
    gold = any_gold(rng)
    is_right = rng.random() < 0.6
    answer = rng.choice(gold.spellings if is_right else gold.wrong)
    template = rng.choice(["The answer is ${a}$.", "$\\boxed{{{a}}}$", "The final answer is $\\boxed{{{a}}}$.",
                           "<answer>{a}</answer>", "Final Answer: The final answer is ${a}$. I hope it is correct.",
                           "Therefore, the answer is $\\boxed{{{a}}}$."])  # fmt: skip
    return Case("respelled", gold.latex, _reasoning(rng) + template.format(a=answer), is_right)


CLASSES: dict[str, Callable[[random.Random], Case]] = {
    "hedge": hedge, "base": base_subscript, "words_final": words_final, "compound_gold": compound_gold,
    "set_shape": set_shape, "or_duplicates": or_duplicates, "truncated": truncated, "last_statement": last_statement,
    "vectors": vectors, "distractor": distractor, "several_values": several_values, "bound": bound,
    "retraction": retraction, "unicode": unicode_math, "equation_rhs": equation_rhs,
    "number_words": number_words, "word_span": word_span, "percent": percent,
    "answer_parenthetical": answer_parenthetical, "scientific": scientific, "respelled": respelled,
}  # fmt: skip


def generate(per_class: int = 200, seed: int = 20, classes: tuple[str, ...] = tuple(CLASSES)) -> Iterator[Case]:
    """``per_class`` cases of each class, from ``seed`` (distinct (gold, completion) pairs only)."""
    rng = random.Random(seed)
    for name in classes:
        seen: set[tuple[str, str]] = set()
        for _ in range(per_class * 3):
            case = CLASSES[name](rng)
            if (case.gold, case.completion) in seen:
                continue
            seen.add((case.gold, case.completion))
            yield case
            if len(seen) == per_class:
                break
