"""Boxes: the last ``\\boxed{...}`` (or ``\\fbox``), with the boxes just before it that form one answer with it.

Braces are matched by counting and each stretch of text is scanned at most once: linear on any input.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from decimal import Decimal

from .answers import _OR_WORD, MAX_ANSWER_CHARS, OR, _bounded

__all__ = ["boxed", "last_boxed"]

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_BRACE = re.compile(r"[{}]")
_TOKEN = re.compile(r"[^\s$}]*")
# Between two boxes (or spans) that together form one answer: only separators and spacing.
_GAP_NOISE = re.compile(r"\\(?:quad|qquad|text\w*|mbox|mathrm)(?![A-Za-z])|\\[,;:! ()\[\]]|[\s$,;.&{}()]")
_SEPARATORS = frozenset({"and", "or"})
_HEDGE_JOINERS = frozenset({"alternatively", "possibly", "perhaps", "maybe"})  # between boxes, they offer an "or"
_DECIMAL = re.compile(r"-?\d{1,30}(?:\.\d{1,30})?")
_MAX_GAP = 80
_MAX_GAP_WORDS = 3


def last_boxed(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """Content of the last closed ``\\boxed{...}`` (or ``\\fbox{}``, ``\\boxed 5``), or None.

    Braces are matched by counting. When the last box is unclosed (a truncated completion), earlier
    boxes are tried; each stretch of text is scanned at most once, so the whole call is linear.
    Empty boxes are skipped; an over-long last box gives None (no fall back to an earlier one).
    """
    box = next(_boxes(text), None)
    return None if box is None else _bounded(box[2], max_chars)


def boxed(text: str, max_chars: int | None = MAX_ANSWER_CHARS) -> str | None:
    """The last box, with the boxes just before it when only separators stand between them.

    ``\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}`` is one answer, ``(2, 2), (6, 2)``;
    ``\\boxed{1} then \\boxed{2}`` is ``2`` (a word other than "and"/"or" separates them).
    """
    joined = _last_boxes(text)
    return None if joined is None else _bounded(joined, max_chars)


@functools.lru_cache(maxsize=256)
def _last_boxes(text: str) -> str | None:
    """:func:`boxed` before its length bound, remembered for the last texts read (a completion's final answer
    is read again by the checks of it)."""
    parts: list[str] = []  # from the last box back
    gaps: list[str] = []
    previous_start = None
    for start, end, content in _boxes(text):
        if previous_start is not None:
            if not _separator_gap(text[end:previous_start]):
                break
            gaps.append(text[end:previous_start])
        parts.append(content)
        previous_start = start
    return _joined(parts, gaps) if parts else None


def _joined(parts: list[str], gaps: list[str]) -> str:
    """Parts found from the last back, with the gaps between them, as one answer in reading order: joined by
    ``, `` (``\\boxed{-2} and \\boxed{1}``) or by ``OR`` where the gap offers an alternative (``$1$ or $2$``);
    a part repeated right after itself (``\\boxed{3} and \\boxed{3}``) counts once."""
    out = [parts[-1]]
    for part, gap in zip(reversed(parts[:-1]), reversed(gaps), strict=True):
        if part != out[-1] and not _same_number(part, out[-1]):
            out += [OR if _OR_WORD.search(gap) else ", ", part]
    return "".join(out)


def _same_number(a: str, b: str) -> bool:
    """``533`` and ``533.0``: one decimal number written twice (a restatement, not a second value)."""
    if not (_DECIMAL.fullmatch(a) and _DECIMAL.fullmatch(b)):
        return False
    return Decimal(a) == Decimal(b)


def _boxes(text: str) -> Iterator[tuple[int, int, str]]:
    """Non-empty closed boxes from the last to the first: (start, end after the box, stripped content)."""
    end = len(text)  # no box starting before `end` can close after it (see below)
    found = [text.rfind(command) for command in _BOX_COMMANDS]  # the last of each command not yet taken
    while True:
        start = max(found)
        if start < 0:
            return
        which = found.index(start)  # (no two commands start at one place)
        command = _BOX_COMMANDS[which]
        found[which] = text.rfind(command, 0, start)  # the other command's position stays valid
        command_end = start + len(command)
        i = command_end
        while i < end and text[i] in " \t":
            i += 1
        if i < end and text[i] == "{":
            close = _matching_brace(text, i, end)
            if close is None:
                # This box never closes before `end`, so any earlier box either closes before it
                # starts or encloses it and cannot close either: later scans may stop here.
                end = start
                continue
            content, box_end = text[i + 1 : close].strip(), close + 1
        elif command_end < i < end:  # "\boxed 5": the token after the space
            token = _TOKEN.match(text, i, end)
            content, box_end = token.group(), token.end()
        else:
            continue
        if content:
            yield start, box_end, content
            end = start


def _matching_brace(text: str, open_index: int, end: int) -> int | None:
    """Index of the ``}`` closing the ``{`` at ``open_index``, searching before ``end``."""
    depth = 0
    for match in _BRACE.finditer(text, open_index, end):
        depth += 1 if match.group() == "{" else -1
        if depth == 0:
            return match.start()
    return None


def _separator_gap(gap: str, other_words: int = _MAX_GAP_WORDS) -> bool:
    """Whether the text between two boxes or spans joins them into one answer: nothing but spacing, or one
    or two separators (a comma, "and", "or") with at most ``other_words`` other words on the same line
    (``papers and``, ``for part (a) and`` between boxes). ``then``, ``was wrong, the answer is``,
    ``no no no``, ``and and or thus`` and a new sentence (``.\\nTherefore,``) do not join."""
    if len(gap) > _MAX_GAP:
        return False
    words = _GAP_NOISE.sub(" ", gap).split()
    separators = sum(word.lower() in _SEPARATORS for word in words) + gap.count(",") + gap.count(";")
    hedges = sum(word.lower() in _HEDGE_JOINERS for word in words)  # "(alternatively", ", or perhaps"
    others = len(words) - sum(word.lower() in _SEPARATORS for word in words) - hedges
    if others and "\n" in gap:
        return False
    return not words or ((0 < separators <= 2 or (hedges and not separators)) and others <= other_words)


def _open_box(text: str) -> int:
    """Start of the last box command when its brace never closes (a completion cut off inside it), else -1."""
    command, start = max(((command, text.rfind(command)) for command in _BOX_COMMANDS), key=lambda found: found[1])
    if start < 0:
        return -1
    i = start + len(command)
    while i < len(text) and text[i] in " \t":
        i += 1
    return start if i < len(text) and text[i] == "{" and _matching_brace(text, i, len(text)) is None else -1
