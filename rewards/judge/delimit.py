"""Completion text shown to the judge cannot forge the template's structure.

A judge request is sections: ``[Question]``, ``[Response]`` ... ``[End of response]``, ``[Criterion]``.
A completion that writes ``[End of response]`` and then its own ``[Criterion]`` or instructions would,
to a judge reading the sections, move its text out of the response. So a completion's line that opens
with a bracketed header (``[Criterion]``, ``[End of response 2]``) is shown with its brackets escaped
(``\\[Criterion\\]``), and a tag the template itself uses (``</response>`` in ``<response>{completion}
</response>``) as ``&lt;/response&gt;``; nothing else of the completion changes.
"""

from __future__ import annotations

import re

# A bracketed header at a line's start (after markdown quote/heading/emphasis marks); not a link "[a](b)".
_HEADER = re.compile(r"^([ \t>#*_]*)\[([^\[\]\n]{0,80}[A-Za-z][^\[\]\n]{0,80})\](?!\()", re.MULTILINE)
_TAG = re.compile(r"</?([A-Za-z][\w-]*)[^<>\n]{0,80}>")


def template_tags(template_text: str) -> frozenset[str]:
    """The tag names a template's own text uses (``response`` for ``<response>...</response>``)."""
    return frozenset(name.lower() for name in _TAG.findall(template_text))


def defused(text: str, tags: frozenset[str] = frozenset()) -> str:
    """``text`` with line-opening section headers and the template's own tags escaped."""
    text = _HEADER.sub(lambda m: f"{m.group(1)}\\[{m.group(2)}\\]", text)
    if tags:
        text = _TAG.sub(lambda m: "&lt;" + m.group(0)[1:-1] + "&gt;" if m.group(1).lower() in tags else m.group(0), text)
    return text
