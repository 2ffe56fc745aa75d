"""The last sentence of a text, as the readers of a final answer take it: what follows the last full stop (not a
decimal point), line break or CJK stop before the text's last character.
"""

from __future__ import annotations

import re

__all__ = ["last_sentence"]

# Greedy: the last sentence end is found from the end of the text backwards, in linear time.
_LAST_END = re.compile(r".*(?:[.!?](?=\s)|[。！？\n])", re.DOTALL)


def last_sentence(text: str, reach: int = 2000) -> str:
    """The last sentence among ``text``'s last ``reach`` characters, stripped (a stop ending the text ends no
    sentence before the last one)."""
    tail = text[-reach:].rstrip()
    end = _LAST_END.match(tail, 0, max(len(tail) - 1, 0))
    return tail[end.end() if end else 0 :].strip()
