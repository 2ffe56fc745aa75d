"""Completion text shown to the judge cannot close, forge or imitate the request's sections.

A judge request is sections: ``[Question]``, ``[Response]`` ... ``[End of response]``, ``[Criterion]``
(or a custom template's ``<response>`` ... ``</response>``). A completion that writes the closing
marker and then its own ``[Criterion]`` or instructions would, to a judge that trusts the request's
structure, move its text out of the response. The markers are therefore *reserved*: no text of a
completion can spell one. The completion is first read canonically (``rewards/text``: invisible
characters gone, every line break a ``\\n``, full-width and look-alike forms folded), so what the judge
sees is what is checked; then

- any bracketed phrase naming one of the request's sections (the template's own ``[...]`` headers and the
  response markers ``[Response 2]`` / ``[End of response 2]``), written with any bracket (``[`` ``【``
  ``〔`` ``〖`` ``⟦`` ``〚``), case, spacing or ``-``/``_`` joints, anywhere in the text, is shown in
  parentheses: ``(End of response)``;
- a bracketed header opening a line, even after a list or quote marker (``- [Note]``, ``1. [Rubric]``,
  ``> [System]``), is shown in parentheses too: a section the template does not have is still a forgery;
- a tag the template uses (``response`` in ``<response>{completion}</response>``), in any spelling a
  reader would take for it (``</response\\n>``, ``</ response>``, ``< /RESPONSE >``), has its ``<``
  shown as ``&lt;``.

Nothing else of the completion changes. The same neutralising applies to every string of an agent's
episode (``episode_text``), so a message cannot forge the final-state section either.
"""

from __future__ import annotations

import functools
import re

from rewardhub.rewards.text import canonical

__all__ = ["RESPONSE_MARKERS", "defused", "neutralised", "template_headers", "template_tags"]

# The response markers of the built-in templates and of the group modes' blocks ("[Response 2]").
RESPONSE_MARKERS = frozenset({"response", "end of response"})
_OPEN, _CLOSE = "[【〔〖⟦〚", "]】〕〗⟧〛"
# What may stand between a section name's words and around it inside its brackets (line breaks too: a judge
# may read across them), never a bracket.
_GAP = rf"(?:[^\w{re.escape(_OPEN + _CLOSE)}]|_)"
# A bracketed header at a line's start, after spaces, quote/heading/emphasis marks or a list marker;
# not a link "[a](b)", not a checkbox "[x]" (two or more letters inside).
_LINE_PREFIX = r"(?:[ \t>#*_+•·-]|\d{1,3}[.)])*"  # spaces, quote/heading/emphasis marks, list markers
_LINE_HEADER = re.compile(
    rf"^({_LINE_PREFIX})[{re.escape(_OPEN)}]([^{re.escape(_OPEN + _CLOSE)}\n]{{0,160}}?"
    rf"[^\W\d_][^\W\d_][^{re.escape(_OPEN + _CLOSE)}\n]{{0,160}}?)[{re.escape(_CLOSE)}](?!\()",
    re.MULTILINE,
)
# What a line header opens with (its prefix, then a bracket), at the text's start or after a line break: found
# by a search for "\n" (a fast literal scan) instead of trying _LINE_HEADER's ^ at every character.
_LINE_OPENER = rf"{_LINE_PREFIX}[{re.escape(_OPEN)}]"
_FIRST_LINE_OPENER = re.compile(_LINE_OPENER)
_LATER_LINE_OPENER = re.compile(rf"\n{_LINE_OPENER}")
_TAG = re.compile(r"</?([A-Za-z][\w-]*)[^<>\n]{0,80}>")
_TEMPLATE_HEADER = re.compile(r"^[ \t]*\[([^\[\]\n{}]{1,80})\][ \t]*$", re.MULTILINE)
_NAME_WORDS = re.compile(r"[^\W_]+")
_HEX_ID = re.compile(r"[0-9a-f]{4,}")


def template_tags(template_text: str) -> frozenset[str]:
    """The tag names a template's own text uses (``response`` for ``<response>...</response>``)."""
    return frozenset(name.lower() for name in _TAG.findall(template_text))


def template_headers(template_text: str) -> frozenset[str]:
    """The section names a template's own ``[...]`` header lines use, with the response markers."""
    return RESPONSE_MARKERS | {_section_name(name) for name in _TEMPLATE_HEADER.findall(template_text)}


def defused(text: str, tags: frozenset[str] = frozenset(), headers: frozenset[str] = RESPONSE_MARKERS) -> str:
    """``text`` read canonically, with every section marker it could forge neutralised (see the module)."""
    return neutralised(canonical(text), tags, headers)


def neutralised(text: str, tags: frozenset[str] = frozenset(), headers: frozenset[str] = RESPONSE_MARKERS) -> str:
    """``text`` (already canonical) with section names in brackets, line-opening bracketed headers and the
    template's tags neutralised; for text that is not a completion's alone (an episode's JSON lines)."""
    if any(bracket in text for bracket in _OPEN):
        text = _section_pattern(headers).sub(lambda m: f"({m.group(1)})", text)
        if _FIRST_LINE_OPENER.match(text) is not None or _LATER_LINE_OPENER.search(text) is not None:
            text = _LINE_HEADER.sub(lambda m: f"{m.group(1)}({m.group(2)})", text)
    if tags:
        text = _tag_pattern(tags).sub("&lt;", text)
    return text


@functools.lru_cache(maxsize=64)
def _section_pattern(headers: frozenset[str]) -> re.Pattern[str]:
    """A bracketed phrase naming one of ``headers`` in any case, spacing or joints, a number or id after it
    (``[End_of-Response 2]``); one pass, no callback per bracket."""
    names = "|".join(sorted((f"{_GAP}+".join(map(re.escape, name.split())) for name in headers), key=len, reverse=True))
    return re.compile(rf"[{re.escape(_OPEN)}]({_GAP}*(?:{names})(?:{_GAP}+(?:\d+|[0-9a-f]{{4,}}))*{_GAP}*)"
                      rf"[{re.escape(_CLOSE)}]", re.IGNORECASE)


def _section_name(inner: str) -> str:
    """A bracketed phrase as a section name: lowercase, words joined by single spaces, a trailing
    number or id dropped (``[End_of-Response 2]`` is ``end of response``)."""
    words = _NAME_WORDS.findall(inner.lower())
    while words and (words[-1].isdigit() or _HEX_ID.fullmatch(words[-1])):
        words.pop()
    return " ".join(words)


@functools.lru_cache(maxsize=64)
def _tag_pattern(tags: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(sorted(map(re.escape, tags), key=len, reverse=True))
    return re.compile(rf"<(?=\s*/?\s*(?:{names})(?![\w-]))", re.IGNORECASE)
