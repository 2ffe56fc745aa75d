"""Decide whether two normalised answers are equal: exact literals and words in the caller, Math-Verify in workers.

The caller side (:class:`MathChecker`) settles plain literals exactly, compares worded answers as
written, remembers earlier verdicts (golds repeat every step and epoch), and sends the rest to
deadline-killed worker processes (:mod:`rewardhub.workers`); the worker side (``verify_pair``,
``warm_up``) parses both texts with Math-Verify and compares them.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardhub import ConfigError
from rewardhub.workers import WorkerPool, shared_pool

from ..text.extract import bracket_depths
from .literals import has_modulus, literal_verdict, magnitude_verdict, parse_literal
from .relations import NAME_NOISE, NEGATION, is_name

__all__ = ["Check", "MathChecker", "SEVERAL_FOR_ONE", "list_items", "verify_pair", "warm_up"]

_CACHE_SIZE = 1 << 16  # verdicts remembered across batches (a few MB)
_SETTLED = frozenset({"equal", "not equal", "answer unparseable", "gold unparseable"})
# A word of 4+ letters that is not a command, a function or a point name: the answer is text ("hyperbola",
# "Evelyn"), which the parser would read as a product of letters ("listen" = "silent").
_WORD = re.compile(r"(?<![\\A-Za-z])(?=[A-Z]?[a-z])[A-Za-z]{4,}(?![A-Za-z])")  # not point names (ABCD)
_TEXT_GROUP = re.compile(r"\\(?:text\w*|mbox|mathrm)\s*\{([^{}]*)\}")
_LETTERS = re.compile(r"[A-Za-z]{2,}")
_FUNCTIONS = frozenset("sqrt frac sinh cosh tanh arcsin arccos arctan infty prime matrix pmatrix bmatrix vmatrix array cases".split())
_MEMBER_OF = re.compile(r"^[A-Za-z]\s*\\in\s*")
_BASE_NUMBER = re.compile(r"([0-9A-Za-z]+)_\{?\(?(\d{1,2})\)?\}?")
_LIST_SEPARATOR = re.compile(r",(?!\d{3}(?!\d))\s*|;\s*|\s*\\text\{\s*and\s*\}\s*|\s+and\s+")
# Numbers written side by side with nothing between but space or grouping (``5 5``, ``{5}{5}``, ``\\mathrm{1}25``):
# TeX shows their digits run together (55, 125), while the parser multiplies them (25).
_SIDE_BY_SIDE = re.compile(
    r"(?<![\w.^_{])\d+(?:\.\d+)?(?:\s+|\s*~\s*)\d"
    r"|(?<![A-Za-z}^_])\{\s*\d+(?:\.\d+)?\s*\}\s*\{?\s*\d"
    r"|\\(?:text\w*|mathrm|mathbf|mbox)\{\s*\d+(?:\.\d+)?\s*\}\s*\{?\s*\d|\d\s*\\(?:text\w*|mathrm|mathbf|mbox)\{\s*\d"
)
# An answer that opens on a relation (``\\le 5``, ``< 5``, ``\\approx 5``) bounds a value it does not name; one
# holding a negation (``x \\neq 5``, ``\\neg 5``, ``x \\notin S``) denies one. Neither is the value (the parser
# would read the 5 alone).
_RELATION_FIRST = re.compile(
    r"\s*(?:\\(?:leq?|geq?|leqslant|geqslant|neq?|lt|gt|approx|sim|simeq|nless|ngtr|not|neg|lnot)(?![A-Za-z])|[<>≤≥≠¬])"
)
_AS_WRITTEN_NOISE = re.compile(r"\\(?:text\w*|mathrm|mbox|operatorname)|[\s{}\\.,;:!?'\"()\[\]]")

_REQUIRES = ("rewardhub.rewards.math.checker:warm_up",)
# One answer of each shape, so that the parser's and sympy's first-use costs are paid at worker start.
_WARM_UP = [("3", "x = 3"), ("\\frac{1}{2}", "0.5"), ("2\\sqrt{3}", "\\sqrt{12}"), ("2\\pi", "6.28"),
            ("(1, 2]", "[1, 2]"), ("(1, -2)", "(-2, 1)"), ("\\{1, 2\\}", "\\{2, 1\\}"), ("2x+2", "2(x+1)"),
            ("x > 2", "(2, \\infty)"), ("50\\%", "0.5"), ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1, 2)")]  # fmt: skip

SEVERAL_FOR_ONE = "several values for one"  # a list answered for one value: a hedge, final (no rescue)


@dataclass(frozen=True)
class Check:
    """The verdict on one (gold, answer) pair: ``status`` is ``equal``, ``not equal``,
    ``answer unparseable``, ``gold unparseable``, ``runaway`` (the pair used its whole cpu budget),
    ``timeout`` (its deadline passed before it had that cpu: a busy machine) or ``error``."""

    status: str
    detail: str = ""

    @property
    def verdict(self) -> bool | None:
        return {"equal": True, "not equal": False, "answer unparseable": False}.get(self.status)


def _failed_check(outcome: Any, timeout: float) -> Check:
    """A worker's timeout judged by the cpu the pair used: ``runaway`` (its whole budget: the answer's doing)
    or ``timeout`` (a busy machine starved it); a worker's error, or its kill from outside, is ``error``."""
    if outcome.status != "timeout":
        return Check("error", str(outcome.value))
    used = "" if outcome.cpu is None else f"{outcome.cpu:.2g} s of cpu"
    return Check("runaway" if outcome.ran_away(timeout) else "timeout", used)


