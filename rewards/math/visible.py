"""What a reader sees of a LaTeX answer: struck-out, hidden (white) and commented-out text taken away.

A policy can put the gold in ``\\sout{}``, ``\\cancel{}``, ``\\phantom{}``, a ``\\color{white}`` group or a ``%``
comment beside the value it shows: a parser reads the hidden value, a reader never sees it. The answer is what
remains visible; an answer with nothing visible left is no answer.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

# Commands whose argument is struck out or not drawn (``\\cancelto{a}{x}`` shows its ``a``: not among them).
_HIDING = re.compile(
    r"\\(?:sout|st|xout|stkout|cancel|bcancel|xcancel|phantom|hphantom|vphantom)(?![A-Za-z])\s*(?=\{)"
)
_TEXTCOLOR = re.compile(r"\\textcolor(?![A-Za-z])\s*(?:\[[^\]{}]*\])?\s*\{([^{}]*)\}\s*(?=\{)")
_COLOR = re.compile(r"\\color(?![A-Za-z])\s*(?:\[[^\]{}]*\])?\s*\{([^{}]*)\}")
# The page's colour (white) in any model: the name, rgb 1,1,1, RGB 255,255,255, HTML FFFFFF, gray 1, or none.
_BACKGROUND = re.compile(
    r"white(?:!100)?|transparent|none|(?:1(?:\.0*)?,){2}1(?:\.0*)?|255,255,255|f{6}|1(?:\.0*)?"
)
_COMMENT = re.compile(r"(?<!\\)%(?=[ \t]*\S)[^\n]*")  # an unescaped % with text after it on its line
# "32% of them" is a percentage in prose; any other % with text after it is a comment ("12 % 13", "y = 1 % y = 2")
_PERCENT_OF = re.compile(r"^[^\\{}=%]*\d\s?%\s+[^\W\d_]+(?:\s+[^\W\d_]+)*\s*[.!]?\s*$")
_EMPTY_GROUP = re.compile(r"(?<![\\\w}^_])\{\s*\}")  # what a hidden group leaves: {}13 is 13


def visible(answer: str) -> str:
    """``answer`` as a reader sees it rendered: ``%`` comments, struck-out and invisible arguments and text
    coloured white (a ``\\color`` to the end of its group, as TeX does) removed; other colours kept as text."""
    if "\\" not in answer and "%" not in answer:
        return answer
    if not _PERCENT_OF.match(answer):
        answer = _COMMENT.sub("", answer)
    while True:
        hidden = _HIDING.search(answer)
        coloured = _TEXTCOLOR.search(answer)
        switch = _COLOR.search(answer)
        found = [m for m in (hidden, coloured, switch) if m is not None]
        if not found:
            return _EMPTY_GROUP.sub("", answer).strip()
        first = min(found, key=lambda m: m.start())
        if first is switch:  # \color{c} colours the rest of its group
            end = _group_end(answer, first.end()) if _hidden(first.group(1)) else first.end()
            answer = answer[: first.start()] + answer[end:]
            continue
        close = _group_end(answer, first.end() + 1)
        inside = answer[first.end() + 1 : close]
        shown = inside if first is coloured and not _hidden(first.group(1)) else ""
        answer = answer[: first.start()] + shown + answer[close + 1 :]


def _hidden(colour: str) -> bool:
    return _BACKGROUND.fullmatch("".join(colour.split()).lower()) is not None


def _group_end(text: str, start: int) -> int:
    """The index of the ``}`` closing the group ``text[start:]`` is in (``len(text)`` when none does)."""
    depth = 0
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return len(text)
