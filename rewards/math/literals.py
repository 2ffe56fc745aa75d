"""Math answers in the caller: a canonical spelling of an extracted answer, and an exact reading of literals.

Finding the answer is ``rewards/text/extract/``'s job. Here an answer is rewritten into the LaTeX the parser
reads faithfully (brace-less ``\\frac12`` and ``\\sqrt3`` braced as TeX reads them, Python's ``**``,
``*`` and ``sqrt()`` as LaTeX, hex literals as numbers, primes kept as ``^{\\prime}`` instead of being
dropped, mixed numbers and thousands separators made explicit), and plain literals (numbers, fractions,
radicals and multiples of π, percentages, ``x = n``, tuples, intervals, sets) are read exactly with
rational arithmetic, so that most verdicts need no parser. Everything is linear-time string work on
short answers plus exact arithmetic, safe to run in the trainer's process.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ..text.extract import has_digit, is_unit_word, number_in_words, unicode_to_latex
from ..text.number_words import cjk_number, without_measure_word
from .latex import to_parseable_latex
from .units import unit_of  # noqa: F401 (read from here by majority_vote)

__all__ = [
    "Bracketed",
    "Literal",
    "NumberSet",
    "Scalar",
    "has_modulus",
    "literal_verdict",
    "magnitude_verdict",
    "normalize",
    "parse_literal",
]

# ----- normalisation ----------------------------------------------------------------------------------
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_THOUSANDS_MARK = re.compile(r"(?<=\d)\s*(?:\{\s*,\s*\}|,\s*\\!)\s*(?=\d)")  # 14{,}916 and 12,\!000
_ESCAPED_COMMAND = re.compile(
    r"(?<!\\)\\\\(?=(?:left|right|frac|dfrac|tfrac|sqrt|pi|boxed|text|cdot|times|infty)(?![A-Za-z]))"
)
_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])")
_INVISIBLE = re.compile(r"\\(?:color\{[^{}]*\}|phantom\{[^{}]*\})")
# Dropped: spacing commands, dollars, degree signs (never the second half of a "\\" line break).
_DROP = re.compile(r"(?<!\\)\\(?:displaystyle(?![A-Za-z])|[!,;:$])|\$|\^\s*\{?\\circ\}?|°")
_SPACE = re.compile(r"(?<!\\)\\(?:quad(?![A-Za-z])|qquad(?![A-Za-z])| )|~")  # ~ is TeX's unbreakable space
_PERCENT_WORD = re.compile(r"(?<=\d)\s*(?:percentage|percent|pct)\b")
_WRAPPER = re.compile(r"\\(?:text|textbf|textnormal|textrm|mathrm|mbox|mathbf)\{([^{}]*)\}")
_UNIT = re.compile(r"(.*?[\d}])\s*\\(?:text|textbf|textnormal|textrm|mbox|mathrm)\{([^{}]*)\}(?:\^\{?\d\}?)?")
_SCALE_LETTERS = frozenset("kKMBGT")  # thousand, million, billion, giga, tera: never units to drop
_MODULUS = re.compile(r"\s*(?:\\pmod\s*\{[^{}]*\}|\\pmod\s*\w+|\(\s*\\b?mod\s*\w+\s*\)|\\b?mod\s*\w+)\s*$")
# 2\frac{1}{2} is two and a half, also inside a product (2\frac{1}{2}\pi), where the parser would multiply
_MIXED_TEX = re.compile(r"(?<![\w.}^_\\])(\d+)\s*\\frac\{(\d+)\}\{(\d+)\}")
_MIXED_SLASH = re.compile(r"(-?\d+)\s+(\d+)/(\d+)")  # "3128 1/2" is 3128 and a half, as 918\frac{1}{2} is
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_ANGLE_OPEN = re.compile(r"\\langle(?![A-Za-z])|⟨|〈")
_ANGLE_CLOSE = re.compile(r"\\rangle(?![A-Za-z])|⟩|〉")
_COLUMN = re.compile(r"\\begin\{[pb]matrix\}([^{}]*(?:\{[^{}]*\}[^{}]*)*)\\end\{[pb]matrix\}")
_SWISS_MARK = re.compile(r"(?<=\d)['’](?=\d{3}(?!\d))")
_SWISS = re.compile(r"-?\d{1,3}(?:['’]\d{3})+(?:\.\d+)?")  # 7'610'539
_INDIAN = re.compile(r"-?\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?")  # 76,10,539 (lakh and crore groups)
_MIXED_AND = re.compile(r"(-?\d+)\s+and\s+(\d+)/(\d+)((?:\s+[A-Za-z]+\.?)*)")  # "8 and 1/4 cups"
# 0.\overline{3}, 0.1\overline{6}, 0.\dot{3}, 0.(3): a repeating decimal, read as the fraction it is
_REPEATING = re.compile(r"(-?)(\d*)\.(\d*)(?:\\overline\{(\d{1,9})\}|\\dot\{(\d)\}|\((\d{1,9})\))")
_SPACED_THOUSANDS = re.compile(r"-?\d{1,3}(?: \d{3})+(?:\.\d+)?")
_DECIMAL_COMMA = re.compile(r"-?\d+,\d+")
_SCIENTIFIC = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d{1,2}")  # "1e3", "2.5e-05": not Euler's e times 3
_WRAPPER_START = re.compile(r"\\(?:text|textbf|textnormal|textrm|mbox|mathrm)\{")
_NAMED_VALUE = re.compile(r"([A-Za-z](?:_\{?\w+\}?)?)\s*=\s*([^=<>]+)")  # "x = ...", "a_1 = ..."
_TRAILING_WORDS = re.compile(r"(-?\d[\d.,/]*(?:\\%)?)((?:\s+[^\W\d_]+\.?)+)")  # unambiguous: no backtracking


_TIMES_TEN = re.compile(r"(?<=\d)\s*(?:x|\*|·|×|\\cdot|\\times)\s*(?=10\s*\^)")  # 5.29 x 10^{-11}, 5.29·10^{-11}


def normalize(answer: str, *, decimal_comma: bool = False) -> str:
    """A canonical spelling of an extracted answer (wrappers, spacing, units, separators removed).

    ``decimal_comma``: read ``3,5`` as 3.5 (only when the other side is a single number; otherwise it
    is a list of two values). Short answers are remembered: a batch repeats its golds and most of its answers.
    """
    if len(answer) <= _REMEMBERED_CHARS:
        return _remembered_spelling(answer, decimal_comma)
    return _spelling(answer, decimal_comma)


_REMEMBERED_CHARS = 200  # longer answers are rare and would make the memo's memory unbounded in practice


@functools.lru_cache(maxsize=8192)
def _remembered_spelling(answer: str, decimal_comma: bool) -> str:
    return _spelling(answer, decimal_comma)


def _spelling(answer: str, decimal_comma: bool) -> str:
    """The canonical spelling itself (``normalize`` without the memo)."""
    # (each pattern is tried only where the characters it needs are: most answers hold no command at all)
    s = unicode_to_latex(answer)
    s = (_BOLD.sub(r"\1", s) if "**" in s else s).strip().strip("*").strip().replace("\u2212", "-")  # **12**
    if "\\" in s:
        s = _ESCAPED_COMMAND.sub(r"\\", s)  # "\\\\left(" written for "\\left(" (an escaping slip)
    if "{" in s or "\\" in s:
        s = _THOUSANDS_MARK.sub("", s).replace("{,}", ",")
    if "\\" in s:
        s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\cfrac", "\\frac")
        s = _SIZING.sub("", s)
    if "^" in s:
        s = _TIMES_TEN.sub(r" \\times ", s)
    if "\\" in s:
        s = _INVISIBLE.sub("", s)
    if "\\" in s or "$" in s or "°" in s:
        s = _DROP.sub("", s)
    if "\\" in s or "~" in s:
        s = _SPACE.sub(" ", s)
    if "\\" in s or not s.isascii():
        s = _ANGLE_OPEN.sub("(", _ANGLE_CLOSE.sub(")", s))  # \\langle a, b \\rangle is the vector (a, b)
    if "'" in s or "’" in s:
        s = _SWISS_MARK.sub("", s)  # 7'610'539: a digit group, never a prime
    s = to_parseable_latex(s)
    if "p" in s:
        s = _PERCENT_WORD.sub("%", s)
    s = s.replace("\\%", "%").replace("%", "\\%")
    s = " ".join(s.split())
    whole = _WRAPPER.fullmatch(s)
    if whole:
        s = whole.group(1).strip()
    unit = _UNIT.fullmatch(s)
    # "5\text{ cm}" -> "5"; "5\text{ or more}" -> "5 or more" (the parser would drop it as a unit); not the
    # last words of a longer text ("1 \text{ if } n \text{ is even}, 2 \text{ otherwise}")
    if unit and not _WRAPPER_START.search(unit.group(1)) and has_digit(unit.group(1)):
        words = unit.group(2).split()
        units = all(is_unit_word(word) or (len(word) == 1 and word.isalpha() and word not in _SCALE_LETTERS)
                    for word in words)  # \text{ m}, but never a scale: 25\text{k} is 25000
        s = unit.group(1) if units else " ".join([unit.group(1), *words])
    s = s.removeprefix("\\(").removesuffix("\\)").removeprefix("\\[").removesuffix("\\]").strip()
    column = _COLUMN.fullmatch(s)
    if column and "&" not in column.group(1):  # a column vector is the tuple of its entries, whichever side has it
        s = "(" + ", ".join(entry.strip() for entry in column.group(1).split("\\\\")) + ")"
    s = s.rstrip(".").strip()  # a sentence's full stop
    s = s[:-1].rstrip() if s.endswith("\\") and not s.endswith("\\\\") else s  # a stray backslash
    if "\\equiv" in s:  # "x \\equiv 3 \\pmod{5}" is x = 3
        s = _MODULUS.sub("", s).replace("\\equiv", "=")
    s = _residue(s)
    s = s.strip().removeprefix("=").removesuffix("=").strip()  # a dangling relation sign
    s = without_measure_word(s)  # "34 元", "\\text{866 个}", "13です"
    worded = cjk_number(s) or (number_in_words(s) if not has_digit(s) else None)
    if worded is not None:
        return worded.replace("%", "\\%")  # "fifty-two", "\\text{seventy six}", "九分之一", "3万", "百分之五十六"
    equation = _NAMED_VALUE.fullmatch(s)
    if equation:  # "x = 1,000", "x = 2 1/2": the value after "x =" is spelled like a value alone
        return f"{equation.group(1)} = {_number_spelling(equation.group(2), decimal_comma)}"
    return _number_spelling(s, decimal_comma)


def _repeating_fraction(sign: str, whole: str, fixed: str, *period: str | None) -> str:
    """``0.1\\overline{6}`` as the fraction it is (``\\frac{1}{6}``), exactly."""
    cycle = next(part for part in period if part)
    value = int(whole or 0) + Fraction(int(fixed or 0), 10 ** len(fixed)) + Fraction(
        int(cycle), 10 ** len(fixed) * (10 ** len(cycle) - 1)
    )
    value = -value if sign else value
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


_BINARY_MOD = re.compile(r"(-?\d{1,30})\s*\\?b?mod\s*\{?(\d{1,30})\}?")
_PAREN_MOD = re.compile(r"(-?\d{1,30})\s*(?:\\pmod\s*\{?(\d{1,30})\}?|\(\s*\\?mod\s*(\d{1,30})\s*\))")


def _residue(s: str) -> str:
    """``25 \\bmod 7`` is 4; ``4 \\pmod{7}`` is 4 (a residue already); ``103 \\pmod{102}`` stays as written (a
    residue class, which the checker tells from a number)."""
    binary = _BINARY_MOD.fullmatch(s)
    if binary and int(binary.group(2)):
        return str(int(binary.group(1)) % int(binary.group(2)))
    modulo = _PAREN_MOD.fullmatch(s)
    if modulo and 0 <= int(modulo.group(1)) < int(modulo.group(2) or modulo.group(3)):
        return modulo.group(1)
    return s


def _number_spelling(s: str, decimal_comma: bool) -> str:
    """Mixed numbers, decimal commas, thousands separators (also Swiss and Indian), repeating decimals and
    scientific notation made explicit. Beside a gold that is one number (``decimal_comma``), ``8 and 1/4`` is a
    mixed number, ``76,10,539`` one grouped number and ``0.(3)`` a repeating decimal, never a list or a product."""
    repeating = _REPEATING.fullmatch(s)
    if repeating and (decimal_comma or repeating.group(6) is None):
        return _repeating_fraction(*repeating.groups())
    mixed_and = _MIXED_AND.fullmatch(s) if decimal_comma else None
    if mixed_and and all(map(is_unit_word, mixed_and.group(4).split())):
        s = " ".join(mixed_and.groups()[:1]) + f" {mixed_and.group(2)}/{mixed_and.group(3)}"
    if _SWISS.fullmatch(s) or (decimal_comma and _INDIAN.fullmatch(s)):
        return s.replace("'", "").replace("’", "").replace(",", "")
    mixed = _MIXED_SLASH.fullmatch(s)
    if mixed:
        s = f"{mixed.group(1)}\\frac{{{mixed.group(2)}}}{{{mixed.group(3)}}}"
    if not _MIXED_TEX.fullmatch(s.lstrip("-")):  # alone, the parser reads it as mixed already (and so do we)
        s = _MIXED_TEX.sub(r"(\1+\\frac{\2}{\3})", s)
    if s.startswith(("0,", "-0,")) and _DECIMAL_COMMA.fullmatch(s):  # "0,111" cannot be thousands: a decimal
        s = s.replace(",", ".") if decimal_comma else s  # comma beside a number, a list ("0,9") beside a list
    elif _THOUSANDS.fullmatch(s):
        s = s.replace(",", "")
    elif _SPACED_THOUSANDS.fullmatch(s):
        s = s.replace(" ", "")
    elif decimal_comma and _DECIMAL_COMMA.fullmatch(s):
        s = s.replace(",", ".")
    elif _SCIENTIFIC.fullmatch(s):
        s = format(Decimal(s), "f")
        s = s.rstrip("0").rstrip(".") if "." in s else s
    number_and_words = _TRAILING_WORDS.fullmatch(s)
    if number_and_words and all(map(is_unit_word, number_and_words.group(2).split())):
        s = number_and_words.group(1)
    return s


_MODULO = re.compile(r"\\[bp]?mod(?![A-Za-z])|(?<![A-Za-z\\])mod(?![A-Za-z])")


def has_modulus(text: str) -> bool:
    """Whether an answer is taken modulo something (``25 \\bmod 7``, ``103 \\pmod{102}``): a residue, not its number."""
    return _MODULO.search(text) is not None


# ----- the exact fast path ---------------------------------------------------------------------------
_EQUATION = re.compile(r"([A-Za-z])\s*=\s*([^=]+)")
_BRACKETED = re.compile(r"([(\[])([^()\[\]]*,[^()\[\]]*)([)\]])")
_SET = re.compile(r"\\\{([^{}]*)\\\}")
_LATEX_TOKEN = re.compile(r"\s*(\\frac|\\sqrt|\\pi|\\cdot|\\times|\\infty|\d+\.\d*|\.\d+|\d+|[-+{}/^])")
_MAX_POWER_DIGITS = 120  # 6.02 \times 10^{23} is read exactly; 10^{500} is left to the full path
_MAX_LITERAL = 60  # longer literals go to the full path (and Python's int-from-string limits)
_MAX_FLOAT_DIGITS = 15  # the full path holds decimals as 15-digit floats: longer ones are its call
_MAX_RADICAND = 10**9


@dataclass(frozen=True)
class Scalar:
    """A number literal ``value * sqrt(radicand) * pi**pi_power`` (radicand square-free), exactly.

    ``decimal``: written with a decimal point; ``percent``: written with ``\\%`` (then read both ways,
    as Math-Verify does); ``variable``: stated as an equation (``x = 3``).
    """

    value: Fraction
    decimal: bool
    percent: bool
    variable: str | None = None
    radicand: int = 1
    pi_power: int = 0

    @property
    def rational(self) -> bool:
        return self.radicand == 1 and self.pi_power == 0

    def readings(self) -> tuple[float | Fraction, ...]:
        """Values the full path accepts for it: ``50\\%`` counts as 50 and as 0.5."""
        value = self.value if self.rational else float(self.value) * math.sqrt(self.radicand) * math.pi**self.pi_power
        return (value, value / 100) if self.percent else (value,)

    def key(self) -> tuple[Fraction, int, int]:
        return (self.value, self.radicand if self.value else 1, self.pi_power if self.value else 0)


@dataclass(frozen=True)
class Bracketed:
    """A bracketed list of number literals: a tuple, point or interval such as ``(1, 2]`` or ``(2, \\infty)``."""

    opening: str
    items: tuple[Scalar | float, ...]  # float: an infinite endpoint
    closing: str

    def is_interval(self) -> bool:
        return len(self.items) == 2 and _position(self.items[0]) < _position(self.items[1])


@dataclass(frozen=True)
class NumberSet:
    """``\\{a, b, ...\\}``: a set of number literals (order and repetition do not matter)."""

    items: tuple[Scalar, ...]


Literal = Scalar | Bracketed | NumberSet


def _position(item: Scalar | float) -> float:
    return item if isinstance(item, float) else float(item.readings()[0])


def parse_literal(text: str) -> Literal | None:
    """``text`` as a plain number, a bracketed list or a set of numbers, or ``None`` for anything else."""
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
        return Scalar(scalar.value, scalar.decimal, False, equation.group(1), scalar.radicand, scalar.pi_power)
    number_set = _SET.fullmatch(text)
    if number_set:
        items = [_scalar(part.strip()) for part in number_set.group(1).split(",")]
        if any(item is None or item.percent for item in items):
            return None
        return NumberSet(tuple(items))  # type: ignore[arg-type]
    return _bracketed(text)


def _bracketed(text: str) -> Bracketed | None:
    match = _BRACKETED.fullmatch(text)
    if not match:
        return None
    parts = [part.strip() for part in match.group(2).split(",")]
    items: list[Scalar | float] = []
    for i, part in enumerate(parts):
        if part in ("\\infty", "+\\infty", "-\\infty"):  # only as the open end of an interval
            if len(parts) != 2 or (i == 0) != part.startswith("-") or (match.group(1), match.group(3))[i] in "[]":
                return None
            items.append(-math.inf if i == 0 else math.inf)
            continue
        item = _scalar(part)
        if item is None or item.percent:
            return None
        items.append(item)
    bracketed = Bracketed(match.group(1), tuple(items), match.group(3))
    if len(items) == 2 and _position(items[0]) == _position(items[1]):
        return None  # an empty interval (or a point with equal coordinates): the full path's business
    if match.group(1) + match.group(3) != "()" and not bracketed.is_interval():
        return None  # only tuples and proper intervals
    return bracketed


def _scalar(text: str) -> Scalar | None:
    """A number literal: integer, decimal, ``a/b``, ``\\frac``, mixed number, ``\\sqrt`` of an integer, π."""
    percent = text.endswith("\\%")
    body = text.removesuffix("\\%").strip()
    tokens = _tokens(body)
    if tokens is None:
        return None
    parser = _Parser(tokens)
    number = parser.value()
    if number is None or not parser.done():
        return None
    value, radicand, pi_power, decimal = number
    if percent and not (len(tokens) == 1 and tokens[0].replace(".", "", 1).isdigit()):
        return None  # the full path reads these its own way (is 1/2% half a percent or 1/(2%)?): let it decide
    return Scalar(value, decimal, percent, None, radicand, pi_power)


def _tokens(text: str) -> list[str] | None:
    tokens, position, end = [], 0, len(text.rstrip())
    while position < end:
        match = _LATEX_TOKEN.match(text, position)
        if match is None:
            return None
        tokens.append(match.group(1))
        position = match.end()
    return tokens or None


class _Parser:
    """Recursive descent over the tokens of a number literal; ``None`` for anything outside the grammar.

    value := ['-'] product ['/' product] ; product := factor+ (optionally joined by \\cdot or \\times) ;
    factor := number | \\pi | \\sqrt{integer} | \\frac{value}{value} | {value}, where an integer right
    before ``\\frac{integer}{integer}`` makes a mixed number (``918\\frac{1}{2}`` is 918.5, as Math-Verify reads it).
    """

    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self.i = 0

    def done(self) -> bool:
        return self.i == len(self.tokens)

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None  # past the end after a deferral

    def take(self, expected: str | None = None) -> str | None:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            return None
        self.i += 1
        return token

    def value(self) -> tuple[Fraction, int, int, bool] | None:
        negative = self.take("-") is not None
        top = self.product()
        if top is None:
            return None
        if self.take("/") is not None:
            bottom = self.product()
            top = None if bottom is None else _divide(top, bottom)
        if top is None:
            return None
        return (-top[0] if negative else top[0], *top[1:])

    def product(self) -> tuple[Fraction, int, int, bool] | None:
        result = None
        while self.peek() not in (None, "/", "}", "-", "+"):
            if result is not None and self.peek() in ("\\cdot", "\\times"):
                self.take()
            factor = self.mixed_number() if result is None else None
            factor = factor or self.factor()
            if factor is None:
                return None
            result = factor if result is None else _multiply(result, factor)
        return result

    def mixed_number(self) -> tuple[Fraction, int, int, bool] | None:
        """``918\\frac{1}{2}`` alone is 918.5; followed by more (``2\\frac{1}{2}\\pi``) Math-Verify reads a product."""
        window = self.tokens[self.i : self.i + 8]
        shape = [token if not token.isdigit() else "n" for token in window]
        if shape != ["n", "\\frac", "{", "n", "}", "{", "n", "}"] or int(window[6]) == 0:
            return None
        if self.i + 8 < len(self.tokens) and self.tokens[self.i + 8] != "}":
            self.i = len(self.tokens) + 1  # neither reading is certain: the literal is left to the full path
            return None
        self.i += 8
        return (int(window[0]) + Fraction(int(window[3]), int(window[6])), 1, 0, False)

    def factor(self) -> tuple[Fraction, int, int, bool] | None:
        token = self.take()
        if token is None:
            return None
        if token[0].isdigit() or token[0] == ".":
            digits = token.replace(".", "").lstrip("0")
            if "." in token and len(digits) > _MAX_FLOAT_DIGITS:
                return None
            return self.power((Fraction(token), 1, 0, "." in token))
        if token == "\\pi":
            return (Fraction(1), 1, 1, False)
        if token == "\\sqrt":
            if self.take("{") is None:
                return None
            radicand = self.take()
            if radicand is None or not radicand.isdigit() or int(radicand) > _MAX_RADICAND or self.take("}") is None:
                return None
            return _root(int(radicand))
        if token == "\\frac":
            top = self.group()
            bottom = self.group() if top is not None else None
            return None if bottom is None else _divide(top, bottom)  # type: ignore[arg-type]
        if token == "{":
            inner = self.value()
            return inner if inner is not None and self.take("}") is not None else None
        return None

    def power(self, base: tuple[Fraction, int, int, bool]) -> tuple[Fraction, int, int, bool] | None:
        """``10^{23}``, ``2^{-3}``, ``3^2``: a number to an integer power (an unbraced exponent is one digit,
        as TeX reads it; anything else is left to the full path)."""
        if self.take("^") is None:
            return base
        if self.peek() == "{":
            exponent = self.group()
        else:
            token = self.take()
            exponent = (Fraction(token), 1, 0, False) if token is not None and len(token) == 1 and token.isdigit() else None
        if exponent is None or exponent[1] != 1 or exponent[2] != 0 or exponent[0].denominator != 1:
            return None  # a power of a root, of pi, or a fractional power: the full path's
        power, value = int(exponent[0]), base[0]
        digits = max(len(str(abs(value.numerator))), len(str(value.denominator)))
        if (value == 0 and power < 0) or abs(power) * digits > _MAX_POWER_DIGITS:
            return None
        return (value**power, 1, 0, base[3])

    def group(self) -> tuple[Fraction, int, int, bool] | None:
        if self.take("{") is None:
            return None
        inner = self.value()
        return inner if inner is not None and self.take("}") is not None else None


def _root(n: int) -> tuple[Fraction, int, int, bool]:
    """``sqrt(n)`` as ``outside * sqrt(square-free inside)``."""
    outside, inside, k = 1, n, 2
    while k * k <= inside:
        while inside % (k * k) == 0:
            inside //= k * k
            outside *= k
        k += 1
    return (Fraction(outside), inside if n else 1, 0, False)


def _multiply(a: tuple[Fraction, int, int, bool], b: tuple[Fraction, int, int, bool]) -> tuple[Fraction, int, int, bool]:
    coefficient, radicand, _, _ = _root(a[1] * b[1])
    return (a[0] * b[0] * coefficient, radicand, a[2] + b[2], a[3] or b[3])


def _divide(
    top: tuple[Fraction, int, int, bool], bottom: tuple[Fraction, int, int, bool]
) -> tuple[Fraction, int, int, bool] | None:
    if bottom[0] == 0:
        return None
    # 1 / (c sqrt(d) pi^k) = sqrt(d) / (c d) * pi^-k
    inverse = (1 / (bottom[0] * bottom[1]), bottom[1], -bottom[2], bottom[3])
    return _multiply(top, inverse)


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
        verdicts = [_item_verdict(g, a) for g, a in zip(gold.items, answer.items, strict=True)]
        return None if None in verdicts else all(verdicts)
    if isinstance(gold, NumberSet) and isinstance(answer, NumberSet):
        return _set_verdict(gold.items, answer.items)
    return None


def _item_verdict(gold: Scalar | float, answer: Scalar | float) -> bool | None:
    if isinstance(gold, float) or isinstance(answer, float):
        return gold == answer
    return _scalar_verdict(gold, answer)


def _set_verdict(gold: tuple[Scalar, ...], answer: tuple[Scalar, ...]) -> bool | None:
    """Equal sets when every item of each has an equal item in the other; unequal when one has an item
    far from every item of the other; else deferred."""
    matches = {}
    for side, other in ((gold, answer), (answer, gold)):
        for item in side:
            verdicts = [_scalar_verdict(item, candidate) for candidate in other]
            matches[id(item)] = True if True in verdicts else (None if None in verdicts else False)
    if all(v is True for v in matches.values()):
        return True
    return False if False in matches.values() else None


_TINY = Fraction(1, 1000)  # below this, the parser's rounding to 6 decimals cannot tell 1.6e-19 from 1.6e-18 or from 0
_STATED_DECIMAL = re.compile(r"-?(\d+(?:\.\d+)?)(?:\s*(?:\\times|\\cdot)\s*10\^\{?-?\d+\}?)?")


def magnitude_verdict(gold_text: str, gold: Literal, answer: Literal) -> bool | None:
    """The verdict on two small numbers (below 10^-3) that no rounding to a fixed number of decimals can give:
    equal when the answer lies within half a unit of the last digit the gold states (``1.6 \\times 10^{-19}``
    accepts ``1.602 \\times 10^{-19}``, never ``1.6 \\times 10^{-18}`` or ``0``), exactly equal for a gold that
    states no decimal precision (a fraction); None for anything else (the exact path or the parser decides)."""
    if not (isinstance(gold, Scalar) and isinstance(answer, Scalar)) or not (gold.rational and answer.rational):
        return None
    if gold.percent or answer.percent or gold.variable != answer.variable:
        return None
    g, a = gold.value, answer.value
    if max(abs(g), abs(a)) >= _TINY:
        return None
    if g == a:
        return True
    stated = _STATED_DECIMAL.fullmatch(gold_text.strip())
    if stated is None or g == 0:
        return False
    digits = len(stated.group(1).replace(".", "").lstrip("0")) or 1
    unit = Fraction(10) ** (math.floor(math.log10(abs(float(g)))) - digits + 1)
    return abs(a - g) <= unit / 2


def _scalar_verdict(gold: Scalar, answer: Scalar) -> bool | None:
    if not (gold.rational and answer.rational) and not (gold.percent or answer.percent) and gold.key() == answer.key():
        return True
    if gold.percent and answer.percent:  # both in percent: 0.35% is not 35%, whatever each reads as alone
        pairs = [(gold.readings()[0], answer.readings()[0])]
    else:
        pairs = [(g, a) for g in gold.readings() for a in answer.readings()]
    if gold.rational and answer.rational and any(g == a for g, a in pairs):
        return True
    if any(abs(g - a) <= 1e-5 * max(1, abs(g), abs(a)) for g, a in pairs):
        return None
    return False