class MathChecker:
    """Decides whether answers are equivalent: exact literals here, everything else in the workers.

    Identical pairs are checked once per call; each worker parses a given text once (LRU cache).
    """

    def __init__(
        self,
        timeout: float = 5.0,
        workers: int | None = None,
        pool: WorkerPool | None = None,
        cache_size: int = _CACHE_SIZE,
    ):
        if timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds per answer; got {timeout}")
        if workers is not None and workers < 1:
            raise ConfigError(f"workers must be at least 1 (or None for one per usable core); got {workers}")
        self.timeout = timeout
        self._workers = workers
        self._pool = pool
        self._cache: OrderedDict[tuple[str, str], Check] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def pool(self) -> WorkerPool:
        if self._pool is None:
            self._pool = shared_pool(self._workers)
        return self._pool

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_pool"] = None  # worker processes belong to this process: a copy finds its own pool
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def compare(self, pairs: Sequence[tuple[str, str]]) -> list[Check]:
        """One :class:`Check` per ``(gold, answer)`` pair of normalised answers."""
        unique = list(dict.fromkeys(pairs))
        checks: dict[tuple[str, str], Check] = {}
        for pair in unique:
            check = _in_process_check(*pair) or self._remembered(pair)
            if check is not None:
                checks[pair] = check
        slow = [pair for pair in unique if pair not in checks]
        if not slow:  # settled in the caller: no worker is started (or even looked up)
            return [checks[pair] for pair in pairs]
        for pair, outcome in zip(
            slow, self.pool.map(verify_pair, slow, timeout=self.timeout, requires=_REQUIRES), strict=True
        ):
            checks[pair] = Check(outcome.value) if outcome.status == "ok" else _failed_check(outcome, self.timeout)
            self._remember(pair, checks[pair])
        return [checks[pair] for pair in pairs]

    def _remembered(self, pair: tuple[str, str]) -> Check | None:
        with self._lock:
            check = self._cache.get(pair)
            if check is not None:
                self._cache.move_to_end(pair)
            return check

    def _remember(self, pair: tuple[str, str], check: Check) -> None:
        if check.status not in _SETTLED or self._cache_size <= 0:
            return  # a timeout or an error may go otherwise next time
        with self._lock:
            self._cache[pair] = check
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)


