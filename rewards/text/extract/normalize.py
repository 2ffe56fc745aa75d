"""Normalisation: how two extracted answers are made comparable (LaTeX wrappers, unicode math, numbers,
punctuation, case, whitespace).
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation

from ..canonical import canonical
from ..number_words import without_measure_word
from .answers import has_digit
from .numbers import _LATEX_WRAPPERS, number_in_words

__all__ = ["Normalizer", "canonical_number", "strip_latex", "unicode_to_latex"]

_ROOTS = {"√": "\\sqrt", "∛": "\\sqrt[3]", "∜": "\\sqrt[4]"}
_ROOT = re.compile(r"([√∛∜])\s*(\{[^{}]*\}|\([^()]*\)|\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z])")
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+")
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_UNICODE_SYMBOLS = str.maketrans({
    "∞": "\\infty ", "π": "\\pi ", "×": "\\times ", "·": "\\cdot ", "⋅": "\\cdot ", "÷": "\\div ", "≤": "\\le ",
    "≥": "\\ge ", "≠": "\\ne ", "±": "\\pm ", "∓": "\\mp ", "−": "-", "∪": "\\cup ", "∩": "\\cap ", "∈": "\\in ",
    "√": "\\sqrt ", "½": "\\frac{1}{2}", "⅓": "\\frac{1}{3}", "⅔": "\\frac{2}{3}", "¼": "\\frac{1}{4}",
    "¾": "\\frac{3}{4}", "θ": "\\theta ", "α": "\\alpha ", "β": "\\beta ",
})  # fmt: skip
_LATEX_NOISE = re.compile(r"\\left|\\right|\\[,;:! ]|\^\s*\{?\\circ\}?|\\displaystyle")
_THOUSANDS_MARK = re.compile(r"\{\s*,\s*\}|,\s*\\!\s*")  # 8{,}000 and 12,\!000 are 8,000 and 12,000
_NUMBER_LITERAL = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?")
_MAX_EXPONENT = 100
_EXACT = Context(prec=200)  # no rounding: canonical forms of distinct numbers must differ
# Kept by punctuation stripping: "-x" is not "x", "x-1" is not "x+1", "[0, 1)" is not "(0, 1)".
_OPERATORS = frozenset("+-*/^=<>()[]&|")  # | too: |-267| is not -267
_PUNCTUATION = frozenset(string.punctuation) - _OPERATORS


def _unpunctuated(char: str) -> str:
    """A space for a punctuation mark that is no operator, else the character."""
    return " " if char in _PUNCTUATION or (char not in _OPERATORS and unicodedata.category(char).startswith("P")) else char


_ASCII_PUNCTUATION = {code: _unpunctuated(chr(code)) for code in range(128)}  # the same, for str.translate
_LONE_BRACKETED = re.compile(r"[(\[]\s*([^()\[\],\s]+)\s*[)\]]")  # "(B)" is the option B
_PRIME = re.compile(r"(?<=[\w)])'+(?![A-Za-z])")  # E' and f'(x), not the apostrophe of "don't"
# A hyphen inside a word ("well-known", "COVID-19") or between spaced words ("Paris - France"), not a minus sign.
_TEXT_DASH = re.compile(r"(?<=[^\W\d_])-(?=[^\W_])|(?<=[^\W_])-(?=[^\W\d_])|(?<=\s)-(?=\s)")
_OPERATOR_SPACING = re.compile(r"\s*([+\-*/^=<>()\[\]])\s*")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Normalizer:
    """How answers are made comparable; every option on by default (see ``__call__``)."""

    case_sensitive: bool = False
    whitespace: bool = True
    punctuation: bool = True
    numbers: bool = True
    latex: bool = True

    def __hash__(self) -> int:  # remembered: a normaliser keys the memo of every answer read with it
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        return hash((self.case_sensitive, self.whitespace, self.punctuation, self.numbers, self.latex))

    def __call__(self, answer: str) -> str:
        """Strip LaTeX wrappers (unicode math read as LaTeX), canonicalise numbers (``1,000`` =
        ``8{,}000``-style = ``1000.0`` = ``1e3`` = ``one thousand``), else drop punctuation (not signs,
        operators, brackets, primes or the ``&`` and ``\\\\`` of a matrix: ``E'`` is not ``E``, a row is
        not a column), fold case and collapse whitespace."""
        answer = canonical(answer)
        text = unicode_to_latex(answer) if self.latex else answer
        text = unicodedata.normalize("NFKC", text).replace("\u2212", "-").strip()  # U+2212 minus sign
        text = text.replace("\\\\", " \u21b5 ")  # a matrix row break survives as a symbol of its own (not "\\ ")
        if self.latex:
            text = strip_latex(text)
        if self.numbers:
            bare = without_measure_word(text)  # "34 元", "42입니다"
            number = canonical_number(bare) or canonical_number(number_in_words(bare) or "")
            if number is not None:
                return number
        if self.punctuation:
            lone = _LONE_BRACKETED.fullmatch(text.rstrip(". "))
            text = lone.group(1) if lone else text
            text = _PRIME.sub(lambda primes: " prime" * len(primes.group()) + " ", text) if "'" in text else text
            text = _TEXT_DASH.sub(" ", text) if "-" in text else text
            text = text.translate(_ASCII_PUNCTUATION) if text.isascii() else "".join(map(_unpunctuated, text))
            text = _OPERATOR_SPACING.sub(r"\1", text)
        if not self.case_sensitive:
            text = text.casefold()
        if self.whitespace:
            text = _WHITESPACE.sub(" ", text).strip()
        return text


def unicode_to_latex(text: str) -> str:
    """Unicode math as LaTeX: ``2√3`` -> ``2\\sqrt{3}``, ``√(x+1)`` -> ``\\sqrt{x+1}``, ``(−∞, 3)`` ->
    ``(-\\infty, 3)``, ``3π`` -> ``3\\pi``, ``x²`` -> ``x^{2}``, ``½`` -> ``\\frac{1}{2}``, ``≤`` -> ``\\le``."""
    if text.isascii():
        return text
    text = _ROOT.sub(lambda root: _ROOTS[root.group(1)] + "{" + root.group(2).strip("{}()") + "}", text)
    text = _SUPERSCRIPTS.sub(lambda digits: "^{" + digits.group().translate(_SUPERSCRIPT_DIGITS) + "}", text)
    return text.translate(_UNICODE_SYMBOLS)


def strip_latex(text: str) -> str:
    """Remove math delimiters (``$``, ``\\(``, ``\\[``), ``\\text{}``-style wrappers and spacing commands."""
    text = text.strip()
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if len(text) >= len(left) + len(right) and text.startswith(left) and text.endswith(right):
            text = text[len(left) : len(text) - len(right)].strip()
    if "\\" in text or "{" in text:  # (every pattern below needs one)
        text = _LATEX_WRAPPERS.sub(r"\1", text)
        text = _THOUSANDS_MARK.sub(",", text)
        text = _LATEX_NOISE.sub("", text)
    return text.replace("\\%", "%").replace("\\$", "$").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")


def canonical_number(text: str) -> str | None:
    """``text`` as a canonical decimal string when it is one number (currency ``$`` and ``%`` ignored).

    ``"1,000"``, ``"1000.0"``, ``"1e3"`` and ``"$1000"`` all give ``"1000"``; ``"0.50"`` gives ``"0.5"``.
    Texts over 120 characters and numbers with exponents beyond +-100 are left alone (None).
    """
    text = text.strip().removeprefix("$").removesuffix("%").strip()
    if not text or len(text) > 120 or _NUMBER_LITERAL.fullmatch(text) is None or not has_digit(text):
        return None
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    if not value.is_finite() or abs(value.adjusted()) > _MAX_EXPONENT:
        return None
    value = value.normalize(_EXACT)
    if value == value.to_integral_value():
        return str(int(value))
    return format(value, "f")
