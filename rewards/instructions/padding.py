"""The padding guard: a counting instruction met only by filler is not followed.

IFEval counts ``filler filler filler ...`` (or ``1 2 3 ... 300``) as 300 words; a policy finds that at
once. A length instruction (words or sentences *at least*, a number of paragraphs) is therefore also
checked without filler: units that repeat earlier text, and units without a single letter (numbers,
punctuation runs). When the response meets the count only thanks to filler, and filler is more than
``max_share`` of it, the instruction fails. Natural text repeats little (a few percent of its 4-grams)
and is mostly letters, so verdicts on real responses are IFEval's.
"""

from __future__ import annotations

from typing import Any

from . import text as measure
from .checks import divided_paragraphs

NGRAM = 4  # a word counts as repeated when the 4 words it starts were already seen together


def filler_words(value: str) -> tuple[int, int]:
    """(words, filler words: those starting a 4-gram seen earlier in the text, or without a letter)."""
    tokens = [w.lower() for w in measure.words(value)]
    seen: set[tuple[str, ...]] = set()
    filler = 0
    for i, token in enumerate(tokens):
        gram = tuple(tokens[i : i + NGRAM])
        filler += not _has_letter(token) or (len(gram) == NGRAM and gram in seen)
        seen.add(gram)
    return len(tokens), filler


def _filler_units(units: list[str]) -> tuple[int, int]:
    """(units, filler units: equal to an earlier one, compared case- and spacing-blind, or without a letter)."""
    seen: set[str] = set()
    filler = 0
    for unit in units:
        key = " ".join(unit.lower().split())
        filler += key in seen or not _has_letter(key)
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
        return (f"reaches {threshold} {unit} only by filler ({filler} of {count} {unit} repeat earlier text "
                f"or have no letter; {count - filler} without them)")
    return None
