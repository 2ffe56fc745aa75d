"""The ``multiple_choice`` reward: 1.0 when the one option the completion chooses is the right one.

The completion is read canonically first (``rewards/text``: full-width ``Ａ`` is ``A``, ``答案：Ｂ`` is
``答案:B``, invisible characters and look-alike letters folded). The choice is the one the completion
*asserts*, read in this order: ``\\boxed{B}`` or ``<answer>B</answer>`` (decisive); a correction after
the last answer statement ("Actually, ...: B", "不对，是 C", "Wait, it's C"); the last answer statement
("the answer is (B)", "Answer: B", "correct option is B", "I'd go with B", "答案是 B", "Respuesta: B", ...
in en/zh/ja/ko/es/de/fr/pt/it/ru); only when there is none, a weaker mention ("Option B is correct",
"it's B"); else the last line when it is short ("B", "(B) Paris", "**B**"). So the usual chat answer,
the choice and then why the other options are wrong ("Answer: B ... Option A is the smallest ..."), is
read as its choice, not as its last mention. Inside a statement an option is a letter standing as one
(``B``, ``(B)``, ``B)``, ``[B]``, ``B.``, ``答案是B``; not the article in "A good answer") or, given the
options column, an option's text. A statement naming several options ("A or B", "A o B", "A oder B",
"A ou B", "A или B", "A或B", "A through D", a list of options, the options one per line) is a hedge and
scores 0, whatever the right answer; so is a final statement that rules options out rather than
choosing one ("The answer is not B", "B is incorrect", "every option except A"), and a choice a later
correction takes back ("Answer: B. Actually, B is wrong.").
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from .exact_match import _quote
from .text import canonical, lexicon
from .text.extract import answer_tag, last_boxed

__all__ = [
    "DECISIVE",
    "MAX_LEADS",
    "MAX_STATEMENT",
    "MultipleChoice",
    "asserted_options",
    "register_rewards",
    "rules_out",
    "statements",
]

DECISIVE = ("\\boxed answer", "<answer> tag")
MAX_STATEMENT = 300  # characters of a statement read for options (a choice is short)
MAX_LEADS = 50  # the latest statements read ("it's it's it's ..." must not cost a parse per phrase)
_THINK_END = "</think>"


class _Folded:
    """A lowercase pattern matched case-blind: on the lowercased text (``re.IGNORECASE`` costs three to five
    times more on these alternations), or with the flag when lowercasing would move offsets (rare letters)."""

    def __init__(self, pattern: str, flags: int):
        self.exact = re.compile(pattern, flags)
        self.blind = re.compile(pattern, flags | re.IGNORECASE)

    def finditer(self, text: str, pos: int = 0) -> Iterator[re.Match[str]]:
        folded = text.lower()
        return self.exact.finditer(folded, pos) if len(folded) == len(text) else self.blind.finditer(text, pos)


_ANSWER_WORDS = r"(?:answer|choice|response|respuesta|antwort|r[ée]ponse|resposta|risposta|ответ|odpowied[źz])"
# An answer statement: "the answer is", "Answer:", "correct option is", "I'd go with", "答案是" ...
_STRONG_LEAD = _Folded(
    rf"""(?:\b(?:final\s+|correct\s+|right\s+|best\s+|richtige\s+|bonne\s+|correcta\s+|правильный\s+)?{_ANSWER_WORDS}s?\b
           | \b(?:final|correct|right|best)\s+options?\b)
           (?:\s+(?:is|would\s+be|will\s+be|should\s+be|must\s+be|es|ist|est|é|è)\b)?\s*(?:[:=]|\bis\b)?
       | \b(?:i(?:\s+would|\s+will|'d|'ll)\s+(?:go\s+with|choose|pick|select|say)|i\s+(?:choose|pick|select))\b
       | (?:正确答案|正確答案|答案|答え|正解|정답|답)\s*(?:是|为|為|は|은|는|:)?
       [ \t]*""",
    re.VERBOSE,
)
# A weaker mention, read only when no answer statement chooses: "Option B is correct", "it's B".
_WEAK_LEAD = _Folded(
    r"""(?:\boptions?\b|\b(?:it|that)\s+(?:is|'s|must\s+be|should\s+be)\b|\bit's\b|\bthat's\b)[ \t]*""",
    re.VERBOSE,
)
# A correction after the last answer statement takes it back: "Actually, ...", "Wait, ...", "不对，...".
_CORRECTION = _Folded(
    r"""(?:\b(?:actually|wait|correction|on\s+second\s+thought|scratch\s+that|i\s+mean|rethinking|on\s+reflection|
            eigentlich|moment\s+mal|korrektur|en\s+fait|attends|en\s+realidad|espera|na\s+verdade|anzi|in\s+realtà|
            на\s+самом\s+деле|подожди(?:те)?)\b
       | 不对|不對|其实|其實|等等|更正|いや|実は|아니|사실은)[\s,:;.!—–-]*""",
    re.VERBOSE,
)
_SENTENCE_END = re.compile(r"(?<=[^A-Z])[.!。！](?:\s|$)|[?？]|\n")  # a question mark ends even "B?"
# A clause that explains or rules out rather than chooses: the statement stops there.
_CLAUSE_BREAK = re.compile(
    r"[,;:]?\s+\(?(?:because|since|as|which|while|whereas|but|not|rather|instead|given|due|so|hence|therefore|"
    r"although|though|unlike|compared|actually|wait)\b|\s+[-–—]\s+"
    r"|,\s+(?!(?:or|and|nor|maybe|perhaps|possibly|probably)\b)(?=[a-z]{2,})"
    r"|;\s+(?!(?:or|and|nor|maybe|perhaps|possibly|probably)\b)(?=[^;\n]*\b[a-z]{3,})",
    re.IGNORECASE,
)
# Words after a bare capital that make it no article or pronoun ("A or B", "A oder B", "A through D"): the
# lexicon's hedges (rewards/text/lexicon.py) and the words of ranges, relations and lists.
_CONNECTORS = frozenset(word for word in lexicon.entries("hedges") if " " not in word) | frozenset({
    "or", "and", "nor", "vs", "versus", "then", "is", "are", "was", "would", "seems", "looks", "through", "thru",
    "to", "till", "until", "except", "but", "plus", "o", "oder", "ou", "u", "y", "e", "und", "et", "ed", "bzw",
    "oppure", "ossia", "bis", "hasta", "até", "à", "a", "jusqu'à", "al", "es", "ist", "est", "é", "è",
})
# Options as letters: ASCII letters standing alone (next to CJK text too: "答案是B", "A或B").
_LETTER = re.compile(r"(?<![A-Za-z0-9_\\])[(\[{]?([A-Za-z])[)\]}]?(?![A-Za-z0-9_'])")
_MARKUP = re.compile(r"[*_`$]|\\text\{|\\textbf\{|\\mathrm\{")
# A statement that rules out instead of choosing: "not B", "it isn't B", "B is incorrect", "(B) is not right",
# "every option except A", "all but A".
_RULES_OUT = re.compile(
    r"""^\W*(?:(?:it|that|this|the\s+answer)\s+)?(?:not|never|n't|isn't|wasn't|is\s+not|can(?:not|'t)\s+be)\b
      | ^\W*[(\[]?[A-Za-z][)\]]?\W*\s+(?:is|are|was|seems|looks|ist|es|est|é|è)
        (?:\s+not\b|n't\b|\s+(?:incorrect|wrong|false|falsch|incorrect[ao]|faux|fausse|errad[ao]|sbagliat[ao])\b)
      | ^\W*(?:不是|并非|並非)
      | ^\W*[(\[]?[A-Za-z][)\]]?\s*(?:是错|是錯|错|錯|不对|不對|不正确|不正確|不是|は間違い|는\s*틀)""",
    re.IGNORECASE | re.VERBOSE,
)
# "every option except A", "all but A": the statement rules the option out (found by substring, then checked
# as a word: an unanchored alternation searched at every position costs 25 times more).
_EXCEPT_WORDS = ("except", "excluding", "besides", "other than", "all but", "anything but", "every option but",
                 "außer", "ausser", "sauf", "excepto", "salvo", "exceto", "tranne", "eccetto", "кроме")
_EXCEPT_SCRIPTS = ("除了", "以外", "제외")
_EXCEPT = re.compile(r"\b(?:" + "|".join(w.replace(" ", r"\s+") for w in _EXCEPT_WORDS) + r")\b", re.IGNORECASE)
_EXCEPT_HINT = re.compile("|".join(dict.fromkeys([*(w.split()[0] for w in _EXCEPT_WORDS), *_EXCEPT_SCRIPTS])))


def rules_out(statement: str) -> bool:
    """Whether a statement rules options out instead of choosing one (see ``_RULES_OUT`` and ``_EXCEPT``)."""
    if _RULES_OUT.search(statement):
        return True
    hint = _EXCEPT_HINT.search(statement.lower())
    return hint is not None and (hint.group() in _EXCEPT_SCRIPTS or _EXCEPT.search(statement) is not None)
_FIRST_SENTENCE = re.compile(r"[.;!?。；！？]\s")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•+]|\d{1,2}[.)])[ \t]+(\S.*)$")
_BARE_OPTION = re.compile(r"[\s*_(\[]*[A-Za-z][)\].:]?[\s*_]*")


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
        options = _canonical_options(tuple(_options(row[self.options_column]))) if self.options_column in row else []
        letters = self.letters or string.ascii_uppercase[: len(options) or 10]
        right = self._reference(row[self.column], letters, options)
        if right is None:
            return Score(None, f"no usable reference in column {self.column!r} (a letter of {letters}, an index, "
                               f"or an option's text)")
        statement, how, chosen, retracted = "", "", set(), set()
        ruling: tuple[str, str] | None = None  # the latest statement that ruled an option out
        for statement, how, kind in statements(canonical(text)):
            if statement.endswith("?"):  # "Answer: B?" asks, it does not assert
                chosen = set()
                continue
            named = asserted_options(statement, letters, options)
            if rules_out(statement):
                if named and kind in ("decisive", "line"):
                    return Score(0.0, f"the {how} rules an option out and chooses none: {_quote(statement)}", False)
                if named and not ruling:
                    ruling = (how, statement)
                # "B is wrong", "the answer is not B": B cannot be the choice read before it (only the ruling
                # sentence counts: "not A. It's B." rules out A)
                retracted |= asserted_options(_FIRST_SENTENCE.split(statement, 1)[0], letters, options)
                continue  # "the answer is not obvious": nothing ruled out, nothing chosen
            if kind == "correction" and len(named) != 1:
                continue  # a remark after the answer, not a correction to one option
            chosen = named
            if chosen or how in DECISIVE:
                break
        if not how:
            return Score(0.0, "no choice found", False)
        if not chosen and ruling:
            return Score(0.0, f"the {ruling[0]} rules an option out and chooses none: {_quote(ruling[1])}", False)
        if not chosen:
            return Score(0.0, f"no option in the {how}: {_quote(statement)}", False)
        if len(chosen) > 1:
            named = ", ".join(sorted(chosen))
            return Score(0.0, f"several options asserted ({named}) in the {how}: {_quote(statement)}", False)
        (choice,) = chosen
        if choice in retracted:
            return Score(0.0, f"chose {choice} (from the {how}), then ruled it out: {_quote(ruling[1]) if ruling else ''}",
                         False)
        if choice == right:
            return Score(1.0, f"correct: {choice} (from the {how})", True)
        return Score(0.0, f"chose {choice}, expected {right} (from the {how})", False)

    def _reference(self, value: Any, letters: str, options: list[str]) -> str | None:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, int):
            index = value - self.index_base
            return letters[index] if 0 <= index < len(letters) else None
        text = canonical(str(value)).strip()
        if text.isdigit() and not options:
            return self._reference(int(text), letters, options)
        bare = text.strip("()[]. ").upper()
        if len(bare) == 1 and bare in letters:
            return bare
        chosen = asserted_options(text, letters, options)
        return next(iter(chosen)) if len(chosen) == 1 else None


