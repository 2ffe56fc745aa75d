"""The ``multiple_choice`` reward: 1.0 when the one option the completion chooses is the right one.

The choice is read where models state it, the first of these found from the end: ``\\boxed{B}``,
``<answer>B</answer>``, "the answer is (B)" / "Answer: B" / "correct option is B" / "I'd go with B" /
"it's B", and else the last line when it is short ("B", "(B) Paris", "**B**"). Inside that statement
an option is a letter standing as one (``B``, ``(B)``, ``B)``, ``[B]``, ``B.``; not the article in
"A good answer") or, given the options column, an option's text. A statement naming several options
("A or B", "B and C", "either A or C", a list of options) is a hedge and scores 0, whatever the right
answer; so is a final statement that rules an option out rather than choosing one ("The answer is not
B", "B is incorrect").
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from .exact_match import _quote
from .text.extract import answer_tag, last_boxed

DECISIVE = ("\\boxed answer", "<answer> tag")
MAX_STATEMENT = 300  # characters of a statement read for options (a choice is short)
MAX_LEADS = 50  # the latest statements read ("it's it's it's ..." must not cost a parse per phrase)
_THINK_END = "</think>"
# "the answer is", "Answer:", "correct option is", "I'd go with", "my choice:", "it's" ... then the statement.
_LEAD = re.compile(
    r"""(?:\b(?:final\s+|correct\s+|right\s+|best\s+)?(?:answer|option|choice|response)s?\b
           (?:\s+(?:is|would\s+be|will\s+be|should\s+be|must\s+be)\b)?\s*(?:[:=]|\bis\b)?
         | \b(?:i(?:\s+would|\s+will|'d|'ll)\s+(?:go\s+with|choose|pick|select|say)
           | i\s+(?:choose|pick|select)|(?:it|that)\s+(?:is|'s|must\s+be|should\s+be)|it's|that's)\b)
       [ \t]*""",
    re.IGNORECASE | re.VERBOSE,
)
_SENTENCE_END = re.compile(r"(?<=[^A-Z])[.!](?:\s|$)|\?|\n")  # a question mark ends even "B?"
# A clause that explains or rules out rather than chooses: the statement stops there.
_CLAUSE_BREAK = re.compile(
    r"[,;:]?\s+\(?(?:because|since|as|which|while|whereas|but|not|rather|instead|given|due|so|hence|therefore|"
    r"although|though|unlike|compared)\b|\s+[-–—]\s+|,\s+(?!(?:or|and|nor|maybe|perhaps|possibly|probably)\b)(?=[a-z]{2,})",
    re.IGNORECASE,
)
# Words after a bare capital that make it an article or a pronoun ("A good answer", "I think").
_CONNECTORS = frozenset({"or", "and", "nor", "vs", "versus", "then", "is", "are", "was", "would", "seems", "looks"})
_LETTER = re.compile(r"(?<![\w\\])[(\[{]?([A-Za-z])[)\]}]?(?![\w'])")
_MARKUP = re.compile(r"[*_`$]|\\text\{|\\textbf\{|\\mathrm\{")
# A statement that rules out instead of choosing: "not B", "it isn't B", "B is incorrect", "(B) is not right".
_RULES_OUT = re.compile(
    r"""^\W*(?:(?:it|that|this|the\s+answer)\s+)?(?:not|never|n't|isn't|wasn't|is\s+not|can(?:not|'t)\s+be)\b
      | ^\W*[(\[]?[A-Za-z][)\]]?\W*\s+(?:is|are|was|seems|looks)(?:\s+not\b|n't\b|\s+(?:incorrect|wrong|false)\b)""",
    re.IGNORECASE | re.VERBOSE,
)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•+]|\d{1,2}[.)])[ \t]+(\S.*)$")


class MultipleChoice(Reward):
    """The chosen option (letter or option text) == the reference; several options asserted score 0."""

    name = "multiple_choice"
    description = "1.0 if the one option the completion asserts (letter or option text) is the reference"

    def __init__(
        self,
        *,
        column: str = "solution",
        options_column: str = "choices",
        letters: str | None = None,
        index_base: int = 0,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if letters is not None and (not letters.isalpha() or len(set(letters.upper())) != len(letters)):
            raise ConfigError(f"multiple_choice: letters must be distinct letters such as 'ABCD'; got {letters!r}")
        if index_base not in (0, 1):
            raise ConfigError(f"multiple_choice: index_base must be 0 or 1; got {index_base!r}")
        self.column = column
        self.options_column = options_column
        self.letters = None if letters is None else letters.upper()
        self.index_base = index_base

    def score_sample(self, text: str, row: Row) -> Score:
        options = _options(row[self.options_column]) if self.options_column in row else []
        letters = self.letters or string.ascii_uppercase[: len(options) or 10]
        right = self._reference(row[self.column], letters, options)
        if right is None:
            return Score(None, f"no usable reference in column {self.column!r} (a letter of {letters}, an index, "
                               f"or an option's text)")
        statement, how, chosen = "", "", set()
        for statement, how in statements(text):
            if _RULES_OUT.search(statement):
                return Score(0.0, f"the {how} rules an option out and chooses none: {_quote(statement)}", False)
            if statement.endswith("?"):  # "Answer: B?" asks, it does not assert
                chosen = set()
                continue
            chosen = asserted_options(statement, letters, options)
            if chosen or how in DECISIVE:
                break
        if not how:
            return Score(0.0, "no choice found", False)
        if not chosen:
            return Score(0.0, f"no option in the {how}: {_quote(statement)}", False)
        if len(chosen) > 1:
            named = ", ".join(sorted(chosen))
            return Score(0.0, f"several options asserted ({named}) in the {how}: {_quote(statement)}", False)
        (choice,) = chosen
        if choice == right:
            return Score(1.0, f"correct: {choice} (from the {how})", True)
        return Score(0.0, f"chose {choice}, expected {right} (from the {how})", False)

    def _reference(self, value: Any, letters: str, options: list[str]) -> str | None:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, int):
            index = value - self.index_base
            return letters[index] if 0 <= index < len(letters) else None
        text = str(value).strip()
        if text.isdigit() and not options:
            return self._reference(int(text), letters, options)
        bare = text.strip("()[]. ").upper()
        if len(bare) == 1 and bare in letters:
            return bare
        chosen = asserted_options(text, letters, options)
        return next(iter(chosen)) if len(chosen) == 1 else None


