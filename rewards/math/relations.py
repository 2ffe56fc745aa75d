"""Relation chains in a math answer (``x = 2 \\cdot 5 = 10``, ``9 = 10``, ``x \\approx 10``): the value they state
and the sides that must agree for the statement to be true.

A parser reads an equation by its last side, so ``\\boxed{9 = 10}`` would pay for 10. Here a chain is split at its
top-level relation signs (linear time); every side with no free symbol (``9``, ``3 \\cdot 3``, ``5!``) must equal
the side read as the answer, which the caller checks through the math checker (exact literals in process,
everything else in the deadline-bound workers: nothing is evaluated here).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..text.extract import bracket_depths, has_digit
from .literals import Scalar, has_modulus, parse_literal

__all__ = ["MAX_SIDES", "Reading", "is_closed", "is_name", "read_relations", "sides_of"]

MAX_SIDES = 12  # a longer chain is no answer a reader checks (and bounds the checks one answer may cost)
# Relation signs, longest spelling first (``:=`` before ``=``, ``\\leq`` before ``\\le``).
_SIGN = re.compile(
    r"\\(?:leqslant|geqslant|coloneqq|doteq|approx|simeq|equiv|cong|leq?|geq?|neq?|sim|lt|gt)(?![A-Za-z])"
    r"|:=|<=|>=|!=|==|[=<>≤≥≠≈≡∼≃≅≐≔]"
)
# Signs that state the sides are equal; every other sign bounds or approximates a value.
_EQUALITIES = frozenset({"=", "==", ":=", "\\coloneqq", "≔", "\\doteq", "≐", "\\equiv", "≡"})
_DECIMAL = re.compile(r"-?\d+(?:\.(\d+))?")
_APPROXIMATIONS = frozenset({"\\approx", "≈", "\\simeq", "≃", "\\sim", "∼", "\\cong", "≅"})
# Commands that name an operation or a constant, not a free symbol (``\\sqrt{2}``, ``\\pi``). Not functions whose
# argument may be in units the text leaves implicit (``\\sin 30``: degrees?): such sides stay open.
_CLOSED_COMMAND = re.compile(
    r"\\(?:frac|dfrac|tfrac|sqrt|cdot|times|div|pi|binom|left|right|%)(?![A-Za-z])"
)
# Reading a side as a named quantity: subscripts, call arguments and decorations go; a name is then letters only.
_SUBSCRIPT = re.compile(r"_(?:\{[^{}]*\}|\\?\w)")
_CALL_ARGUMENTS = re.compile(r"(?<=[A-Za-z}])\([^()]*\)")
_NAME_COMMAND = (
    r"\\(?:text\w*|mathrm|mathbf|operatorname|overline|overrightarrow|vec|hat|bar|angle|triangle|measuredangle"
    r"|sin|cos|tan|cot|sec|csc|log|ln|frac|left|right|times|cdot|div|pm|alpha|beta|gamma|delta|theta|phi|lambda|mu|sigma|omega|pi)"
    r"(?![A-Za-z])|\^\{\\prime+\}"
)
_NAME_MARK = r"[\s{}|+:/\\(),]"
NAME_NOISE = re.compile(f"{_NAME_COMMAND}|{_NAME_MARK}")
_NAME_COMMANDS, _NAME_MARKS = re.compile(_NAME_COMMAND), re.compile(_NAME_MARK)
_OTHER_COMMAND = re.compile(r"\\[A-Za-z]")
# A negation (``x \\ne 5``, ``\\not= 5``, ``\\neg 5``) denies a value: never read as a chain of equalities.
NEGATION = re.compile(r"\\(?:neq?|not|neg|lnot|notin)(?![A-Za-z])|≠|¬|!=")


def sides_of(text: str) -> tuple[list[str], list[re.Match[str]]]:
    """``text`` split at its relation signs outside brackets: its sides (stripped) and the signs between them."""
    depths, sides, signs, start = bracket_depths(text), [], [], 0
    for match in _SIGN.finditer(text):
        if depths[match.start()] == 0:
            sides.append(text[start : match.start()].strip())
            signs.append(match)
            start = match.end()
    sides.append(text[start:].strip())
    return sides, signs


def is_closed(side: str) -> bool:
    """Whether ``side`` has no free symbol: digits, operators and operations or constants only (``3 \\cdot 3``,
    ``\\frac{20}{2}``, ``5!``). Conservative: subscripts (a base, ``1011_2``), units, words and any other command
    make a side open, so it is never evaluated against another (nor is a symbol outside ASCII: ``30°``)."""
    rest = _CLOSED_COMMAND.sub("", side)
    return rest.isascii() and has_digit(rest) and not any(
        char.isalpha() or char in "\\_'" for char in rest)


def is_name(side: str) -> bool:
    """Whether ``side`` names a quantity (``x``, ``a_n``, ``f(2)``, ``\\text{Area}``, ``\\angle A``, ``(x, y)``); a command
    that names nothing (``\\not``, ``\\color``) makes it no name."""
    rest = _NAME_COMMANDS.sub("", _CALL_ARGUMENTS.sub("", _SUBSCRIPT.sub("", side)))
    return not _OTHER_COMMAND.search(rest) and _NAME_MARKS.sub("", rest).isalpha()


@dataclass(frozen=True)
class Reading:
    """What an answer states: ``answer`` to compare with the gold (the value a true-looking chain of equalities
    states, else the answer as written), ``checks`` the ``(closed side, closed side)`` pairs that must be equal for
    the statement to be true (the first one the side read, when it is closed), or ``refused``: why the answer is no
    value equal to the gold."""

    answer: str
    checks: tuple[tuple[str, str], ...] = ()
    refused: str | None = None


def read_relations(gold: str, answer: str, *, modular: bool = False) -> Reading:
    """The reading of one normalised ``answer`` against a normalised ``gold``. ``modular``: the answer was written
    modulo something (``8 \\equiv 3 \\pmod 5``), where sides differ by design: it is left as written."""
    if not _SIGN.search(answer):
        return Reading(answer)  # most answers: no relation sign at all
    sides, matches = sides_of(answer)
    signs = [match.group() for match in matches]
    if len(sides) < 2 or modular or has_modulus(answer) or not all(sides) or NEGATION.search(answer):
        return Reading(answer)  # no chain, a congruence, a negation, or a side missing (the checker's cases)
    if len(sides) > MAX_SIDES:
        return Reading(answer, refused=f"a chain of {len(sides)} relations, no one answer")
    gold_sides, _ = sides_of(gold)
    first = next((i for i, sign in enumerate(signs) if sign not in _EQUALITIES), len(signs))
    if first == len(signs):
        return _equalities(answer, sides, one_gold=len(gold_sides) == 1)
    if len(gold_sides) > 1 or not _one_value(gold):
        return Reading(answer)  # a relation for a relation, a set or an interval (``1 \\le x < 7`` for ``[1, 7)``)
    bounds = signs[first:]
    exact = sides[: first + 1]  # "\\frac{\\sqrt{3}}{3} \\approx 0.577": the exact value, then its decimal
    if all(sign in _APPROXIMATIONS for sign in bounds) and any(is_closed(side) for side in exact):
        reading = _equalities(answer[: matches[first].start()].strip(), exact, one_gold=True)
        if any(_far(reading.answer, side) for side in sides[first + 1 :]):
            return Reading(answer, refused="a false approximation")
        return reading
    kind = "an approximation" if all(sign in _APPROXIMATIONS for sign in bounds) else "a bound"
    return Reading(answer, refused=f"{kind}, not a value equal to the gold")


def _one_value(text: str) -> bool:
    """Whether ``text`` is one closed value: no list, tuple or interval (``[1, 7)``, ``(2, 3)``, ``1, 2``)."""
    return is_closed(text) and "," not in text and not (text[:1] in "([" and text[-1:] in ")]")


def _equalities(text: str, sides: list[str], *, one_gold: bool) -> Reading:
    """The reading of ``text``, a chain of equalities (its ``sides``): the value it states when every side is closed
    or a name and the gold is one value (``x = 2 \\cdot 5 = 10``, ``10 = x``), and the checks of its closed sides
    against one another."""
    closed = [i for i, side in enumerate(sides) if is_closed(side)]
    if not closed:
        return Reading(text)
    # The side read as the answer: the last, or the first closed one when the last names what it is (``10 = x``).
    read = len(sides) - 1 if closed[-1] == len(sides) - 1 or not is_name(sides[-1]) else closed[0]
    reference = read if read in closed else closed[-1]  # closed sides are checked against a closed one
    checks = tuple((sides[reference], sides[i]) for i in closed if i != reference)
    states_value = one_gold and all(i in closed or is_name(side) for i, side in enumerate(sides))
    return Reading(sides[read] if states_value else text, checks)


def _far(exact: str, approximation: str) -> bool:
    """Whether a decimal ``approximation`` of an ``exact`` plain literal misses it by more than half a unit of its last
    digit and more than 1% (``9 \\approx 10``); False when either is no plain literal (left unchecked)."""
    digits = _DECIMAL.fullmatch(approximation)
    value = parse_literal(exact)
    if digits is None or not isinstance(value, Scalar) or value.percent:
        return False
    try:
        number = float(value.value) * math.sqrt(value.radicand) * math.pi**value.pi_power
    except OverflowError:
        return False
    error = abs(number - float(approximation))
    return error > 0.5 * 10.0 ** -len(digits.group(1) or "") and error > 0.01 * abs(number)