def _in_process_check(gold: str, answer: str) -> Check | None:
    """The verdict the caller can give without a parser: exact literals, shapes that differ, numbers in a
    base, or answers in words compared as written."""
    if "".join(gold.split()) == "".join(answer.split()):
        return Check("equal", "as written")
    shape = _shape_check(gold, answer)
    if shape is not None:
        return shape
    if _SIDE_BY_SIDE.search(answer) and not _SIDE_BY_SIDE.search(gold):
        return Check("not equal", "numbers side by side: their digits run together, they are no product")
    for find, why in ((_RELATION_FIRST.match, "a relation with no left side: a bound, not a value"),
                      (NEGATION.search, "a negation: it denies a value")):  # fmt: skip
        if find(answer) and not find(gold):
            return Check("not equal", why)
    if has_modulus(answer) and not has_modulus(gold):
        return Check("not equal", "a residue modulo a number, not the value asked for")
    fast = _fast_verdict(gold, answer)
    if fast is not None:
        return Check("equal" if fast else "not equal", "exact")
    left = _unnamed_equation(gold, answer)
    if left is not None:
        return Check("not equal", f"an equation for {left}, not a value")
    if _has_words(gold) or _has_words(answer):
        same = _as_written(gold) == _as_written(answer)
        return Check("equal" if same else "not equal", "compared as written")
    return None


def _shape_check(gold: str, answer: str) -> Check | None:
    """``not equal`` when the answer's shape is not the gold's, whatever their numbers (the parser reads a set
    as an interval's endpoints): a set is no interval or tuple, and a bare list is neither; a number in a base
    is its digits and its base (``1011_3`` is not ``1011_2``)."""
    base = _base_check(gold, answer)
    if base is not None:
        return base
    gold_shape, answer_shape = _shape(gold), _shape(answer)
    if {gold_shape, answer_shape} == {"set", "bracketed"}:
        return Check("not equal", "a set is not an interval or a tuple")
    if {gold_shape, answer_shape} == {"list", "bracketed"}:
        return Check("not equal", "a list of values is not an interval or a tuple")
    if (gold_shape, answer_shape) == ("value", "list") and "," not in gold:  # the parser reads "72, 72" as {72}
        return Check("not equal", SEVERAL_FOR_ONE)
    return None


def _shape(text: str) -> str:
    """``set`` (``\\{...\\}``), ``bracketed`` (a tuple or interval: one pair of brackets around it all),
    ``list`` (values joined by commas or "and" outside brackets), else ``value``."""
    text = _MEMBER_OF.sub("", text.strip())  # "x \\in \\{2, 9\\}" is the set
    if text.startswith("\\{") and text.endswith("\\}") and _closing(text, 1) == len(text) - 1:
        return "set"
    if text[:1] in "([" and text[-1:] in ")]" and _closing(text, 0) == len(text) - 1:
        return "bracketed"
    return "list" if len(list_items(text)) > 1 else "value"