def statements(text: str) -> Iterator[tuple[str, str, str]]:
    """Where the completion may state its choice, in the order they are read, each with where it was
    found and its kind (``decisive``, ``correction``, ``answer``, ``mention``, ``line``). A box or an
    answer tag is decisive: nothing else is read."""
    if _THINK_END in text:
        text = text.rsplit(_THINK_END, 1)[1]
    boxed = last_boxed(text, MAX_STATEMENT)
    if boxed is not None:
        yield _MARKUP.sub("", boxed).strip(), "\\boxed answer", "decisive"
        return
    tagged = answer_tag(text, MAX_STATEMENT)
    if tagged is not None:
        yield _clause(tagged), "<answer> tag", "decisive"
        return
    tail = text[-20_000:]
    strong = list(_STRONG_LEAD.finditer(tail))[::-1][:MAX_LEADS]
    after = strong[0].end() if strong else 0
    for lead in list(_CORRECTION.finditer(tail, after))[::-1][:MAX_LEADS]:
        statement = _clause(tail[lead.end() : lead.end() + MAX_STATEMENT])
        if statement:
            yield statement, f"correction {_quote(tail[lead.start() : lead.end()].strip())}", "correction"
    yield from _lead_statements(tail, strong, "answer")
    yield from _lead_statements(tail, list(_WEAK_LEAD.finditer(tail))[::-1][:MAX_LEADS], "mention")
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    items = _list_items(reversed(lines))[::-1]  # the list the text ends with
    bare = _bare_options(reversed(lines))[::-1]  # the options it ends with, one per line ("A\nB\nC\nD")
    if len(items) > 1:
        yield " / ".join(_clause(item) for item in items), "closing list", "line"
    elif len(bare) > 1:
        yield " / ".join(bare), "closing lines", "line"
    elif lines and len(lines[-1].strip()) <= 80:
        yield _clause(lines[-1]), "last line", "line"


