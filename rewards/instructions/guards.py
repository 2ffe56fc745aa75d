"""The gaming guard: an instruction IFEval counts as followed, but only by a form that games its check.

IFEval's checks were written for honest responses; a policy finds their blind spots at once. With the
guard on (``max_repeated_share`` not null, the default) the response is read canonically first
(``rewards/text``: ``ban\\u200bana`` and ``bаnana`` with a Cyrillic ``а`` are ``banana``, ``，`` is ``,``,
a zero-width space is nothing), and an instruction IFEval counts as followed fails when:

- a counting instruction is met only by filler (:mod:`.padding`);
- ``keywords:forbidden_words``: the word is there spelled out letter by letter (``b.a.n.a.n.a``, ``b-a-n``);
- ``punctuation:no_comma``: a comma look-alike the canonical reading keeps (``‚`` U+201A, ``、``, ``،``,
  ``ꓹ``, a cedilla ``¸``, the Arabic decimal and date separators);
- ``language:response_language``: the text has no letter (IFEval follows any language with ``12345``),
  or is that language only by its function words: without the language's stop words (the ``stop-words``
  package) what remains is detected as another language (English padded with ``der die und ist``);
- ``keywords:letter_frequency`` (at least): reached only by runs of the letter (``qqqqqq``: a run counts once);
- ``detectable_format:constrained_response``: several of the allowed answers are given (``My answer is
  yes. no. maybe.``);
- bullets, sections, placeholders, highlights, titles, a quotation or a postscript that hold no letter or
  digit (only invisible characters, spaces or punctuation) do not count;
- ``detectable_format:json_format``: the JSON is not strict (``NaN``, duplicate keys) or is no object or
  array (a bare ``42`` or ``"text"`` is not an output wrapped in JSON);
- ``combination:two_responses``: the two responses differ only in case, spacing or punctuation.

With the guard off, verdicts are IFEval's exactly (tests/rewards/instructions: equal on every verdict).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from ..json_schema import strict_json
from . import text as measure
from .checks import CONSTRAINED_RESPONSES, count_line_items, postscript_match
from .padding import padded

__all__ = ["COMMA_LOOKALIKES", "gamed"]

COMMA_LOOKALIKES = "\u201a\u00b8\ua4f9\u060c\u060d\u066b\u3001\ufe51\ufe50\u2e34\u2e41\u2e32\u02cf"
_CONTENT = re.compile(r"[^\W_]")
# Letters written one by one with a separator between them: "b.a.n.a.n.a", "b-a-n-a-n-a", "b a n a n a".
_SPELLED = re.compile(r"(?<![^\W\d_])[^\W\d_](?:[.\-_·•*/ ][^\W\d_]){2,}(?![^\W\d_])")
_LETTERS = re.compile(r"[^\W\d_]")
_ANSWER = re.compile(r"\bmy answer is (yes|no|maybe)\b|(?:^|[.!?\n]\s*)(yes|no|maybe)\s*[.!?](?=\s|$)", re.IGNORECASE)
_EMPTY_BULLET = re.compile(r"\s*[*-](?:[ \t][^\w]*)?")  # a marker alone, or with punctuation only
_ALIEN_SHARE = 0.2  # the rest of a text padded with function words is a fifth or more another language's
_MIN_CONTENT_WORDS = 15  # below this, the language of the content words alone is not decided (short text)


def gamed(instruction_id: str, args: dict[str, Any], value: str, max_share: float) -> str | None:
    """Why a followed instruction was followed only by a gaming form, or ``None`` (see the module)."""
    why = padded(instruction_id, args, value, max_share)
    if why is None and instruction_id in _GUARDS:
        why = _GUARDS[instruction_id](value, args)
    return why


def _has_content(text: str) -> bool:
    return _CONTENT.search(text) is not None


def _spelled_out(value: str, args: dict[str, Any]) -> str | None:
    runs = ["".join(_LETTERS.findall(m.group())).lower() for m in _SPELLED.finditer(value)]
    found = [w for w in sorted(set(args["forbidden_words"])) if any(w.lower().replace(" ", "") in run for run in runs)]
    return f"uses {', '.join(map(repr, found))} spelled out letter by letter" if found else None


def _comma_lookalike(value: str, args: dict[str, Any]) -> str | None:
    found = sorted({ch for ch in value if ch in COMMA_LOOKALIKES})
    return f"{len(found)} comma look-alike(s): {''.join(found)!r}" if found else None


def _function_words_only(value: str, args: dict[str, Any]) -> str | None:
    if not any(ch.isalpha() for ch in value):  # IFEval follows any language instruction with "12345"
        return "no letter: nothing to be written in a language"
    language = args["language"]
    stop = _stop_words(language)
    if not stop:
        return None
    content = [w.lower() for w in measure.words(value) if w.lower() not in stop and not w.isdigit()]
    if len(content) < _MIN_CONTENT_WORDS or not _another_languages_function_words(content, language):
        return None  # (langdetect costs ~40 ms a call: run it only when the rest may be another language)
    found = measure.detect_language(" ".join(content))
    if found is None or found == language:
        return None
    return f"{language} only by its function words: the rest reads as {found}"


def _another_languages_function_words(words: list[str], language: str) -> bool:
    """Whether at least ``_ALIEN_SHARE`` of ``words`` are the function words of one other language."""
    counts: dict[str, int] = {}
    languages = _function_word_languages()
    for word in words:
        for other in languages.get(word, ()):
            counts[other] = counts.get(other, 0) + 1
    least = _ALIEN_SHARE * len(words)
    return any(count >= least for other, count in counts.items() if other != language)


@functools.cache
def _function_word_languages() -> dict[str, tuple[str, ...]]:
    """Each function word of the ``stop-words`` lists and the languages it is one of."""
    from stop_words import LANGUAGE_MAPPING

    found: dict[str, list[str]] = {}
    for language in LANGUAGE_MAPPING:
        for word in _stop_words(language):
            found.setdefault(word, []).append(language)
    return {word: tuple(languages) for word, languages in found.items()}


@functools.cache
def _stop_words(language: str) -> frozenset[str]:
    from stop_words import LANGUAGE_MAPPING, get_stop_words

    return frozenset(get_stop_words(language)) if language in LANGUAGE_MAPPING else frozenset()


def _letter_runs(value: str, args: dict[str, Any]) -> str | None:
    if args["let_relation"] != "at least":
        return None
    letter = args["letter"].lower()
    text = value.lower()
    runs = [len(m.group()) for m in re.finditer(re.escape(letter) + "{3,}", text)]
    count = text.count(letter) - sum(runs) + len(runs)  # a run of the letter counts once
    if count < args["let_frequency"]:
        return (f"reaches {args['let_frequency']} letters {letter!r} only by runs of it ({len(runs)} runs; "
                f"{count} counting each run once)")
    return None


def _several_answers(value: str, args: dict[str, Any]) -> str | None:
    given = {(m.group(1) or m.group(2)).lower() for m in _ANSWER.finditer(value)}
    if len(given) > 1:
        return f"gives several of the allowed answers ({', '.join(sorted(given))}), not one of {CONSTRAINED_RESPONSES}"
    return None


def _empty_bullets(value: str, args: dict[str, Any]) -> str | None:
    kept = "\n".join(line for line in value.split("\n") if not _EMPTY_BULLET.fullmatch(line))
    count = count_line_items(kept, "*") + count_line_items(kept, "-")
    if count != args["num_bullets"]:
        return f"{args['num_bullets']} bullet points only with empty ones ({count} hold text)"
    return None


def _empty_sections(value: str, args: dict[str, Any]) -> str | None:
    splitter = args["section_spliter"].strip()
    parts = re.split(r"\s?" + re.escape(splitter) + r"\s?\d+\s?", value)[1:]
    filled = sum(1 for part in parts if _has_content(part))
    if filled < args["num_sections"]:
        return f"{len(parts)} {splitter!r} sections, {filled} of them with content"
    return None


def _empty_placeholders(value: str, args: dict[str, Any]) -> str | None:
    filled = sum(1 for line in value.split("\n") for inside in re.findall(r"\[([^\]]*)\]", line) if _has_content(inside))
    if filled < args["num_placeholders"]:
        return f"{filled} placeholders hold a name, needs at least {args['num_placeholders']}"
    return None


def _empty_highlights(value: str, args: dict[str, Any]) -> str | None:
    single = [h for h in re.findall(r"\*[^\n\*]*\*", value) if _has_content(h)]
    double = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", value) if _has_content(h)]
    if len(single) + len(double) < args["num_highlights"]:
        return f"{len(single) + len(double)} highlighted sections with content, needs {args['num_highlights']}"
    return None


def _empty_title(value: str, args: dict[str, Any]) -> str | None:
    titles = [line[line.find("<<") : line.rfind(">>") + 2] for line in value.split("\n") if "<<" in line and ">>" in line]
    return None if any(_has_content(t) for t in titles) else "the <<title>> holds no letter or digit"


def _not_an_object(value: str, args: dict[str, Any]) -> str | None:
    stripped = value.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        stripped = stripped.removeprefix(fence)
    stripped = stripped.removesuffix("```").strip()
    try:
        document = strict_json(stripped)
    except (ValueError, RecursionError) as exc:
        return f"not strict JSON ({exc})"
    if not isinstance(document, dict | list):
        return f"a bare JSON {type(document).__name__} is no output wrapped in JSON (an object or array is)"
    return None


def _empty_quotation(value: str, args: dict[str, Any]) -> str | None:
    return None if _has_content(value.strip()[1:-1]) else "the quotation holds no letter or digit"


def _empty_postscript(value: str, args: dict[str, Any]) -> str | None:
    found = postscript_match(value, args["postscript_marker"])
    return None if found is None or _has_content(value[found.end() :]) else "the postscript says nothing"


def _same_responses(value: str, args: dict[str, Any]) -> str | None:
    parts = [p for p in value.split("******") if p.strip()]
    keys = {" ".join(_CONTENT.findall(p.lower())) for p in parts}
    return "the two responses differ only in case, spacing or punctuation" if len(keys) < 2 else None


_GUARDS: dict[str, Callable[[str, dict[str, Any]], str | None]] = {
    "keywords:forbidden_words": _spelled_out,
    "punctuation:no_comma": _comma_lookalike,
    "language:response_language": _function_words_only,
    "keywords:letter_frequency": _letter_runs,
    "detectable_format:constrained_response": _several_answers,
    "detectable_format:number_bullet_lists": _empty_bullets,
    "detectable_format:multiple_sections": _empty_sections,
    "detectable_content:number_placeholders": _empty_placeholders,
    "detectable_format:number_highlighted_sections": _empty_highlights,
    "detectable_format:title": _empty_title,
    "detectable_format:json_format": _not_an_object,
    "startend:quotation": _empty_quotation,
    "detectable_content:postscript": _empty_postscript,
    "combination:two_responses": _same_responses,
}