def _closing(text: str, start: int) -> int | None:
    """Index of the bracket closing the one at ``start`` (any of ``([{`` closed by any of ``)]}``: an
    interval may be half-open)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return None


def list_items(text: str) -> list[str]:
    """The items of a list written with commas, semicolons or "and" outside brackets (``1,000`` is one item)."""
    depths, items, start = bracket_depths(text), [], 0
    for match in _LIST_SEPARATOR.finditer(text):
        if depths[match.start()] == 0:
            items.append(text[start : match.start()])
            start = match.end()
    items.append(text[start:])
    return [item for item in items if item.strip()]


def _base_check(gold: str, answer: str) -> Check | None:
    gold_number, answer_number = _in_base(gold), _in_base(answer)
    if gold_number is None and answer_number is None:
        return None
    if gold_number is None or answer_number is None:  # the base of the other side is the question's
        digits = (gold_number or answer_number)[0]
        other = "".join((answer if gold_number else gold).split())
        same = other.upper() == digits
        return Check("equal" if same else "not equal", "" if same else "a number in a base: other digits")
    if gold_number == answer_number:
        return Check("equal", "the same digits in the same base")
    return Check("not equal", "a number in a base: other digits or another base")


def _in_base(text: str) -> tuple[str, int] | None:
    """``1011_2``, ``1011_{2}``, ``A3_{(16)}`` as (digits, base) when the digits are a numeral in that base."""
    match = _BASE_NUMBER.fullmatch("".join(text.split()))
    if match is None:
        return None
    digits, base = match.group(1).upper(), int(match.group(2))
    if not 2 <= base <= 36 or any(int(digit, 36) >= base for digit in digits):
        return None
    return digits, base


def _unnamed_equation(gold: str, answer: str) -> str | None:
    """The left side of ``answer`` when it is an equation about something that is not a named quantity
    (``2x = 6``, ``x^2 = 4``, ``x + 2 = 5``) while the gold is a value: its right side is no claim about
    the asked value (the parser would compare 6 with the gold). Named quantities (``x``, ``f(3)``,
    ``a + b``, ``AB``, ``\\angle A``) and pure arithmetic (``2 \\times 9 = 18``) pass."""
    sides = _top_level_split(answer, "=")
    if len(sides) < 2 or len(_top_level_split(gold, "=")) > 1:
        return None
    left = sides[0]
    if not any(char.isalpha() for char in NAME_NOISE.sub("", left)):
        return None  # arithmetic: "2 \\times 9 = 18"
    return None if is_name(left) else left.strip()


def _top_level_split(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` outside braces, brackets and parentheses (``<=``, ``\\neq`` untouched)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char == separator and depth == 0 and text[i - 1 : i] not in ("<", ">", "!", "\\"):
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _has_words(text: str) -> bool:
    """Words the parser would misread: a word of 4+ letters, or any word in ``\\text{}`` but "and" (the
    parser reads ``(2, 6), (1, n) \\text{ for any } n \\ge 1`` as 1, ``\\text{all } n`` as n)."""
    if any(word.group().lower() not in _FUNCTIONS for word in _WORD.finditer(text)):
        return True
    return any(word.lower() != "and" for group in _TEXT_GROUP.finditer(text) for word in _LETTERS.findall(group.group(1)))


def _as_written(text: str) -> str:
    return _AS_WRITTEN_NOISE.sub("", text).casefold()


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _literal(text: str) -> Any:
    return parse_literal(text)


def _fast_verdict(gold: str, answer: str) -> bool | None:
    """The exact verdict for two plain literals; ``None`` when the full path must decide."""
    gold_literal = _literal(gold)
    answer_literal = _literal(answer) if gold_literal is not None else None
    if gold_literal is None or answer_literal is None:
        return None
    verdict = literal_verdict(gold_literal, answer_literal)
    return verdict if verdict is not None else magnitude_verdict(gold, gold_literal, answer_literal)


# The full path, run inside worker processes.
def verify_pair(pair: tuple[str, str]) -> str:
    """Worker function: parse both answers with Math-Verify and compare them; returns a ``Check`` status."""
    from math_verify import verify

    gold = _parse(pair[0])
    if not gold:
        return "gold unparseable"
    answer = _parse(pair[1])
    if not answer:
        return "answer unparseable"
    # allow_set_relation_comp: "x \\in [-2, 7]" and "-2 \\le x \\le 7" are one set, whichever side is the gold
    return "equal" if verify(gold, answer, allow_set_relation_comp=True, timeout_seconds=None) else "not equal"


def warm_up() -> None:
    """Run in each worker before it takes work (see ``WorkerPool.map(requires=...)``)."""
    for pair in _WARM_UP:
        verify_pair(pair)


@functools.lru_cache(maxsize=8192)
def _parse(text: str) -> list:
    """Math-Verify's parse of one extracted answer (gold texts repeat across a batch: cached)."""
    import logging

    from latex2sympy2_extended import NormalizationConfig
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    for name in (
        "math_verify.parser",
        "math_verify.grader",
    ):  # its "timeout disabled" warning: we enforce ours
        logging.getLogger(name).setLevel(logging.ERROR)
    # Math-Verify's own normalisation (malformed operators, nits) but not its unit list, which holds
    # single letters ("2t" would read as 2): units were removed by ``literals.normalize`` already.
    normalization = NormalizationConfig(basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all")
    config = [LatexExtractionConfig(boxed_match_priority=0, normalization_config=normalization), ExprExtractionConfig()]
    return parse(
        "\\boxed{" + text + "}", extraction_config=config, fallback_mode="no_fallback", parsing_timeout=None
    )
