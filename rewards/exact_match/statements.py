"""Two final answers that disagree: a box, an answer sentence or an answer tag stating different values side by
side with no correction between them (``The answer is 55%. $\\boxed{45\\%}$``, ``<answer>5</answer> The final
answer is 6.``). Whichever one a reader takes, the policy would be paid for writing both; exact_match scores such
a completion 0 with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from ..text import lexicon
from ..text.extract.stated import Stated, final_statements

__all__ = ["disagreeing_statements"]

_MAX_GAP = 120  # characters between two statements for both to be final (more is the work between attempts)
_CHAIN = 4  # statements read back from the end


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
