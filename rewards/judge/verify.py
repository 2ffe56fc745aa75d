"""``judge`` with ``mode: verify``: a generative verifier, in the style of CompassVerifier and xVerify.

The judge is asked one question: is the completion's final answer equivalent to the reference? It
grades with a letter: A correct (1.0), B incorrect (0.0), C invalid or unverifiable (0.0: no final
answer, several answers, cut off, a refusal). The letter is read from the judge's last ``\\boxed{}``
or, with no box, from its last line ("A", "(B)", "Grade: C", "A - CORRECT", "INCORRECT"), so the
template works with general instruction models and with dedicated verifier models that answer with
the letter alone. Anything else, or a box and a word that disagree, abstains as an unparsable answer.
"""

from __future__ import annotations

import re
from typing import Any

from rewardhub import Score

from .client import Answer, shorten
from .errors import JudgeConfigError
from .reward import JudgeReward

__all__ = ["GRADES", "VerifyJudge", "read_grade"]

# letter -> (score, verdict, meaning)
GRADES = {"A": (1.0, True, "correct"), "B": (0.0, False, "incorrect"), "C": (0.0, False, "invalid")}
_WORDS = {"CORRECT": "A", "INCORRECT": "B", "INVALID": "C", "UNVERIFIABLE": "C"}
_BOX = re.compile(r"\\boxed\s*\{\s*(?:\\text(?:bf)?\s*\{\s*)?([^{}]*?)\s*\}?\s*\}")
_LINE = re.compile(
    r"""^[\s*_#>`(\[]*
        (?:(?:final\s+)?(?:grade|verdict|answer|judg(?:e)?ment|result|decision)\s*(?:is)?\s*[:=\-]?\s*)?
        [*_`(\[]*(?P<letter>[ABC])\b[*_`)\]]*
        (?:\s*[:.\-–—]?\s*\(?(?P<word>correct|incorrect|invalid|unverifiable)\)?)?
        [\s.!*_`)\]]*$""",
    re.IGNORECASE | re.VERBOSE,
)
_WORD_LINE = re.compile(r"^[\s*_#>`(\[]*(?:(?:final\s+)?(?:grade|verdict)\s*[:=\-]?\s*)?"
                        r"(?P<word>correct|incorrect|invalid|unverifiable)[\s.!*_`)\]]*$", re.IGNORECASE)


def read_grade(text: str) -> str | None:
    """The grade letter of a verifier's answer: its last ``\\boxed{}`` (a letter or a grade word), else its
    last non-empty line; ``None`` when that holds no grade, or a letter and a word that disagree."""
    boxes = _BOX.findall(text)
    if boxes:
        return _grade_of(boxes[-1])
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _grade_of(lines[-1]) if lines else None


def _grade_of(text: str) -> str | None:
    line = _LINE.match(text)
    if line is not None:
        letter = line.group("letter").upper()
        word = line.group("word")
        return letter if word is None or _WORDS[word.upper()] == letter else None
    word = _WORD_LINE.match(text)
    return _WORDS[word.group("word").upper()] if word is not None else None


class VerifyJudge(JudgeReward):
    """Is the final answer equivalent to the reference? A correct (1.0), B incorrect / C invalid (0.0)."""

    def __init__(self, *, template: str = "verify", **params: Any):
        super().__init__(template=template, **params)
        if "reference" not in self.template.fields:
            raise JudgeConfigError(f"judge mode 'verify': {self.template.origin} never shows the judge the reference "
                                   f"answer: add {{reference}}")

    def _score(self, answer: Answer) -> Score:
        said = shorten(answer.content)
        grade = read_grade(answer.content)
        if grade is None:
            return Score(None, f"unparsable verifier answer (no grade A, B or C in its last box or last line): "
                               f"{said!r}", None, "error")
        value, verdict, meaning = GRADES[grade]
        return Score(value, f"verifier: {grade} ({meaning})", verdict)