def statements(text: str) -> Iterator[tuple[str, str]]:
    """Where the completion may state its choice, latest first, each with where it was found. A box
    or an answer tag is decisive: nothing before it is read."""
    if _THINK_END in text:
        text = text.rsplit(_THINK_END, 1)[1]
    boxed = last_boxed(text, MAX_STATEMENT)
    if boxed is not None:
        yield _MARKUP.sub("", boxed).strip(), "\\boxed answer"
        return
    tagged = answer_tag(text, MAX_STATEMENT)
    if tagged is not None:
        yield _clause(tagged), "<answer> tag"
        return
    tail = text[-20_000:]
    for lead in list(_LEAD.finditer(tail))[::-1][:MAX_LEADS]:
        statement = _clause(tail[lead.end() : lead.end() + MAX_STATEMENT])
        if statement:
            yield statement, f"statement {_quote(lead.group(0).strip())}"
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    items = _list_items(reversed(lines))[::-1]  # the list the text ends with
    if len(items) > 1:
        yield " / ".join(_clause(item) for item in items), "closing list"
    elif lines and len(lines[-1].strip()) <= 80:
        yield _clause(lines[-1]), "last line"


def _list_items(lines: Iterable[str]) -> list[str]:
    """The items of the list ``lines`` open with ("- A", "2) B" lines), up to the first other line."""
    items = []
    for line in lines:
        item = _LIST_ITEM.match(line)
        if item is None:
            break
        items.append(item.group(1))
    return items


def _clause(text: str) -> str:
    """The statement's choosing part: up to the sentence's end or a clause that explains or rules out; a
    statement that opens a list is all its items ("Answer:" then "- A" / "- B")."""
    items = _list_items(text.strip().splitlines())
    if len(items) > 1:
        return " / ".join(_clause(item) for item in items)
    text = _MARKUP.sub("", text).strip()
    end = _SENTENCE_END.search(text)
    text = text[: end.start() + (1 if end and text[end.start()] in ".?" else 0)] if end else text
    if _RULES_OUT.search(text):
        return text  # whole: the negation is what it says
    cut = _CLAUSE_BREAK.search(text)
    return (text[: cut.start()] if cut else text).strip()


def asserted_options(statement: str, letters: str, options: list[str]) -> set[str]:
    """The option letters a statement asserts: letters standing alone and options' texts."""
    chosen = set()
    alone = len(statement.strip(" .!:*()[]")) == 1  # the whole statement is one letter: "b", "B."
    for match in _LETTER.finditer(statement):
        letter = match.group(1)
        marked = match.group(0) != letter or alone  # (b), [B], B), or the letter alone
        if letter.upper() not in letters or (letter.islower() and not marked):
            continue
        if not marked and letter in "AI" and _reads_as_word(statement, match.end()):
            continue
        chosen.add(letter.upper())
    chosen |= _options_named(statement, letters, options)
    return chosen


def _reads_as_word(statement: str, end: int) -> bool:
    """True when a bare ``A`` / ``I`` is the article or pronoun: a lowercase word follows that is no connector."""
    following = re.match(r"\s+([a-z][a-z']*)", statement[end:])
    return following is not None and following.group(1) not in _CONNECTORS


def _options_named(statement: str, letters: str, options: list[str]) -> set[str]:
    """Letters of the options whose text the statement contains as whole words (longest matches win)."""
    if not options:
        return set()
    normal = f" {_normal(statement)} "
    spans = []
    for index, option in enumerate(options[: len(letters)]):
        needle = _normal(option)
        if not needle:
            continue
        start = normal.find(f" {needle} ")
        while start != -1:
            spans.append((start, start + len(needle) + 1, letters[index]))
            start = normal.find(f" {needle} ", start + 1)
    kept = {letter for s, e, letter in spans if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _ in spans)}
    return kept


def _normal(text: str) -> str:
    return " ".join(text.lower().translate(str.maketrans(string.punctuation, " " * len(string.punctuation))).split())


def _options(value: Any) -> list[str]:
    if isinstance(value, str) or value is None:
        return []
    items = value.tolist() if hasattr(value, "tolist") else value
    return [str(item) for item in items] if isinstance(items, Sequence) else []


@hookimpl
def register_rewards(register):
    register(MultipleChoice)
