"""Answers read as values exactly: a number (rational, or a rational times a square root and a power of π), a
quantity (a number and its unit, via pint), or a list of values (a tuple, an interval, a set, the solutions
``4, -4``), so that two spellings of one value compare equal and nothing else does.

Numbers are read by the math family's literal reader (``rewards/math/literals.py``: grouped digits, Swiss and
Indian groups, decimal commas beside a one-number gold, scientific notation and superscript exponents, repeating
decimals, mixed numbers, CJK numerals and number words) into exact fractions: ``1.6 \\times 10^{-19}`` is
``8/5 * 10^-19`` and never equals ``1.6e-18`` or ``0``. Quantities are converted exactly by pint (``3180 min`` is
``53 h``; ``5 ms`` is no ``5 s``). No rounding, no tolerance, no parser: what cannot be read this way is
compared as a normalised string by the caller. Every step is string work on the short extracted answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import NamedTuple

from ..math.literals import Scalar, normalize, parse_literal
from ..math.units import convert, quantity
from ..text.extract import bracket_depths, has_digit

__all__ = ["Items", "Measured", "Value", "has_words", "read_value", "same_value"]

_MAX_ITEMS = 64  # a longer list is compared as a string
_MAX_DEPTH = 3  # (1, (2, (3, 4))): deeper nesting is compared as a string
_NAMED = re.compile(r"([A-Za-z](?:_\{?\w+\}?)?)\s*=\s*(.+)", re.DOTALL)  # "x = 8 + \sqrt{10}"
_AND = re.compile(r"\s+(?:and|\\text\{\s*and\s*\})\s+|\s*;\s*")  # "5 and 20", "5; 20": two values of a list
# Arithmetic rather than one number (an exact matcher reads spellings of a value, it does not compute): numbers
# side by side (``7~9``, ``{7}{9}``), a product or a power other than scientific notation's ``\times 10^{k}``.
_ARITHMETIC = re.compile(
    r"\d\s+[\d{.]|^-?\{|(?:\\cdot|\\times|\*)(?!\s*10\s*\^)|(?<![\d.])(?!10\s*\^)\d+(?:\.\d+)?\s*\^|\}\s*\^"
)
_COMMAND = re.compile(r"\\[A-Za-z]+")


class Measured(NamedTuple):
    """A quantity: an exact number and pint's canonical name of its unit (``meter``, ``kilometer / hour``)."""

    value: Fraction
    unit: str


class Items(NamedTuple):
    """A list of values: ``brackets`` ``()`` (a tuple or open interval), ``[]``, ``(]``, ``{}`` (a set), or ``""``
    (an unbracketed list of solutions such as ``4, -4``: order does not matter, as in a set)."""

    brackets: str
    values: tuple[Value, ...]

    @property
    def ordered(self) -> bool:
        return self.brackets not in ("", "{}")


Value = Scalar | Measured | Items | str  # str: a normalised string (what no exact reading covers)


def read_value(answer: str, text: Callable[[str], str], *, one_number: bool, as_list: bool, depth: int = 0) -> Value:
    """``answer`` read exactly, else as the string ``text`` normalises it to. ``one_number``: the other side is one
    number (``3,5`` is then 3.5, ``76,10,539`` one grouped number, ``0.(3)`` a repeating decimal); ``as_list``: the
    other side is an unbracketed list (``5, 20``, ``5 and 20``: the answer's top-level commas and "and" split it)."""
    answer = answer.strip().strip("$").strip()
    measured = _measured(answer)
    if measured is not None:
        return measured
    normal = normalize(answer, decimal_comma=one_number)
    literal = parse_literal(normal)
    if isinstance(literal, Scalar) and not (literal.variable and as_list) and not _ARITHMETIC.search(normal):
        return literal
    if depth < _MAX_DEPTH:
        items = _items(normal, text, depth) or (_unbracketed(normal, text, depth) if as_list else None)
        if items is not None:
            return items
    return text(answer)


def has_words(answer: str) -> bool:
    """Whether an answer holds words besides LaTeX commands and a variable it names (``120\\text{ rad}``, ``5
    apples``): a number read from it is no bare number (its words may be a unit the reader dropped)."""
    body = _NAMED.sub(r"\2", answer.strip().strip("$"), count=1)
    return any(char.isalpha() for char in _COMMAND.sub(" ", body))


def same_value(gold: Value, answer: Value) -> bool:
    """Whether two values read by :func:`read_value` are one value, exactly (a string only equals a string)."""
    if isinstance(gold, str) or isinstance(answer, str):
        return isinstance(gold, str) and isinstance(answer, str) and gold == answer
    if isinstance(gold, Scalar) and isinstance(answer, Scalar):
        return (not (gold.variable and answer.variable) or gold.variable == answer.variable) and gold.key() == answer.key()
    if isinstance(gold, Measured) or isinstance(answer, Measured):
        return _same_quantity(gold, answer)
    if isinstance(gold, Items) and isinstance(answer, Items):
        if len(gold.values) != len(answer.values) or (gold.brackets != answer.brackets and (gold.ordered or answer.ordered)):
            return False  # a set is its solutions listed in any order; a tuple, an interval, a matrix are not
        if gold.ordered:
            return all(same_value(g, a) for g, a in zip(gold.values, answer.values, strict=True))
        return _same_multiset(gold.values, answer.values)
    return False