def _lead_statements(tail: str, leads: list[re.Match[str]], kind: str) -> Iterator[tuple[str, str, str]]:
    for lead in leads:
        statement = _clause(tail[lead.end() : lead.end() + MAX_STATEMENT])
        if statement:
            yield statement, f"statement {_quote(tail[lead.start() : lead.end()].strip())}", kind


def _bare_options(lines: Iterable[str]) -> list[str]:
    """The lines ``lines`` open with that are each one option letter and nothing else."""
    found = []
    for line in lines:
        if not _BARE_OPTION.fullmatch(line):
            break
        found.append(line.strip())
    return found


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
    if rules_out(text):
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


_PUNCTUATION_TO_SPACE = str.maketrans(string.punctuation, " " * len(string.punctuation))


def _normal(text: str) -> str:
    return " ".join(text.lower().translate(_PUNCTUATION_TO_SPACE).split())


@functools.lru_cache(maxsize=1024)
def _canonical_options(options: tuple[str, ...]) -> list[str]:
    """The options read canonically (cached: a dataset repeats its option lists row after row)."""
    return [canonical(option) for option in options]


def _options(value: Any) -> list[str]:
    if isinstance(value, str) or value is None:
        return []
    items = value.tolist() if hasattr(value, "tolist") else value
    return [str(item) for item in items] if isinstance(items, Sequence) else []


@hookimpl
def register_rewards(register):
    register(MultipleChoice)
