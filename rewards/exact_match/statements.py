"""Completions whose final answer is not one value, whatever the reader took from them: two final statements
that disagree with no correction between them (``The answer is 55%. $\\boxed{45\\%}$``, ``<answer>5</answer> The
final answer is 6.``), a stated answer taken back after it for another value (``Antwort: 196 Moment, das ist
falsch. Richtig ist 207.``), and a last sentence that hedges (``So we get 47. Or $5\\sqrt{7}$.``, ``$3 + 4i$
unless it is 7``). Read last-wins, the policy would be paid for writing both values; exact_match scores such a
completion 0 with the reason given here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ..math.reward import find_answer
from ..text import lexicon
from ..text.extract import MAX_ANSWER_CHARS, Extraction, Unreadable, has_digit, last_math, last_number
from ..text.extract.stated import Stated
from ..text.extract.statements import final_places, has_phrase, last_phrase, without_denied_value
from ..text.sentences import last_sentence

__all__ = ["refusal", "revised"]

_MAX_GAP = 120  # characters between two statements for both to be final (more is the work between attempts)
_WINDOW = 2000  # characters before a statement where the one before it is looked for
# (the class of the words' first letters rejects a position where none starts before the lookbehind is tried)
_HEDGE_WORDS = (rf"{lexicon.pattern('hedge_adverbs')}|{lexicon.pattern('undecided')}"
                r"|(?=[uad])(?<![A-Za-z])(?:unless|although|also possible|depending on)(?![A-Za-z])")
# After a stated answer in its sentence: "(or possibly 404 meters)", "although 231 mm is also possible", "unless".
_STATED_HEDGE = re.compile(_HEDGE_WORDS, re.IGNORECASE)
# Before an unmarked answer in the last sentence: "Or $x$.", "Maybe 12." ("or" between the values read is the
# reader's business: "$x = 7$ or $x = -7$" are the solutions it joins).
_UNMARKED_HEDGE = re.compile(rf"{lexicon.pattern('hedges', single_letters=False)}|{_HEDGE_WORDS}", re.IGNORECASE)
_LAST_SENTENCE_CHARS = 400  # only the end of the text is read
_UNMARKED = frozenset({"last_math", "bare", "last_number"})


def refusal(text: str, found: Extraction, pays: Callable[[str], bool]) -> str | None:
    """Why the completion ``text`` states no single value, though ``found`` (its final answer) ``pays``; None
    when nothing refuses it. ``pays`` tells whether another value written in the text would be paid too."""
    sentence = last_sentence(text, _LAST_SENTENCE_CHARS)
    if found.how in _UNMARKED:
        first = sentence.find(found.answer)  # where the value read starts (else its first digit or span)
        first = first if first >= 0 else next((i for i, c in enumerate(sentence) if c.isdigit() or c in "$\\"), len(sentence))
        kept = without_denied_value(sentence)  # "$x = 4$, not 2.": the value after the math is denied, not offered
        closing = max(kept.rfind("$"), kept.rfind("\\)"), kept.rfind("\\]"))
        if _UNMARKED_HEDGE.search(sentence, 0, first) or _STATED_HEDGE.search(sentence, first) or (
                found.how == "last_math" and closing >= 0 and has_digit(kept[closing:])):
            return f"a hedge: the last sentence '{_short(sentence)}' offers no single value"
        return None
    found_at = _around(text, found.answer)
    if found_at is None:
        return None
    earlier, stated, later = found_at
    if stated.end >= len(text) - _LAST_SENTENCE_CHARS and _STATED_HEDGE.search(sentence):
        return f"a hedge: the last sentence '{_short(sentence)}' offers no single value"
    for first, second in ((earlier, stated), (stated, later)):
        if first is None or second is None:
            continue
        start = min(_answer_end(text, first, first.answer), second.start)
        gap = text[start : second.start]  # (an answer sentence runs on past a statement inside it)
        if len(gap.strip()) > _MAX_GAP or next(lexicon.find(gap, "corrections"), None) is not None:
            continue
        other = second.answer if first is stated else first.answer
        if not pays(other):
            return f"two final answers disagree: '{_short(other)}' and '{_short(found.answer)}' (no correction between them)"
    return _taken_back(text, stated, found.answer, pays)


def revised(text: str, found: Extraction) -> Extraction | Unreadable:
    """``found`` as corrected in its own sentence (``Antwort: 196 Moment, das ist falsch. Richtig ist 207.``,
    ``Risposta: 868 Correggo: la risposta è 912.``): the answer read after the correction, or :class:`Unreadable`
    when none can be read there. A correction in a later sentence is the shared reader's (``unless_revised``)."""
    if found.how in _UNMARKED:
        return found
    last = text.rfind(found.answer.strip()[:12])
    if last < 0 or next(lexicon.find(text[last:], "corrections"), None) is None:
        return found  # no correction after the answer's last writing: nothing to revise (the usual case)
    found_at = _around(text, found.answer)
    if found_at is None:
        return found
    stated = found_at[1]
    correction = next(lexicon.find(text, "corrections", _answer_end(text, stated, found.answer)), None)
    if correction is None or correction[0] >= stated.end or not has_digit(text[correction[1] :]):
        return found  # no correction in the sentence, or no value after it ("12, let me verify.")
    again = find_answer(text[correction[1] :])
    if again is None or isinstance(again, Unreadable):
        reason = again.reason if again is not None else "no value after it"
        return Unreadable(f"the stated answer '{_short(found.answer)}' is taken back ('{correction[2]}'): {reason}", found.how)
    return found if again.answer.strip() == found.answer.strip() else Extraction(again.answer, f"{found.how}, corrected")