def _same_quantity(gold: Scalar | Measured | Items, answer: Scalar | Measured | Items) -> bool:
    """A quantity equals the same quantity in any unit of its kind (converted exactly), and a bare number equals
    a quantity with that number: the unit the other side does not state (``23`` for ``23\\,\\text{m}``)."""
    if isinstance(gold, Items) or isinstance(answer, Items):
        return False
    if isinstance(gold, Measured) and isinstance(answer, Measured):
        return convert(answer.value, answer.unit, gold.unit) == gold.value
    number, measured = (gold, answer) if isinstance(gold, Scalar) else (answer, gold)
    assert isinstance(number, Scalar) and isinstance(measured, Measured)
    return number.rational and not number.percent and number.value == measured.value


def _same_multiset(gold: tuple[Value, ...], answer: tuple[Value, ...]) -> bool:
    """Equal as multisets: each answer value matched to a distinct equal gold value."""
    if all(isinstance(value, Scalar) for value in gold + answer):  # the usual case, in linear time
        return Counter(_scalar_key(v) for v in gold) == Counter(_scalar_key(v) for v in answer)  # type: ignore[arg-type]
    left = list(gold)
    for value in answer:
        match = next((i for i, candidate in enumerate(left) if same_value(candidate, value)), None)
        if match is None:
            return False
        left.pop(match)
    return True


def _scalar_key(value: Scalar) -> tuple:
    return value.key()  # a variable name does not change the value of a solution in a list ("x = 4 or x = -4")


def _measured(answer: str) -> Measured | None:
    found = quantity(answer) if has_digit(answer) else None
    if found is None:
        return None
    number = parse_literal(normalize(found.number))
    if not isinstance(number, Scalar) or not number.rational or number.percent:
        return None
    return Measured(number.value, found.unit)


def _items(normal: str, text: Callable[[str], str], depth: int) -> Items | None:
    """``(1, 2)``, ``[0, 1)``, ``\\{1, 2\\}``: a bracketed list whose brackets enclose the whole answer."""
    opening = "\\{" if normal.startswith("\\{") else normal[:1]
    closing = "\\}" if normal.endswith("\\}") else normal[-1:]
    if opening == "\\{" and closing != "\\}" or opening not in ("(", "[", "\\{") or closing not in (")", "]", "\\}"):
        return None
    if (opening == "\\{") != (closing == "\\}"):
        return None
    inner = normal[len(opening) : len(normal) - len(closing)]
    depths = bracket_depths(inner)
    if any(d < 0 for d in depths) or (depths and depths[-1] + _step(inner[-1]) != 0):
        return None  # "(1)(2)": the first bracket closes before the end
    pieces = _split(inner, ",")
    if pieces is None or len(pieces) < 2 and opening != "\\{":
        return None
    values = tuple(read_value(piece, text, one_number=False, as_list=False, depth=depth + 1) for piece in pieces)
    brackets = "{}" if opening == "\\{" else opening + closing
    return Items(brackets, values)


def _unbracketed(normal: str, text: Callable[[str], str], depth: int) -> Items | None:
    """``5, 20``, ``5 and 20``, ``x = 7, x = -7``: the values of an unbracketed list (a variable named before each
    is dropped when all name the same one: the solutions of one equation)."""
    pieces = _split(normal, ",")
    if pieces is None or len(pieces) < 2:
        depths = bracket_depths(normal)
        cuts = list(_AND.finditer(normal))
        if not cuts or any(depths[cut.start()] for cut in cuts) or len(cuts) > _MAX_ITEMS:
            return None
        pieces = _AND.split(normal)
    named = [_NAMED.fullmatch(piece) for piece in pieces]
    if all(named) and len({match.group(1) for match in named}) == 1:  # type: ignore[union-attr]
        pieces = [match.group(2) for match in named]  # type: ignore[union-attr]
    values = tuple(read_value(piece, text, one_number=False, as_list=False, depth=depth + 1) for piece in pieces)
    return Items("", values)


def _split(inner: str, separator: str) -> list[str] | None:
    """``inner`` cut at each ``separator`` outside brackets (None past :data:`_MAX_ITEMS` pieces)."""
    depths = bracket_depths(inner)
    pieces, start = [], 0
    for i, char in enumerate(inner):
        if char == separator and depths[i] == 0:
            pieces.append(inner[start:i].strip())
            start = i + 1
            if len(pieces) > _MAX_ITEMS:
                return None
    pieces.append(inner[start:].strip())
    return pieces if all(pieces) else None


def _step(char: str) -> int:
    return 1 if char in "{[(" else -1 if char in "}])" else 0
