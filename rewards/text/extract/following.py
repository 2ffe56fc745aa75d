"""The words right after a stated answer that offer another value beside it: a hedge or a guess opening them
(``\\boxed{12}. Or 13.``, ``12 (or possibly 13)``, ``Antwort: 12. Oder 13.``, ``答案是 12。或者 13。``) or a condition
(``\\boxed{12}, unless it is 7``, ``12, je nach Rundung 13``) in any language of the lexicon, or a concession
(``\\boxed{12}, though 13 would also work``).

Positions only, found in a bounded stretch after the answer (linear, whatever the text): the caller reads the
words found (:func:`rewardhub.rewards.text.extract.statements.unless_hedged`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .. import lexicon
from .spans import _SpanIndex

__all__ = ["CONCESSION", "Following", "following"]

_WINDOW = 400  # characters after the answer that are read: the words that offer another value stand right there
# Between the answer and the words after it: closers, punctuation, markdown, the end of its sentence.
_LEAD = re.compile(r"(?:[\s,;:*$.!?。！？、，；：]|\\[)\]])*")
_OPEN = re.compile(r"[(（]\s*")
_OFFER = re.compile(
    rf"(?:and/)?(?P<hedge>{lexicon.pattern('hedges')})(?:\s*,?\s*{lexicon.pattern('hedge_adverbs')})?"
    rf"|(?P<adverb>{lexicon.pattern('hedge_adverbs')})|(?P<condition>{lexicon.pattern('conditions')})",
    re.IGNORECASE,
)
# A concession after a stated answer: with a value after it, it offers that value too ("\\boxed{7} though $8$ would
# also work"; the answer phrase splits its values at one too). English only, as the phrase's "but" is.
CONCESSION = "although|though"
_CONCESSION = re.compile(rf"(?<![A-Za-z])(?:{CONCESSION})(?![A-Za-z])", re.IGNORECASE)
_VALUE_START = re.compile(r"\s+[-+\d$\\(\[{]")  # what must follow a one-letter "or" (Spanish "o 13", never "u = 5")
_END = re.compile(r"\n|[.!?](?:\s|$)|[。！？]")
_ENDS = frozenset(".!?。！？\n")  # characters that end a sentence


class Following(NamedTuple):
    """Words after a stated answer that offer another value: ``kind`` is ``"hedge"`` (an "or" or a guess) or
    ``"condition"``, ``opening`` the word that makes it one; ``start``/``end`` bound the words of the offer in the
    text (after an opening hedge; the rest of the answer's sentence for a condition inside it)."""

    kind: str
    opening: str
    start: int
    end: int


def following(text: str, end: int) -> Following | None:
    """The offer of another value that opens the words after a stated answer ending at ``end`` (in its sentence or
    the next one), or a condition later in the answer's sentence; None when there is neither."""
    window = text[end : end + _WINDOW]
    at = _LEAD.match(window).end()
    bracket = _OPEN.match(window, at)
    at = bracket.end() if bracket else at
    offer = _OFFER.match(window, at)
    if offer is None:  # "\\boxed{12}, in which case it is 13, depending on the rounding": a condition later in its sentence
        if _END.search(window, 0, at) is not None or text[max(0, end - 2) : end].rstrip(" ")[-1:] in _ENDS:
            return None  # the answer's sentence is over
        sentence = _END.search(window, at)
        stop = sentence.start() if sentence else len(window)
        condition = next(lexicon.find(window[:stop], "conditions", at), None)
        concession = _CONCESSION.search(window, at, stop)  # "\boxed{7} though $8$ would also work"
        if condition is None and concession is None:
            return None
        opening = condition[2] if condition is not None else concession.group().lower()
        return Following("condition", opening, end + at, end + _stop(window, at, closing=False))
    word = offer.group("hedge")
    if word is not None and len(word) == 1 and not _VALUE_START.match(window, offer.end()):
        return None  # "u = 5" names a variable; a one-letter "or" is one only before a value
    stop = _stop(window, offer.end(), closing=bracket is not None)
    kind = "condition" if offer.group("condition") else "hedge"
    return Following(kind, offer.group().strip(), end + offer.end(), end + stop)


def _stop(window: str, start: int, *, closing: bool) -> int:
    """Where the words of an offer end: the closing bracket of a parenthesis, else the end of their sentence (a
    sentence break inside a math span does not count)."""
    if closing:
        depth = 0
        for i in range(start, len(window)):
            depth += window[i] in "(（"
            if window[i] in ")）":
                if depth == 0:
                    return i
                depth -= 1
        return len(window)
    inside = _SpanIndex(window[start:])
    return next((m.start() for m in _END.finditer(window, start) if not inside(m.start() - start)), len(window))
