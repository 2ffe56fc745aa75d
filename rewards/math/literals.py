"""Math answers in the caller: normalise an extracted answer, decide plain literals exactly.

Finding the answer is ``rewards/extract.py``'s job; this is what only the math family needs. Everything
here is linear-time string work (regexes without nested quantifiers) plus exact rational arithmetic
on short literals, so it is safe to run in the trainer's process. Anything that needs a real parser
goes to the worker processes (``rewards/mathematics.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

# ----- normalisation ----------------------------------------------------------------------------------
_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])")
_DROP = (
    "\\displaystyle",
    "\\!",
    "\\,",
    "\\;",
    "\\:",
    "\\$",
    "$",
    "^\\circ",
    "^{\\circ}",
    "°",
)
_WRAPPER = re.compile(r"\\(?:text|textbf|mathrm|mbox|mathbf)\{([^{}]*)\}")
_UNIT = re.compile(r"(-?[\d.,/]*\d(?:\\%)?)\s*\\(?:text|mbox|mathrm)\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\frac(\d)(\d)")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_DECIMAL_COMMA = re.compile(r"-?\d+,\d+")
_SCIENTIFIC = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d{1,2}")  # "1e3", "2.5e-05": not Euler's e times 3
_TRAILING_WORDS = re.compile(r"(-?\d[\d.,/]*(?:\\%)?)((?:\s+[A-Za-z]+\.?)+)")  # unambiguous: no backtracking
_MATH_WORDS = {"pi", "sqrt", "infty", "frac", "cdot", "times", "mod"}
# Words after a number that change its value or hedge it: "5 or more", "2 million", "1 half" are not units.
_VALUE_WORDS = {
    "or", "not", "more", "less", "fewer", "than", "plus", "minus", "over", "divided", "squared", "cubed",
    "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion", "billions", "trillion",
    "dozen", "dozens", "half", "halves", "third", "thirds", "quarter", "quarters", "percent", "exp",
    "least", "most", "under", "above", "below", "nearly", "almost", "approximately", "roughly", "about",
    "minimum", "maximum",
}  # fmt: skip


def normalize(answer: str, *, decimal_comma: bool = False) -> str:
    """A canonical spelling of an extracted answer (wrappers, spacing, units, separators removed).

    ``decimal_comma``: read ``3,5`` as 3.5 (only when the reference is a single number; otherwise
    it is a list of two values).
    """
    s = answer.strip()
    s = s.replace("{,}", ",").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = _SIZING.sub("", s)
    for token in _DROP:
        s = s.replace(token, "")
    s = _FRAC_SHORT.sub(r"\\frac{\1}{\2}", s)
    s = s.replace("\\%", "%").replace("%", "\\%")
    s = " ".join(s.split())
    whole = _WRAPPER.fullmatch(s)
    if whole:
        s = whole.group(1).strip()
    unit = _UNIT.fullmatch(s)
    if unit:  # "5\text{ cm}" -> "5"; "5\text{ or more}" -> "5 or more" (the parser would drop it as a unit)
        words = unit.group(2).split()
        s = unit.group(1) if _is_unit(words) else " ".join([unit.group(1), *words])
    s = s.removeprefix("\\(").removesuffix("\\)").removeprefix("\\[").removesuffix("\\]").strip()
    s = s.rstrip(".").strip()  # a sentence's full stop
    if _THOUSANDS.fullmatch(s):
        s = s.replace(",", "")
    elif decimal_comma and _DECIMAL_COMMA.fullmatch(s):
        s = s.replace(",", ".")
    elif _SCIENTIFIC.fullmatch(s):
        s = format(Decimal(s), "f")
        s = s.rstrip("0").rstrip(".") if "." in s else s
    number_and_words = _TRAILING_WORDS.fullmatch(s)
    if number_and_words:
        if _is_unit(number_and_words.group(2).split()):
            s = number_and_words.group(1)
    return s


def _is_unit(words: list[str]) -> bool:
    """Whether the words after a number name its unit ("apples", "cm"), not math or a change of value."""
    words = [w.rstrip(".").lower() for w in words]
    return all(len(w) > 1 and w not in _MATH_WORDS and w not in _VALUE_WORDS for w in words)


# ----- the exact fast path ---------------------------------------------------------------------------
_SCALAR = re.compile(r"(-?)(?:(\d+)/(\d+)|\\frac\{(-?\d+)\}\{(-?\d+)\}|(\d+\.?\d*|\.\d+))(\\%)?")
_EQUATION = re.compile(r"([A-Za-z])\s*=\s*([^=]+)")
_TUPLE = re.compile(r"([(\[])([^()\[\]]*,[^()\[\]]*)([)\]])")
_MAX_LITERAL = 60  # longer literals go to the full path (and Python's int-from-string limits)
_MAX_FLOAT_DIGITS = 15  # the full path holds decimals as 15-digit floats: longer ones are its call


@dataclass(frozen=True)
class Scalar:
    """A number literal: its exact value, whether it was written with a decimal point, and ``\\%``."""

    value: Fraction
    decimal: bool
    percent: bool
    variable: str | None = None  # "x = 3" is the number 3 stated as an equation

    def readings(self) -> tuple[Fraction, ...]:
        """Values the full path accepts for it: ``50\\%`` counts as 50 and as 0.5."""
        return (self.value, self.value / 100) if self.percent else (self.value,)


@dataclass(frozen=True)
class Bracketed:
    """A bracketed list of number literals: a tuple, point or interval such as ``(1, 2]``."""

    opening: str
    items: tuple[Scalar, ...]
    closing: str

    def is_interval(self) -> bool:
        return len(self.items) == 2 and self.items[0].value < self.items[1].value


Literal = Scalar | Bracketed


def parse_literal(text: str) -> Literal | None:
    """``text`` as a plain number or bracketed list of numbers, or ``None`` for anything else."""
    if len(text) > _MAX_LITERAL:
        return None
    scalar = _scalar(text)
    if scalar is not None:
        return scalar
    equation = _EQUATION.fullmatch(text)
    if equation:
        scalar = _scalar(equation.group(2).strip())
        if scalar is None or scalar.percent:
            return None
        return Scalar(scalar.value, scalar.decimal, False, equation.group(1))
    match = _TUPLE.fullmatch(text)
    if not match:
        return None
    items = [_scalar(part.strip()) for part in match.group(2).split(",")]
    if any(item is None or item.percent for item in items):
        return None
    brackets = match.group(1) + match.group(3)
    if len(items) == 2 and items[0].value == items[1].value:  # type: ignore[union-attr]
        return None  # an empty interval: the full path's business
    if brackets != "()" and not (len(items) == 2 and items[0].value < items[1].value):  # type: ignore[union-attr]
        return None  # only tuples and proper intervals
    return Bracketed(match.group(1), tuple(items), match.group(3))  # type: ignore[arg-type]


def _scalar(text: str) -> Scalar | None:
    match = _SCALAR.fullmatch(text)
    if not match:
        return None
    sign, num, den, frac_num, frac_den, plain, percent = match.groups()
    if plain is not None:
        digits = plain.replace(".", "").lstrip("0")
        if "." in plain and len(digits) > _MAX_FLOAT_DIGITS:
            return None
        value = Fraction(plain)
    else:
        numerator, denominator = (num, den) if num is not None else (frac_num, frac_den)
        if int(denominator) == 0:
            return None
        value = Fraction(int(numerator), int(denominator))
    if percent and (sign or plain is None or "." in plain):  # the full path reads these its own way
        return None  # (-3%, 12.5%, 1/2%: is the last half a percent or 1/(2%)?): let it decide
    return Scalar(-value if sign else value, plain is not None and "." in plain, percent is not None)


def literal_verdict(gold: Literal, answer: Literal) -> bool | None:
    """Exact verdict for two literals, or ``None`` when only the full path can say.

    Decides only clear cases: equal values (any reading of a percentage), or values far apart
    compared to the full path's float tolerance. Near misses and shape changes are deferred.
    """
    if isinstance(gold, Scalar) and isinstance(answer, Scalar):
        if gold.variable and answer.variable and gold.variable != answer.variable:
            return None
        return _scalar_verdict(gold, answer)
    if isinstance(gold, Bracketed) and isinstance(answer, Bracketed) and len(gold.items) == len(answer.items):
        if (gold.opening, gold.closing) != (answer.opening, answer.closing):
            return False if gold.is_interval() and answer.is_interval() else None
        verdicts = [_scalar_verdict(g, a) for g, a in zip(gold.items, answer.items, strict=True)]
        return None if None in verdicts else all(verdicts)
    return None


def _scalar_verdict(gold: Scalar, answer: Scalar) -> bool | None:
    pairs = [(g, a) for g in gold.readings() for a in answer.readings()]
    if any(g == a for g, a in pairs):
        return True
    if any(abs(g - a) <= Fraction(1, 10**5) * max(1, abs(g), abs(a)) for g, a in pairs):
        return None
    return False
