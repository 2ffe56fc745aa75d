"""Completions whose final answer is not one value, whatever the reader took from them: two final statements
that disagree with no correction between them (``The answer is 55%. $\\boxed{45\\%}$``, ``<answer>5</answer> The
final answer is 6.``), a stated answer taken back after it for another value (``Antwort: 196 Moment, das ist
falsch. Richtig ist 207.``), and a last sentence that hedges (``So we get 47. Or $5\\sqrt{7}$.``, ``$3 + 4i$
unless it is 7``). Read last-wins, the policy would be paid for writing both values; exact_match scores such a
completion 0 with the reason given here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..text import lexicon
from ..text.extract import Extraction, last_math, last_number
from ..text.extract.stated import Stated, final_statements

__all__ = ["refusal"]

_MAX_GAP = 120  # characters between two statements for both to be final (more is the work between attempts)
_CHAIN = 4  # statements read back from the end
_HEDGE_WORDS = rf"{lexicon.pattern('hedge_adverbs')}|(?<![A-Za-z])(?:unless|although|also possible|cannot decide|can't decide|not sure)(?![A-Za-z])"
# After a stated answer in its sentence: "(or possibly 404 meters)", "although 231 mm is also possible", "unless".
_STATED_HEDGE = re.compile(_HEDGE_WORDS, re.IGNORECASE)
# Before an unmarked answer in the last sentence: "Or $x$.", "Maybe 12." ("or" between the values read is the
# reader's business: "$x = 7$ or $x = -7$" are the solutions it joins).
_UNMARKED_HEDGE = re.compile(rf"{lexicon.pattern('hedges', single_letters=False)}|{_HEDGE_WORDS}", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n|[。！？]")
_LAST_SENTENCE_CHARS = 400  # only the end of the text is read
_UNMARKED = frozenset({"last_math", "bare", "last_number"})


def refusal(text: str, found: Extraction, pays: Callable[[str], bool]) -> str | None:
    """Why the completion ``text`` states no single value, though ``found`` (its final answer) ``pays``; None
    when nothing refuses it. ``pays`` tells whether another value written in the text would be paid too."""
    sentence = _last_sentence(text)
    if found.how in _UNMARKED:
        first = next((i for i, char in enumerate(sentence) if char.isdigit() or char in "$\\"), len(sentence))
        closing = max(sentence.rfind("$"), sentence.rfind("\\)"), sentence.rfind("\\]"))
        if _UNMARKED_HEDGE.search(sentence, 0, first) or _STATED_HEDGE.search(sentence, first) or (
                found.how == "last_math" and closing >= 0 and any(char.isdigit() for char in sentence[closing:])):
            return f"a hedge: the last sentence '{_short(sentence)}' offers no single value"
        return None
    chain = _statements(text)
    squeezed = " ".join(found.answer.split())
    where = next((i for i in range(len(chain) - 1, -1, -1) if " ".join(chain[i].answer.split()) == squeezed), None)
    if where is None:
        return None
    if _STATED_HEDGE.search(sentence) and chain[where].end >= len(text) - _LAST_SENTENCE_CHARS:
        return f"a hedge: the last sentence '{_short(sentence)}' offers no single value"
    for earlier, later in ((where - 1, where), (where, where + 1)):
        if earlier < 0 or later >= len(chain):
            continue
        gap = text[chain[earlier].end : chain[later].start]
        if len(gap.strip()) > _MAX_GAP or next(lexicon.find(gap, "corrections"), None) is not None:
            continue
        other = chain[earlier if earlier != where else later].answer
        if not pays(other):
            return f"two final answers disagree: '{_short(other)}' and '{_short(found.answer)}' (no correction between them)"
    return _taken_back(text, chain[where], found.answer, pays)


def _taken_back(text: str, stated: Stated, answer: str, pays: Callable[[str], bool]) -> str | None:
    """A correction after the stated answer (in its sentence or later) followed by a value that is not paid."""
    at = text.find(answer.strip()[:12], stated.start)
    after = at + len(answer.strip()) if 0 <= at < stated.end else stated.end
    correction = next(lexicon.find(text, "corrections", after), None)
    if correction is None:
        return None
    tail = text[correction[1] :]
    later = last_math(tail, None) or last_number(tail, None)
    if later is None or pays(later):
        return None
    return f"the stated answer '{_short(answer)}' is taken back ('{correction[2]}') for '{_short(later)}'"


def _statements(text: str) -> list[Stated]:
    """The last few statements of the text (boxes, answer sentences, answer tags), in text order."""
    chain: list[Stated] = []
    rest = text
    while len(chain) < _CHAIN:
        found = final_statements(rest)
        if not found:
            break
        chain.insert(0, found[-1])
        rest = text[: found[-1].start]
    return chain


def _last_sentence(text: str) -> str:
    tail = text[-_LAST_SENTENCE_CHARS:].rstrip()
    ends = [match.end() for match in _SENTENCE_END.finditer(tail) if match.end() < len(tail)]
    return (tail[ends[-1] :] if ends else tail).strip()


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
