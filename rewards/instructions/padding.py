"""The padding guard: a counting instruction met only by repeating earlier text is not followed.

IFEval counts ``filler filler filler ...`` as 300 words; a policy finds that at once. A length
instruction (words or sentences *at least*, a number of paragraphs) is therefore also checked with
repeated material counted once: when the response meets the count only thanks to repetition, and
repetition is more than ``max_share`` of it, the instruction fails. Natural text repeats little (a
few percent of its 4-grams), so verdicts on real responses are IFEval's.
"""

from __future__ import annotations

from typing import Any

from . import text as measure
from .checks import divided_paragraphs

NGRAM = 4  # a word counts as repeated when the 4 words it starts were already seen together


def repeated_words(value: str) -> tuple[int, int]:
    """(words, words that start a 4-gram seen earlier in the text)."""
    tokens = [w.lower() for w in measure.words(value)]
    seen: set[tuple[str, ...]] = set()
    repeated = 0
    for i in range(len(tokens) - NGRAM + 1):
        gram = tuple(tokens[i : i + NGRAM])
        if gram in seen:
            repeated += 1
        else:
            seen.add(gram)
    return len(tokens), repeated


def _distinct(units: list[str]) -> tuple[int, int]:
    """(units, units that repeat an earlier one, compared case- and spacing-blind)."""
    keys = [" ".join(unit.lower().split()) for unit in units]
    return len(keys), len(keys) - len(set(keys))


def _units(instruction_id: str, args: dict[str, Any], value: str) -> tuple[str, int, int, int] | None:
    """(unit name, count, repeated, threshold) for an instruction the guard applies to, else None."""
    if instruction_id == "length_constraints:number_words" and args["relation"] == "at least":
        return ("words", *repeated_words(value), args["num_words"])
    if instruction_id == "length_constraints:number_sentences" and args["relation"] == "at least":
        return ("sentences", *_distinct(list(measure.sentences(value))), args["num_sentences"])
    if instruction_id == "length_constraints:number_paragraphs":
        paragraphs = divided_paragraphs(value) or []
        return ("paragraphs", *_distinct(paragraphs), args["num_paragraphs"])
    if instruction_id == "length_constraints:nth_paragraph_first_word":
        paragraphs = [p for p in value.split("\n\n") if p.strip()]
        return ("paragraphs", *_distinct(paragraphs), args["num_paragraphs"])
    return None


def padded(instruction_id: str, args: dict[str, Any], value: str, max_share: float) -> str | None:
    """Why a followed counting instruction is padding (met only by repetition), or ``None``."""
    units = _units(instruction_id, args, value)
    if units is None:
        return None
    unit, count, repeated, threshold = units
    if count and repeated / count > max_share and count - repeated < threshold:
        return (f"reaches {threshold} {unit} only by repetition ({repeated} of {count} {unit} repeat earlier "
                f"text; {count - repeated} without them)")
    return None
