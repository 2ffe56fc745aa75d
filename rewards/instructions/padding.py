"""The padding guard: a counting instruction met only by filler is not followed.

IFEval counts ``filler filler filler ...`` (or ``1 2 3 ... 300``, or ``t.h.i.s`` as four words) as words;
a policy finds that at once. A length instruction (words or sentences *at least*, a number of
paragraphs) is therefore also checked without filler: units that repeat earlier text, units without a
letter or digit (punctuation runs), a count (``41 42 43 ...``: numbers one apart, after the first
``COUNT_FREE`` of a run; any constant step after ``STEP_FREE``), and letters spelled one by one
(``t.h.i.s``: every letter after the first). Numbers that are content (a list of primes, a timetable,
scores, years) count as words, as IFEval counts them. When the response meets the count only thanks to
filler, and filler is more than ``max_share`` of it, the instruction fails. Natural text repeats little
(a few percent of its 4-grams), so verdicts on real responses are IFEval's.
"""

from __future__ import annotations

from typing import Any

from . import text as measure
from .checks import divided_paragraphs

__all__ = ["COUNT_FREE", "NGRAM", "STEP_FREE", "filler_words", "padded"]

NGRAM = 4  # a word counts as repeated when the 4 words it starts were already seen together
COUNT_FREE = 10  # numbers one apart in a row: the first 10 are content ("2019, 2020, 2021"), the rest a count
STEP_FREE = 50  # numbers a constant step apart in a row: the first 50 are content (leap years), the rest filler


def filler_words(value: str) -> tuple[int, int]:
    """(words, filler words: those starting a 4-gram seen earlier in the text, without a letter or digit,
    counting on, or spelling a word letter by letter)."""
    found = list(measure.word_matches(value))
    tokens = [m.group().lower() for m in found]
    seen: set[tuple[str, ...]] = set()
    filler = run = step_run = 0
    previous: list[int] = []  # the last two numbers of the current run of number tokens
    for i, token in enumerate(tokens):
        gram = tuple(tokens[i : i + NGRAM])
        counting = spelled = False
        if token.isdigit() and len(token) <= 18:
            number = int(token)
            step = number - previous[-1] if previous else None
            same_step = len(previous) > 1 and step == previous[-1] - previous[-2]
            run = run + 1 if step in (1, -1) else 1
            step_run = step_run + 1 if same_step else (2 if previous else 1)
            previous = [*previous[-1:], number]
            counting = run > COUNT_FREE or step_run > STEP_FREE
        else:
            previous, run, step_run = [], 0, 0
            if len(token) == 1 and i and len(tokens[i - 1]) == 1 and token.isalpha():
                gap = found[i].start() - found[i - 1].end()
                spelled = gap == 1 and not value[found[i].start() - 1].isspace()
        filler += counting or spelled or not token.strip("_") or (len(gram) == NGRAM and gram in seen)
        seen.add(gram)
    return len(tokens), filler


def _filler_units(units: list[str]) -> tuple[int, int]:
    """(units, filler units: equal to an earlier one, compared case- and spacing-blind, or without a letter)."""
    seen: set[str] = set()
    filler = 0
    for unit in units:
        key = " ".join(unit.lower().split())
        filler += key in seen or not _has_letter(key)  # a sentence or paragraph is made of words
        seen.add(key)
    return len(units), filler


def _has_letter(text: str) -> bool:
    return any(c.isalpha() for c in text)



def _units(instruction_id: str, args: dict[str, Any], value: str) -> tuple[str, int, int, int] | None:
    """(unit name, count, filler, threshold) for an instruction the guard applies to, else None."""
    if instruction_id == "length_constraints:number_words" and args["relation"] == "at least":
        return ("words", *filler_words(value), args["num_words"])
    if instruction_id == "length_constraints:number_sentences" and args["relation"] == "at least":
        return ("sentences", *_filler_units(list(measure.sentences(value))), args["num_sentences"])
    if instruction_id == "length_constraints:number_paragraphs":
        paragraphs = divided_paragraphs(value) or []
        return ("paragraphs", *_filler_units(paragraphs), args["num_paragraphs"])
    if instruction_id == "length_constraints:nth_paragraph_first_word":
        paragraphs = [p for p in value.split("\n\n") if p.strip()]
        return ("paragraphs", *_filler_units(paragraphs), args["num_paragraphs"])
    return None


def padded(instruction_id: str, args: dict[str, Any], value: str, max_share: float) -> str | None:
    """Why a followed counting instruction is padding (met only thanks to filler), or ``None``."""
    units = _units(instruction_id, args, value)
    if units is None:
        return None
    unit, count, filler, threshold = units
    if count and filler / count > max_share and count - filler < threshold:
        return (f"reaches {threshold} {unit} only by filler ({filler} of {count} {unit} repeat earlier text, "
                f"count on, spell letters or hold no letter or digit; {count - filler} without them)")
    return None
