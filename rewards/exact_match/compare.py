"""How an answer is compared with the references of ``exact_match``: by exact value where the value can be read,
else by normalised string; the verdict for an (answer, references) pair is remembered, since it depends on nothing
else and repeats across a group's samples and every epoch.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..math.literals import Scalar
from ..math.reward import _plus_minus as plus_minus  # a gold "\\pm 4" is the list "4, -4", as math reads it
from ..memo import Kept
from ..text.extract import Normalizer, alternatives, canonical_number, number_before_unit
from .values import Items, Measured, Value, has_words, read_value, same_value

__all__ = ["Comparison", "normalised"]

_DECIMAL_COMMA = re.compile(r"-?\d+,\d{1,2}")  # 3,05: a decimal comma (three digits after it would be thousands)
_UNIT_MARK = re.compile(r"\\circ|°|\\(?:text|mathrm|mbox)\s*\{\s*[A-Za-z]")  # 90^\circ, 5\text{ cm}
# A factorial (5!, (n+1)!, 100000!): the "!" is an operator, never punctuation to strip (5! is not 5).
_FACTORIAL = re.compile(r"(?<=[\w)}\]])!(?!=)")
# A minus between spaces after a number or a closing bracket is subtraction (8 - \sqrt{10}), never the dash of
# "Paris - France" that the string normaliser turns into a space (8 - \sqrt{10} is not 8\sqrt{10}).
_SPACED_MINUS = re.compile(r"(?<=[\d)}\]])\s+-\s+(?=[\d\\A-Za-z({\[])")
_DROPPED_BRACKETS = re.compile(r"\\\{|\\langle|[⟨⟩〈〉]")  # brackets the string normaliser drops as punctuation
_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")  # a canonical number of the string normaliser
_NAMED = re.compile(r"\s*([A-Za-z](?:_\{?\w+\}?)?)\s*=")


@dataclass(frozen=True)
class Comparison:
    """The settings an answer is compared under: the string normaliser, whether values are read (they are read
    from the LaTeX they are written in), and the longest reference read as a value."""

    normalize: Normalizer
    by_value: bool
    max_answer_chars: int

    def __hash__(self) -> int:  # remembered: the settings key the memo of every verdict
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        return hash((self.normalize, self.by_value, self.max_answer_chars))

    def pays(self, answer: str, references: dict[str, str]) -> bool:
        """Whether ``answer`` equals a reference; several values offered (:func:`alternatives`) pay only when
        every one of them is right, or when they are the solutions of one equation beside a reference that lists
        them (``x = 7 or x = -7`` for ``\\pm 7``). Remembered: a group's samples repeat answers, a step's
        references repeat every epoch, and the verdict depends on nothing else."""
        written = tuple(references.items())
        by_answer = _PAID.get((self, written))
        if by_answer is None:
            by_answer = _PAID.keep((self, written), Kept(_PAID_ANSWERS))
        paid = by_answer.get(answer)
        return by_answer.keep(answer, self._pays(answer, references)) if paid is None else paid

    def _pays(self, answer: str, references: dict[str, str]) -> bool:
        offered = alternatives(answer)
        if self._matches(answer, references):
            return True
        if len(offered) < 2 or not all(offered):
            return False
        names = {named.group(1) if (named := _NAMED.match(value)) else None for value in offered}
        if len(names) == 1 and None not in names and self._matches(", ".join(offered), references):
            return True
        return all(self._matches(value, references) for value in offered)

    def _matches(self, answer: str, references: dict[str, str]) -> bool:
        got = self.text(answer)
        if got not in references and _DECIMAL_COMMA.fullmatch(answer.strip()):  # "3,05" for a reference 3.05
            got = self.text(answer.strip().replace(",", "."))
        if (
            got not in references
            and any(
                canonical_number(key) and not _UNIT_MARK.search(written)
                for key, written in references.items()
            )
        ):  # unit words are dropped for a reference that is a number, never for one with a unit of its own (90^\circ)
            number = number_before_unit(answer)
            got = self.text(number) if number is not None else got
        if got in references:
            return not self.by_value or self._brackets_agree(answer, references[got])
        if not self.by_value or _FACTORIAL.search(answer):
            return False
        if (
            _DECIMAL.fullmatch(got)
            and "," not in answer
            and all(_DECIMAL.fullmatch(key) for key in references)
        ):
            return False  # two exact decimals already (1.6e-19 reads 0.00000000000000000016): unequal values
        for written in references.values():
            gold = self.gold_value(written)
            if gold is not None and same_value(gold, self._value(answer, gold)):
                return True
        return False

    def _brackets_agree(self, answer: str, written: str) -> bool:
        """Whether two strings the normaliser made equal by dropping brackets it reads as punctuation (``⟨0, 0⟩``
        and ``\\{0, 0\\}`` both become ``0 0``) hold the same kind of list: a vector is no set."""
        if not _DROPPED_BRACKETS.search(answer) and not _DROPPED_BRACKETS.search(written):
            return True
        gold = self.gold_value(written)
        value = self._value(answer, gold) if isinstance(gold, Items) else None
        return not isinstance(value, Items) or same_value(gold, value)

    def text(self, answer: str) -> str:
        """The normalised string of ``answer``."""
        return normalised(self.normalize, answer)

    def gold_value(self, gold: str) -> Value | None:
        """The reference ``gold`` read as a value (None when it is too long or a factorial)."""
        return None if len(gold) > self.max_answer_chars else _gold_value(gold, self.normalize)

    def _value(self, answer: str, gold: Value) -> Value:
        one_number = not isinstance(gold, Items | str)
        text = functools.partial(normalised, self.normalize)
        value = read_value(
            answer, text, one_number=one_number, as_list=isinstance(gold, Items) and not gold.brackets
        )
        if isinstance(gold, Measured) and isinstance(value, Scalar) and has_words(answer):
            return text(answer)  # "120\text{ rad}\phantom{...}": words the number reader dropped, maybe a unit
        return value


_PAID = Kept(1 << 10)  # (comparison, references) -> answer -> verdict
_PAID_ANSWERS = 64  # answers remembered per references (a group's, over a few epochs)
_NORMALISED = Kept(16)  # normaliser -> answer -> its normalised string
_NORMALISED_ANSWERS = 1 << 14  # a few training steps' worth


def normalised(normalize: Normalizer, answer: str) -> str:
    """The normalised string of an answer (a factorial keeps its ``!``: punctuation elsewhere goes), remembered."""
    by_answer = _NORMALISED.get(normalize)
    if by_answer is None:
        by_answer = _NORMALISED.keep(normalize, Kept(_NORMALISED_ANSWERS))
    text = by_answer.get(answer)
    if text is None:
        factorial = _FACTORIAL.sub(" factorial ", answer) if "!" in answer else answer
        text = by_answer.keep(answer, normalize(_SPACED_MINUS.sub("-", factorial) if "-" in factorial else factorial))
    return text


@functools.lru_cache(maxsize=1 << 14)
def _gold_value(gold: str, normalize: Normalizer) -> Value | None:
    """A reference read as a value once (references repeat every step and epoch); None for a factorial."""
    if _FACTORIAL.search(gold):
        return None
    return read_value(
        plus_minus(gold), functools.partial(normalised, normalize), one_number=False, as_list=True
    )
