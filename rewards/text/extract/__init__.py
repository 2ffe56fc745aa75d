"""Find the final answer in a completion the way a careful reader does: a box, an answer tag, "the answer is"
(in any language of :mod:`rewardhub.rewards.text.lexicon`), ``####``, the last math span, a bare answer, and only
then the last number that stands alone; and normalise answers so that two spellings of one value compare equal.

The one answer extractor of the project, shared by the answer-checking families (exact_match, math,
majority_vote, multiple_choice); each family picks its order of extractors and its length limit. Every function
here reads text through :func:`rewardhub.rewards.text.canonical`, runs in linear time on any input (no
backtracking regex, brace matching by counting, each stretch of text scanned a bounded number of times) and
never raises on text: pathological completions give ``None``. Answers longer than ``max_chars`` are rejected,
since a 10k-character "answer" is a hedge or garbage, not an answer; ``max_chars=None`` returns them whatever
their length, for callers that report the length themselves.

One module per job: ``answers`` (what extractors hand back), ``boxes``, ``spans`` (math spans), ``numbers``
(bare answers, numbers, the last span), ``statements`` (answer tags, ``####``, "the answer is", corrections),
``ladder`` (extractors by name, tried in order), ``following`` (what the words after a stated answer offer
beside it: a hedge, a guess, a condition), ``stated`` (where each final statement stands: a caller that
tells two disagreeing final answers) and ``normalize``.
"""

from .answers import MAX_ANSWER_CHARS, OR, Extraction, Unreadable, alternatives, bracket_depths, has_digit
from .boxes import boxed, last_boxed
from .ladder import DEFAULT_EXTRACTORS, EXTRACTORS, check_extractors, extract_answer
from .normalize import Normalizer, canonical_number, strip_latex, unicode_to_latex
from .numbers import (
    bare,
    is_unit_word,
    last_math,
    last_number,
    looks_truncated,
    number_before_unit,
    number_in_words,
    whole,
)
from .spans import ends_inside_math, math_spans
from .statements import (
    after_statement,
    answer_is,
    answer_tag,
    final_statement,
    gsm8k,
    open_answer_tag,
    read_answer,
    unless_revised,
)

__all__ = [
    "DEFAULT_EXTRACTORS",
    "EXTRACTORS",
    "Extraction",
    "MAX_ANSWER_CHARS",
    "Normalizer",
    "OR",
    "Unreadable",
    "after_statement",
    "alternatives",
    "answer_is",
    "answer_tag",
    "bare",
    "boxed",
    "bracket_depths",
    "canonical_number",
    "check_extractors",
    "ends_inside_math",
    "extract_answer",
    "final_statement",
    "gsm8k",
    "has_digit",
    "is_unit_word",
    "last_boxed",
    "last_math",
    "last_number",
    "looks_truncated",
    "math_spans",
    "number_before_unit",
    "number_in_words",
    "open_answer_tag",
    "read_answer",
    "strip_latex",
    "unicode_to_latex",
    "unless_revised",
    "whole",
]
