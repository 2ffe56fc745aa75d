"""IFEval's verifiable instructions, each by its IFEval id with IFEval's kwargs names and definition.

Every check reproduces the reference (google-research ``instruction_following_eval``, vendored in
lm-evaluation-harness as ``tasks/ifeval``) on the same text, with three kinds of difference, all
deliberate and documented in docs/catalog.md:

- where the reference builds a regex from row data (keywords, a custom postscript marker, a section
  splitter), the data is matched as literal text, so a row cannot inject a pattern; for plain words
  (all of IFEval's data) the result is the same;
- where the reference's own regex can backtrack quadratically (bullets, titles, placeholders,
  postscripts), a linear scan computes the same matches;
- a kwarg the reference would replace by a *random* value (missing, negative, out of range) is an
  error naming it here: a reward must not be random; a ``letter`` that is not an ASCII letter
  (IFEval's data asks for ``#`` and ``!``) is counted as given, where the reference counts a random
  letter instead.

A check returns ``(followed, detail)``; ``detail`` says what was measured, for the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import text as measure
from .errors import InstructionRowError

__all__ = [
    "CONSTRAINED_RESPONSES",
    "INSTRUCTIONS",
    "Instruction",
    "LANGUAGE_NAMES",
    "RELATIONS",
    "Result",
    "capital_word_frequency",
    "constrained_response",
    "count_line_items",
    "count_placeholders",
    "divided_paragraphs",
    "end_checker",
    "english_capital",
    "english_lowercase",
    "forbidden_words",
    "has_title",
    "json_format",
    "keyword_existence",
    "keyword_frequency",
    "letter_frequency",
    "multiple_sections",
    "no_comma",
    "nth_paragraph_first_word",
    "number_bullet_lists",
    "number_highlighted_sections",
    "number_paragraphs",
    "number_placeholders",
    "number_sentences",
    "number_words",
    "postscript",
    "postscript_match",
    "quotation",
    "repeat_prompt",
    "resolve",
    "response_language",
    "title",
    "two_responses",
]

RELATIONS = ("less than", "at least")
LANGUAGE_NAMES = {
    "en": "English", "es": "Spanish", "pt": "Portuguese", "ar": "Arabic", "hi": "Hindi", "fr": "French",
    "ru": "Russian", "de": "German", "ja": "Japanese", "it": "Italian", "bn": "Bengali", "uk": "Ukrainian",
    "th": "Thai", "ur": "Urdu", "ta": "Tamil", "te": "Telugu", "bg": "Bulgarian", "ko": "Korean",
    "pl": "Polish", "he": "Hebrew", "fa": "Persian", "vi": "Vietnamese", "ne": "Nepali", "sw": "Swahili",
    "kn": "Kannada", "mr": "Marathi", "gu": "Gujarati", "pa": "Punjabi", "ml": "Malayalam", "fi": "Finnish",
}
CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")

Result = tuple[bool, str]


@dataclass(frozen=True)
class Instruction:
    """One IFEval instruction: its id, its kwargs (name -> kind) and its check."""

    id: str
    kwargs: Mapping[str, str]  # kind: "int", "str", "words" (list of str), "relation"
    check: Callable[[str, dict[str, Any]], Result]


def _compare(count: int, relation: str, threshold: int) -> bool:
    return count < threshold if relation == "less than" else count >= threshold


def _counted(what: str, count: int, relation: str, threshold: int) -> Result:
    return _compare(count, relation, threshold), f"{count} {what}, needs {relation} {threshold}"


def _literal(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile(re.escape(pattern), flags)


# ----- keywords -------------------------------------------------------------------------------------
def keyword_existence(value: str, args: dict[str, Any]) -> Result:
    missing = [k for k in sorted(args["keywords"]) if not _literal(k).search(value)]
    return not missing, f"missing {', '.join(map(repr, missing))}" if missing else "all keywords present"


def keyword_frequency(value: str, args: dict[str, Any]) -> Result:
    keyword = args["keyword"].strip()
    count = len(_literal(keyword).findall(value))
    return _counted(f"occurrences of {keyword!r}", count, args["relation"], args["frequency"])


def forbidden_words(value: str, args: dict[str, Any]) -> Result:
    found = [w for w in sorted(set(args["forbidden_words"])) if re.search(rf"\b{re.escape(w)}\b", value, re.IGNORECASE)]
    return not found, f"uses {', '.join(map(repr, found))}" if found else "no forbidden word"


def letter_frequency(value: str, args: dict[str, Any]) -> Result:
    letter = args["letter"].lower()
    return _counted(f"letters {letter!r}", value.lower().count(letter), args["let_relation"], args["let_frequency"])


def _check_letter(args: dict[str, Any]) -> None:
    # IFEval swaps anything but one ASCII letter for a random letter (its data asks for '#' and '!'):
    # here any single character is counted as given; more than one (" l ", "ab") is an error.
    if len(args["letter"]) != 1:
        raise InstructionRowError(f"letter must be a single character; got {args['letter']!r}")


# ----- language and case ----------------------------------------------------------------------------
def response_language(value: str, args: dict[str, Any]) -> Result:
    found = measure.detect_language(value)
    if found is None:  # IFEval counts an undecidable text as following
        return True, "no language detected"
    return found == args["language"], f"language detected: {found}"


def english_capital(value: str, args: dict[str, Any]) -> Result:
    if not value.isupper():
        return False, "not all capital letters"
    found = measure.detect_language(value)
    return found in (None, "en"), f"all capitals, language detected: {found}"


def english_lowercase(value: str, args: dict[str, Any]) -> Result:
    if not value.islower():
        return False, "not all lowercase letters"
    found = measure.detect_language(value)
    return found in (None, "en"), f"all lowercase, language detected: {found}"


def capital_word_frequency(value: str, args: dict[str, Any]) -> Result:
    count = sum(1 for token in measure.word_tokens(value) if token.isupper())
    return _counted("all-capital words", count, args["capital_relation"], args["capital_frequency"])


# ----- length ---------------------------------------------------------------------------------------
def number_sentences(value: str, args: dict[str, Any]) -> Result:
    return _counted("sentences", measure.count_sentences(value), args["relation"], args["num_sentences"])


def number_words(value: str, args: dict[str, Any]) -> Result:
    return _counted("words", measure.count_words(value), args["relation"], args["num_words"])


_DIVIDER = re.compile(r"\s?\*\*\*\s?")


def divided_paragraphs(value: str) -> list[str] | None:
    """Paragraphs split by ``***`` (IFEval's rule): empty ones at either end dropped; ``None`` when one
    in the middle is empty."""
    parts = _DIVIDER.split(value)
    kept = []
    for index, part in enumerate(parts):
        if part.strip():
            kept.append(part)
        elif 0 < index < len(parts) - 1:
            return None
    return kept


def number_paragraphs(value: str, args: dict[str, Any]) -> Result:
    paragraphs = divided_paragraphs(value)
    if paragraphs is None:
        return False, "an empty paragraph between *** dividers"
    return len(paragraphs) == args["num_paragraphs"], f"{len(paragraphs)} paragraphs, needs {args['num_paragraphs']}"


def nth_paragraph_first_word(value: str, args: dict[str, Any]) -> Result:
    paragraphs = value.split("\n\n")
    count = sum(1 for p in paragraphs if p.strip())
    nth, wanted = args["nth_paragraph"], args["first_word"].lower()
    if nth > count or not paragraphs[nth - 1].strip():
        return False, f"no paragraph {nth} ({count} paragraphs)"
    word = paragraphs[nth - 1].strip().split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for letter in word:
        if letter in ".,?!'\"":
            break
        first += letter.lower()
    ok = count == args["num_paragraphs"] and first == wanted
    return ok, f"{count} paragraphs (needs {args['num_paragraphs']}); paragraph {nth} starts with {first!r}"


def _check_nth(args: dict[str, Any]) -> None:
    if not 0 < args["nth_paragraph"] <= args["num_paragraphs"]:
        raise InstructionRowError(
            f"nth_paragraph must be between 1 and num_paragraphs ({args['num_paragraphs']}); got {args['nth_paragraph']}"
        )


# ----- content --------------------------------------------------------------------------------------
def count_placeholders(value: str) -> int:
    """Matches of IFEval's ``\\[.*?\\]`` (within a line), counted in one pass."""
    count = 0
    for line in value.split("\n"):
        start = line.find("[")
        while start != -1:
            end = line.find("]", start + 1)
            if end == -1:
                break
            count += 1
            start = line.find("[", end + 1)
    return count


def number_placeholders(value: str, args: dict[str, Any]) -> Result:
    return _counted("placeholders", count_placeholders(value), "at least", args["num_placeholders"])


_PPS = re.compile(r"p\.\s?p\.\s?s")
_PS = re.compile(r"p\.\s?s\.")


def postscript_match(value: str, marker: str) -> re.Match[str] | None:
    """Where IFEval finds the postscript ``marker`` (in the lowercased text; offsets are the text's)."""
    marker = marker.strip()
    pattern = {"P.P.S": _PPS, "P.S.": _PS}.get(marker) or _literal(marker.lower(), 0)
    return pattern.search(value.lower())


def postscript(value: str, args: dict[str, Any]) -> Result:
    marker = args["postscript_marker"].strip()
    found = postscript_match(value, marker) is not None
    return found, f"postscript {marker!r} {'found' if found else 'missing'}"


# ----- format ---------------------------------------------------------------------------------------
def count_line_items(value: str, marker: str) -> int:
    """Matches of IFEval's bullet regexes ``^\\s*\\*[^\\*].*$`` (marker ``*``) and ``^\\s*-.*$`` (``-``)
    under ``re.MULTILINE``, found in one pass: ``\\s*`` may cross blank lines, and the character after a
    ``*`` may be the newline, whose next line the match then takes."""
    n, count, pos = len(value), 0, 0
    while pos <= n:
        first = pos
        while first < n and value[first].isspace():
            first += 1
        if marker == "*":
            hit = first + 1 < n and value[first] == "*" and value[first + 1] != "*"
            rest = first + 2
        else:
            hit = first < n and value[first] == "-"
            rest = first + 1
        if not hit:
            newline = value.find("\n", first)
            if newline == -1:
                break
            pos = newline + 1
            continue
        count += 1
        end = value.find("\n", rest)
        if end == -1:
            break
        pos = end if value[end - 1] == "\n" else end + 1  # the match may end right after a newline
    return count


def number_bullet_lists(value: str, args: dict[str, Any]) -> Result:
    count = count_line_items(value, "*") + count_line_items(value, "-")
    return count == args["num_bullets"], f"{count} bullet points, needs exactly {args['num_bullets']}"


def constrained_response(value: str, args: dict[str, Any]) -> Result:
    value = value.strip()
    found = any(option in value for option in CONSTRAINED_RESPONSES)
    return found, "one of the allowed answers" if found else "none of: " + " / ".join(CONSTRAINED_RESPONSES)


_HIGHLIGHT = re.compile(r"\*[^\n\*]*\*")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*[^\n\*]*\*\*")


def number_highlighted_sections(value: str, args: dict[str, Any]) -> Result:
    count = sum(1 for h in _HIGHLIGHT.findall(value) if h.strip("*").strip())
    count += sum(1 for h in _DOUBLE_HIGHLIGHT.findall(value) if h.removeprefix("**").removesuffix("**").strip())
    return _counted("highlighted sections", count, "at least", args["num_highlights"])


def multiple_sections(value: str, args: dict[str, Any]) -> Result:
    splitter = args["section_spliter"].strip()
    count = len(re.findall(r"\s?" + re.escape(splitter) + r"\s?\d+\s?", value))
    return _counted(f"{splitter!r} sections", count, "at least", args["num_sections"])


def json_format(value: str, args: dict[str, Any]) -> Result:
    value = value.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        value = value.removeprefix(fence)
    value = value.removesuffix("```").strip()
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        return False, "not valid JSON"
    return True, "valid JSON"


def has_title(value: str) -> bool:
    """IFEval's title test (``<<[^\\n]+>>`` with some non-blank text), one pass per line: the greedy
    match of a line runs from its first ``<<`` to its last ``>>``."""
    for line in value.split("\n"):
        start = line.find("<<")
        if start == -1:
            continue
        end = line.rfind(">>")
        if end >= start + 3 and line[start : end + 2].lstrip("<").rstrip(">").strip():
            return True
    return False


def title(value: str, args: dict[str, Any]) -> Result:
    found = has_title(value)
    return found, "title found" if found else "no <<title>>"


def two_responses(value: str, args: dict[str, Any]) -> Result:
    parts = value.split("******")
    responses = []
    for index, part in enumerate(parts):
        if part.strip():
            responses.append(part)
        elif 0 < index < len(parts) - 1:
            return False, "an empty response between ****** separators"
    if len(responses) != 2:
        return False, f"{len(responses)} responses, needs 2"
    different = responses[0].strip() != responses[1].strip()
    return different, "two different responses" if different else "the two responses are the same"


def repeat_prompt(value: str, args: dict[str, Any]) -> Result:
    ok = value.strip().lower().startswith(args["prompt_to_repeat"].strip().lower())
    return ok, "starts with the request" if ok else "does not start with the request repeated word for word"


def end_checker(value: str, args: dict[str, Any]) -> Result:
    phrase = args["end_phrase"].strip()
    ok = value.strip().strip('"').lower().endswith(phrase.lower())
    return ok, f"ends with {phrase!r}" if ok else f"does not end with {phrase!r}"


def no_comma(value: str, args: dict[str, Any]) -> Result:
    count = value.count(",")
    return count == 0, f"{count} commas" if count else "no comma"


def quotation(value: str, args: dict[str, Any]) -> Result:
    value = value.strip()
    ok = len(value) > 1 and value[0] == '"' and value[-1] == '"'
    return ok, "wrapped in double quotes" if ok else "not wrapped in double quotes"


_CHECKS: tuple[tuple[str, dict[str, str], Callable[[str, dict[str, Any]], Result]], ...] = (
    ("keywords:existence", {"keywords": "words"}, keyword_existence),
    ("keywords:frequency", {"keyword": "str", "frequency": "int", "relation": "relation"}, keyword_frequency),
    ("keywords:forbidden_words", {"forbidden_words": "words"}, forbidden_words),
    ("keywords:letter_frequency", {"letter": "str", "let_frequency": "int", "let_relation": "relation"}, letter_frequency),
    ("language:response_language", {"language": "str"}, response_language),
    ("length_constraints:number_sentences", {"num_sentences": "int", "relation": "relation"}, number_sentences),
    ("length_constraints:number_paragraphs", {"num_paragraphs": "int"}, number_paragraphs),
    ("length_constraints:number_words", {"num_words": "int", "relation": "relation"}, number_words),
    ("length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": "int", "nth_paragraph": "int", "first_word": "str"}, nth_paragraph_first_word),
    ("detectable_content:number_placeholders", {"num_placeholders": "int"}, number_placeholders),
    ("detectable_content:postscript", {"postscript_marker": "str"}, postscript),
    ("detectable_format:number_bullet_lists", {"num_bullets": "int"}, number_bullet_lists),
    ("detectable_format:constrained_response", {}, constrained_response),
    ("detectable_format:number_highlighted_sections", {"num_highlights": "int"}, number_highlighted_sections),
    ("detectable_format:multiple_sections", {"section_spliter": "str", "num_sections": "int"}, multiple_sections),
    ("detectable_format:json_format", {}, json_format),
    ("detectable_format:title", {}, title),
    ("combination:two_responses", {}, two_responses),
    ("combination:repeat_prompt", {"prompt_to_repeat": "str"}, repeat_prompt),
    ("startend:end_checker", {"end_phrase": "str"}, end_checker),
    ("change_case:capital_word_frequency",
     {"capital_frequency": "int", "capital_relation": "relation"}, capital_word_frequency),
    ("change_case:english_capital", {}, english_capital),
    ("change_case:english_lowercase", {}, english_lowercase),
    ("punctuation:no_comma", {}, no_comma),
    ("startend:quotation", {}, quotation),
)
INSTRUCTIONS: dict[str, Instruction] = {id_: Instruction(id_, kwargs, check) for id_, kwargs, check in _CHECKS}
# Row checks beyond each kwarg's kind (a value IFEval would silently replace by a random one).
_ROW_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "keywords:letter_frequency": _check_letter,
    "length_constraints:nth_paragraph_first_word": _check_nth,
}


