"""Quantities in answers: a number and its unit, read with pint (SI prefixes, plurals, compound units, dimensions).

``23\\,\\text{m}``, ``23 \\text{ m }``, ``23\\;\\mathrm{m}`` and ``23~\\text{m}`` are all 23 metres; ``2300 cm`` is the
same length, ``23 cm`` is not, and ``5 ms`` is no answer to ``5\\text{ s}``. A unit is whatever pint reads (its
registry knows prefixes and dimensions) or a currency; single letters pint reads but a solution rarely means
(``k`` for Boltzmann's constant, ``M`` for molar, ``a`` for a year) are no unit. Only the short extracted answer is
parsed (never the completion), each unit spelling once per process (cached): linear in the answer.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import NamedTuple

from ..text.extract import has_digit

__all__ = ["Quantity", "convert", "quantity", "unit_of", "unit_written_after"]

_SPACING = re.compile(r"\\[,;:! ]|~|\\q?quad(?![A-Za-z])")
_WRAPPED = re.compile(r"\\(?:text|textbf|textnormal|textrm|textit|mbox|mathrm|operatorname)\s*\{([^{}]*)\}")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°")
_NUMBER = r"-?\d[\d.,{}]*(?:\s*\\times\s*10\^\{?-?\d+\}?)?"
_UNIT_TOKEN = r"[A-Za-zµμΩ]+(?:\^\{?-?\d\}?)?"
_QUANTITY = re.compile(rf"({_NUMBER})\s*({_UNIT_TOKEN}(?:\s*(?:/|\*|\\cdot|·|\s)\s*{_UNIT_TOKEN})*)")
_POWER = re.compile(r"\^\{?(-?\d)\}?")
_CURRENCIES = {"dollar": "dollar", "dollars": "dollar", "cent": "cent", "cents": "cent", "euro": "euro", "euros": "euro",
               "usd": "dollar", "eur": "euro"}  # fmt: skip
_CENTS_PER = {"dollar": 100, "euro": 100, "cent": 1}
_ANGLES = frozenset({"degree", "radian"})
# Single letters that are units in a solution; any other single letter is a variable or a scale (25k, 3M).
_SINGLE_LETTER_UNITS = frozenset("m s g L l h J N W V".split())
# A unit written right after a number: "232 centimeters", "$232$ centimeters", "5\\,\\text{ms}", "12 km/h" (read by pint, or nothing).
_UNIT_AFTER = re.compile(r"\}?\s*\$?\s*(?:\\[,;: ]|~)?\s*(?:\\(?:text|mathrm|mbox)\s*\{\s*)?([A-Za-zµμΩ]+(?:\^\{?-?\d\}?)?(?:/[A-Za-z]+)?)")
_PROSE_UNITS = frozenset({"in", "at", "are", "is", "a", "an", "and", "or", "per", "for", "to", "of", "on", "by"})  # pint reads "in", "at", "are"


class Quantity(NamedTuple):
    """A number and its unit: ``number`` as written, ``unit`` by its canonical name (pint's: ``centimeter``,
    ``kilometer / hour``, ``meter ** 2``; or ``degree``, ``dollar``)."""

    number: str
    unit: str


@functools.lru_cache(maxsize=4096)
def quantity(answer: str) -> Quantity | None:
    """``answer`` as a number and a unit (``5 km``, ``23\\,\\text{m}``, ``15\\mbox{ cm}^2``, ``90^\\circ``,
    ``3 m/s``), or None when it is anything else (``5``, ``5 apples``, ``x km``). Remembered: answers and golds
    recur across a group and the steps of a run."""
    text = answer.strip().replace("$", "").strip().rstrip(".").strip()
    if len(text) > 80:
        return None
    text = _SPACING.sub(" ", _WRAPPED.sub(r" \1 ", _SPACING.sub(" ", text))).replace(" ^", "^")
    text = re.sub(r"\s+\^", "^", text)
    degrees = _DEGREES.search(text)
    if degrees is not None:
        number = text[: degrees.start()].strip()
        return Quantity(number, "degree") if re.fullmatch(_NUMBER, number) and not text[degrees.end() :].strip() else None
    match = _QUANTITY.fullmatch(text.strip())
    if match is None:
        return None
    unit = _unit(" ".join(match.group(2).split()))
    return None if unit is None else Quantity(match.group(1), unit)


def unit_of(answer: str) -> str | None:
    """The unit of a number-and-unit answer by its canonical name (``5 km`` -> ``kilometer``), else None."""
    found = quantity(answer)
    return None if found is None else found.unit


def unit_written_after(text: str, number: str) -> str | None:
    """``number`` with the unit written right after its last occurrence in ``text`` (``232 centimeters`` where the
    reader took ``232`` alone), or None when no unit pint reads follows it there."""
    at = text.rfind(number)
    if at < 0 or not number.strip() or not has_digit(number):
        return None
    unit = _UNIT_AFTER.match(text, at + len(number), at + len(number) + 40)
    if unit is None or unit.group(1).lower() in _PROSE_UNITS:
        return None
    written = f"{number} {unit.group(1)}"
    return written if quantity(written) is not None else None


def convert(value: Fraction, unit: str, to: str) -> Fraction | None:
    """``value`` in ``unit`` expressed in ``to``, exactly; None when they measure different things (a length is
    no time; degrees and radians are told apart as written)."""
    if unit == to:
        return value
    if unit in _CENTS_PER or to in _CENTS_PER:
        same_currency = {unit, to} <= {"dollar", "cent"} or {unit, to} <= {"euro", "cent"}
        return value * _CENTS_PER[unit] / _CENTS_PER[to] if same_currency and unit in _CENTS_PER and to in _CENTS_PER else None
    if unit in _ANGLES or to in _ANGLES:
        return None
    import pint

    registry = _registry()
    try:
        converted = registry.Quantity(value, unit).to(to).magnitude
    except (pint.DimensionalityError, pint.errors.OffsetUnitCalculusError, pint.UndefinedUnitError):
        return None
    return Fraction(converted)


@functools.lru_cache(maxsize=4096)
def _unit(spelling: str) -> str | None:
    """The canonical name of a unit spelling, or None when it is no unit (pint does not read it, it is a lone
    letter that is not a unit in a solution, or it measures nothing: ``percent``)."""
    currency = _CURRENCIES.get(spelling.lower())
    if currency is not None:
        return currency
    tokens = re.split(r"\s*(?:/|\*|\\cdot|·|\s)\s*", spelling)
    if any(len(_POWER.sub("", token)) == 1 and _POWER.sub("", token) not in _SINGLE_LETTER_UNITS for token in tokens):
        return None
    expression = re.sub(r"\s*(?:\\cdot|·)\s*|(?<=[\w}])\s+(?=[A-Za-zµμΩ])", "*", _POWER.sub(r"**\1", spelling))
    import pint

    try:
        units = _registry().parse_units(expression)
    except (pint.UndefinedUnitError, pint.DefinitionSyntaxError, AttributeError, TypeError, ValueError, SyntaxError):
        return None
    name = " * ".join(name if power == 1 else f"{name} ** {power}" for name, power in sorted(units._units.items()))
    if name in ("degree", "radian"):
        return name
    return None if units.dimensionless else name


@functools.cache
def _registry():
    import pint

    return pint.UnitRegistry(non_int_type=Fraction)