def _answer_end(text: str, stated: Stated, answer: str) -> int:
    """Where ``answer`` ends inside its statement (the statement's end when it is not written there as is)."""
    at = text.find(answer.strip()[:12], stated.start)
    return at + len(answer.strip()) if 0 <= at < stated.end else stated.end


def _taken_back(text: str, stated: Stated, answer: str, pays: Callable[[str], bool]) -> str | None:
    """A correction after the stated answer followed by a value that is not paid."""
    correction = next(lexicon.find(text, "corrections", _answer_end(text, stated, answer)), None)
    if correction is None:
        return None
    tail = text[correction[1] :]
    later = last_math(tail, None) or last_number(tail, None)
    if later is None or pays(later):
        return None
    return f"the stated answer '{_short(answer)}' is taken back ('{correction[2]}') for '{_short(later)}'"


def _around(text: str, answer: str) -> tuple[Stated | None, Stated, Stated | None] | None:
    """The last statement of the text that states ``answer``, with the statement right before it (looked for in
    the stretch just before it: bounded work) and the next final statement after it; None when no final
    statement states ``answer`` (it was read elsewhere: a correction, ``####``). Only the stretch around the
    answer's last writing is read (statements farther apart are no neighbours): bounded work on long texts.
    Statements are read from the last back, and only as far as the answer asked for (each is read on its own)."""
    at = text.rfind(answer.strip())
    low, high = (0, len(text)) if at < 0 else (max(0, at - _WINDOW), min(len(text), at + len(answer) + _WINDOW))
    squeezed = " ".join(answer.split())
    later = stated = None
    for statement in _readable_from_last(text[low:high], offset=low):
        if " ".join(statement.answer.split()) == squeezed:
            stated = statement
            break
        later = statement  # the nearest readable statement after, so far
    if stated is None:
        return None
    start = max(0, stated.start - _WINDOW)
    # A stretch cut before a character that is no letter, digit or "_" (a box's "\\", a tag's "<") holds an answer
    # phrase only where the whole text holds one: each phrase found in it is found in the text too (the boundary
    # after it reads the same there), so a text with none spares the search, and so does one whose last phrase only
    # introduces the box or tag (it states nothing in the stretch).
    cut = text[stated.start]
    phrases = cut.isalnum() or cut == "_" or (has_phrase(text) and not (start == 0 and _bare_phrase_before(text, stated.start)))
    earlier = next(_readable_from_last(text[start : stated.start], phrases, start), None)
    return earlier, stated, later


def _bare_phrase_before(text: str, at: int) -> bool:
    """Whether ``text[:at]`` (``at``: where a box or a tag opens) ends on the text's last answer phrase with only blanks,
    bold marks and one "$" after it (``So the answer is $\\boxed{5}$``): that phrase states nothing there, and it is
    the stretch's last one. The stretch is read as the text is: "\\" and "<" end a word as the stretch's end does,
    and no phrase holds either, unless in the "(...)" of ``answer (...) is``, which opens within 41 characters."""
    phrase = last_phrase(text)
    if phrase is None or phrase[1] > at or "(" in text[max(0, at - 41) : at]:
        return False
    words = text[phrase[1] : at]
    return words.count("$") <= 1 and not words.strip(" \t*$")


def _readable_from_last(text: str, phrases: bool = True, offset: int = 0) -> Iterator[Stated]:
    """The final statements of ``text`` that state a readable answer (those of ``final_statements``), from the last
    back, each read only when reached, placed ``offset`` further (``phrases=False``: no answer phrase of the text is
    known to state anything)."""
    for start, end, reader in reversed(final_places(text, phrases)):
        said = reader(text, MAX_ANSWER_CHARS)
        if isinstance(said, str):
            yield Stated(start + offset, end + offset, said)


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