def resolve(instruction_id: Any, kwargs: Any) -> tuple[Instruction, dict[str, Any]]:
    """The instruction named by ``instruction_id`` and its kwargs, checked (``None`` values dropped, as
    the IFEval dataset on the Hub pads every row with all kwargs names)."""
    if not isinstance(instruction_id, str) or instruction_id not in INSTRUCTIONS:
        import difflib

        close = difflib.get_close_matches(str(instruction_id), list(INSTRUCTIONS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known ids: {', '.join(INSTRUCTIONS)}"
        raise InstructionRowError(f"unknown instruction id {instruction_id!r}{hint}")
    instruction = INSTRUCTIONS[instruction_id]
    given = {} if kwargs is None else kwargs
    if not isinstance(given, Mapping):
        raise InstructionRowError(f"{instruction_id}: kwargs must be a mapping; got {type(given).__name__}")
    args = {name: value for name, value in given.items() if value is not None}
    unknown = sorted(set(args) - set(instruction.kwargs))
    if unknown:
        raise InstructionRowError(
            f"{instruction_id}: unknown kwarg(s) {', '.join(unknown)}; it takes {', '.join(instruction.kwargs) or 'none'}"
        )
    missing = [name for name in instruction.kwargs if name not in args]
    if missing:
        raise InstructionRowError(f"{instruction_id}: missing kwarg(s) {', '.join(missing)}")
    for name, kind in instruction.kwargs.items():
        args[name] = _coerce(instruction_id, name, kind, args[name])
    if instruction_id in _ROW_CHECKS:
        try:
            _ROW_CHECKS[instruction_id](args)
        except InstructionRowError as exc:
            raise InstructionRowError(f"{instruction_id}: {exc}") from None
    return instruction, args


def _coerce(instruction_id: str, name: str, kind: str, value: Any) -> Any:
    where = f"{instruction_id}: kwarg {name}"
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) or value < 0:
            raise InstructionRowError(f"{where} must be a whole number >= 0; got {value!r}")
        return int(value)
    if kind == "relation":
        if value not in RELATIONS:
            raise InstructionRowError(f"{where} must be one of {', '.join(map(repr, RELATIONS))}; got {value!r}")
        return value
    if kind == "words":
        if isinstance(value, str) or not isinstance(value, Sequence) or not value or not all(
            isinstance(word, str) and word for word in value
        ):
            raise InstructionRowError(f"{where} must be a non-empty list of words; got {value!r}")
        return list(value)
    if not isinstance(value, str) or not value.strip():
        raise InstructionRowError(f"{where} must be a non-empty string; got {value!r}")
    return value
