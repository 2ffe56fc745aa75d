"""Two final answers that disagree: a box and an answer sentence (or an answer tag) stating different values side
by side with no correction between them (``The answer is 55%. $\\boxed{45\\%}$``). Read last-wins, the policy
would be paid for writing both; exact_match scores such a completion 0 with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from ..text import lexicon
from ..text.extract.stated import final_statements

__all__ = ["disagreeing_statements"]

_MAX_GAP = 120  # characters between two statements for both to be final (more is the work between attempts)


def disagreeing_statements(text: str, answer: str, pays: Callable[[str], bool]) -> str | None:
    """The answer of the statement right before the final one when it is not paid (``pays``) while the final one
    (``answer``) is, with at most a short gap and no correction of the lexicon between them; else None."""
    statements = final_statements(text)
    if len(statements) < 2 or not any(" ".join(s.answer.split()) == " ".join(answer.split()) for s in statements):
        return None
    last = statements[-1]
    earlier = final_statements(text[: last.start])
    if not earlier:
        return None
    before = earlier[-1]
    gap = text[before.end : last.start]
    if len(gap.strip()) > _MAX_GAP or next(lexicon.find(gap, "corrections"), None) is not None:
        return None
    return None if pays(before.answer) else before.answer
