"""Two final answers that disagree: a box, an answer sentence or an answer tag stating different values side by
side with no correction between them (``The answer is 55%. $\\boxed{45\\%}$``, ``<answer>5</answer> The final
answer is 6.``). Whichever one a reader takes, the policy would be paid for writing both; exact_match scores such
a completion 0 with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..text import lexicon
from ..text.extract.stated import Stated, final_statements

__all__ = ["disagreeing_statements", "hedged_ending"]

_MAX_GAP = 120  # characters between two statements for both to be final (more is the work between attempts)
_CHAIN = 4  # statements read back from the end
# "Or $x$.", "$3 + 4i$ unless it is 7", "vielleicht 12": the last sentence offers its value as one of several.
_HEDGE = re.compile(rf"{lexicon.pattern('hedges', single_letters=False)}|{lexicon.pattern('hedge_adverbs')}"
                    r"|(?<![A-Za-z])(?:unless|cannot decide|can't decide|not sure)(?![A-Za-z])", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n|[。！？]")
_LAST_SENTENCE_CHARS = 400  # only the end of the text is read
_UNMARKED = frozenset({"last_math", "bare", "last_number"})


def disagreeing_statements(text: str, answer: str, pays: Callable[[str], bool]) -> str | None:
    """The answer of a statement next to the one that states ``answer`` (a short gap, no correction of the
    lexicon between them) that ``pays`` refuses; None when there is none."""
    chain: list[Stated] = []
    rest = text
    while len(chain) < _CHAIN:
        found = final_statements(rest)
        if not found:
            break
        chain.insert(0, found[-1])
        rest = text[: found[-1].start]
    squeezed = " ".join(answer.split())
    where = next((i for i in range(len(chain) - 1, -1, -1) if " ".join(chain[i].answer.split()) == squeezed), None)
    if where is None:
        return None
    for earlier, later in ((where - 1, where), (where, where + 1)):
        if earlier < 0 or later >= len(chain):
            continue
        gap = text[chain[earlier].end : chain[later].start]
        if len(gap.strip()) > _MAX_GAP or next(lexicon.find(gap, "corrections"), None) is not None:
            continue
        other = chain[earlier if earlier != where else later].answer
        if not pays(other):
            return other
    return None


def hedged_ending(text: str, how: str) -> str | None:
    """The last sentence of ``text`` when a hedge opens it before the value an unmarked reading (``how``: the last
    math span, a bare answer, the last number) took from it (``So we get 47. Or $5\\sqrt{7}$.``), or when it names a value
    after the last math span (``The candidates are $9 + 6i$ and 15``); None otherwise. A stated answer (a box,
    a tag, "the answer is") is read by its own rules and is never refused here, save for ``unless``."""
    tail = text[-_LAST_SENTENCE_CHARS:].rstrip()
    ends = [match.end() for match in _SENTENCE_END.finditer(tail) if match.end() < len(tail)]
    sentence = tail[ends[-1] :] if ends else tail
    if how in _UNMARKED:
        first = next((i for i, char in enumerate(sentence) if char.isdigit() or char in "$\\"), len(sentence))
        if _HEDGE.search(sentence, 0, first):  # "Or $x$": between the values read, "or" is the reader's business
            return sentence.strip()
        closing = max(sentence.rfind("$"), sentence.rfind("\\)"), sentence.rfind("\\]"))
        if how == "last_math" and closing >= 0 and any(char.isdigit() for char in sentence[closing:]):
            return sentence.strip()
        return None
    return sentence.strip() if re.search(r"(?<![A-Za-z])unless(?![A-Za-z])", sentence, re.IGNORECASE) else None
