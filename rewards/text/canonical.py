"""The one reading of policy-written text: what a person sees, whatever characters wrote it.

Every reward reads a completion through :func:`canonical` before it looks for answers, words, tags or
sections, so a policy cannot hide a word from a checker (``ban\\u200bana``), forge a letter
(Cyrillic ``а`` for Latin ``a``), or start a line a reader does not see (``\\u2028``). The canonical
form, step by step:

1. **Lines.** ``\\r\\n``, ``\\r``, NEL (U+0085), vertical tab, form feed, and the line and paragraph
   separators U+2028 / U+2029 become ``\\n``.
2. **Invisible characters go.** Format characters (Unicode category Cf: zero-width space, joiners and
   non-joiners, soft hyphen, bidi marks and embeddings, word joiner, BOM, tag characters), variation
   selectors and the combining grapheme joiner are removed; blank letters that render as nothing
   (Hangul fillers, the braille blank) become a space.
3. **Digit groups.** A no-break, narrow no-break, thin, figure or punctuation space between a digit and
   a group of exactly three digits is a thousands separator and is removed (``7\\u202f610\\u202f539`` is
   ``7610539``); other spaces stay spaces.
4. **Scripts.** Superscript and subscript runs become ``^{...}`` / ``_{...}`` (``10⁻¹¹`` is
   ``10^{-11}``, not ``10-11``), then Unicode NFKC folds compatibility forms: full-width letters, digits
   and punctuation (``Ａ``, ``９．５``), mathematical alphanumerics (``𝐀``), ligatures, the ideographic
   space; the fraction slash becomes ``/``. Combining marks left on an ASCII letter or digit (they compose
   with nothing) are removed.
5. **Look-alike letters.** Cyrillic and Greek letters that look like Latin ones (the Unicode confusables
   table, via ``confusable_homoglyphs``) become Latin inside a word that also has Latin letters
   (``bаnana``), and a word made only of such Cyrillic letters becomes Latin when the text has no word of
   real Cyrillic (``А`` in an English answer is ``A``; Russian text keeps its letters). A standalone Greek
   letter stays Greek: ``α`` is a variable, not ``a``.

Each step runs in linear time; ASCII text without ``\\r``, vertical tab or form feed comes back unchanged
at the cost of one scan.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import NamedTuple

__all__ = [
    "canonical",
    "fold_confusables",
    "is_blank",
    "latin_lookalikes",
    "strip_invisible",
    "unify_lines",
]

_LINE_BREAKS = re.compile("\r\n|[\r\u0085\u000b\u000c\u2028\u2029]")
# Not Cf but shown as nothing all the same: variation selectors, the combining grapheme joiner.
_SHOWN_AS_NOTHING = re.compile("[\u034f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_BLANKS = "\u115f\u1160\u3164\uffa0\u2800"
_BLANK_LETTERS = re.compile(f"[{_BLANKS}]")
_GROUP_SPACES = "\u00a0\u2007\u2008\u2009\u202f"
_GROUP_SPACE = re.compile(f"(?<=\\d)[{_GROUP_SPACES}](?=\\d{{3}}(?!\\d))")
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", "0123456789+-=()ni", strict=True))
_SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎", "0123456789+-=()", strict=True))
_SCRIPT_RUN = re.compile(f"[{''.join(_SUPERSCRIPTS)}]+|[{''.join(_SUBSCRIPTS)}]+")
# The combining-mark blocks whose marks, left on an ASCII letter or digit after NFKC, are removed.
_MARK_BLOCKS = ((0x300, 0x370), (0x1AB0, 0x1B00), (0x1DC0, 0x1E00), (0x20D0, 0x2100), (0xFE20, 0xFE30))
_MARK_RUN = re.compile("[" + "".join(f"{chr(low)}-{chr(high - 1)}" for low, high in _MARK_BLOCKS) + "]+")
_NON_ASCII_RUN = re.compile("[^\x00-\x7f]*")
_WORD_REST = re.compile(r"[^\W\d_]*")  # the rest of a word: letters (alphanumeric, not a decimal digit or _)
_LATIN_LETTER = re.compile("[A-Za-z\u0130\u212a]")  # or a letter whose lower case is one (İ, the Kelvin sign)
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_FOLDED_SCRIPTS = ("CYRILLIC", "GREEK")


def canonical(text: str) -> str:
    """``text`` as a reader sees it (see the module docstring for each step)."""
    if text.isascii():  # only its line breaks may change
        return text if "\r" not in text and "\x0b" not in text and "\x0c" not in text else _LINE_BREAKS.sub("\n", text)
    text = unify_lines(text)
    rest = _non_ascii(text)
    if _to_read().search(rest) is None:  # nothing any step below would change
        return text
    return _rewritten(text, rest)


_ASCII_BYTES = bytes(range(128))


def _non_ascii(text: str) -> str:
    """The non-ASCII characters of ``text``, in order: three passes in C (encode, delete, decode) that cost
    less than one character-class scan of the whole text, which then reads only these. In UTF-8 every byte of
    a non-ASCII character is >= 0x80, so deleting the ASCII bytes leaves whole characters."""
    return text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")


@functools.lru_cache(maxsize=1024)
def _rewritten(text: str, rest: str) -> str:
    """The steps that change ``text`` (``rest``: its non-ASCII characters), remembered for the last texts:
    the rewards of a set read the same completions, and each pays the rewrite once between them. Only the
    steps some character of the text calls for run: a zero-width space costs a ``str.replace``, not seven
    passes over the text."""
    present = set(_to_read().findall(rest))
    kinds = _kinds()
    if not present.isdisjoint(kinds.invisible) or not present.isdisjoint(kinds.blank):
        text = _without_invisible(text, present, kinds)
    if not present.isdisjoint(kinds.group_space):
        text = _GROUP_SPACE.sub("", text)
    if not present.isdisjoint(kinds.scripts):
        text = _SCRIPT_RUN.sub(_script_run, text)
    # Every character NFKC changes or composes is one to read; with none of them the text is NFKC already.
    unstable = present - kinds.nfkc_stable
    if unstable and not unicodedata.is_normalized("NFKC", text):
        text = _nfkc(text, unstable)
        rest = _non_ascii(text)
        present = set(_to_read().findall(rest))  # it may write marks, look-alikes (𝛂 is α), ⁄ (½), Cyrillic
    if "\u2044" in present:
        text = text.replace("\u2044", "/")
    if not present.isdisjoint(kinds.marks):
        text = _without_stray_marks(text)
    lookalikes = {char for char in present if char in latin_lookalikes()}
    if lookalikes:
        hits = _positions(text, lookalikes) if len(lookalikes) <= _FEW else (
            hit.start() for hit in _lookalike().finditer(text))
        text = _fold_words(text, hits, _real_cyrillic().search(rest) is not None)
    return text


class _Kinds(NamedTuple):
    """The characters that call for each step of :func:`_rewritten`."""

    invisible: frozenset[str]  # format characters and those shown as nothing: removed
    blank: frozenset[str]  # blank letters: a space
    group_space: frozenset[str]
    scripts: frozenset[str]
    marks: frozenset[str]  # the combining marks a stray mark on an ASCII letter or digit may be
    nfkc_stable: frozenset[str]  # those of the others NFKC leaves as they are, wherever they stand


@functools.cache
def _kinds() -> _Kinds:
    shown_as_nothing = [chr(code) for code in (0x34F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0))]
    invisible = frozenset(_format_character_list()) | frozenset(shown_as_nothing)
    named = invisible | frozenset(latin_lookalikes()) | frozenset(_BLANKS + "\u2044")
    return _Kinds(invisible, frozenset(_BLANKS), frozenset(_GROUP_SPACES),
                  frozenset(_SUPERSCRIPTS) | frozenset(_SUBSCRIPTS),
                  frozenset(chr(code) for low, high in _MARK_BLOCKS for code in range(low, high)),
                  frozenset(char for char in named if _nfkc_stable(char)))


def _nfkc_stable(char: str) -> bool:
    """Whether NFKC leaves ``char`` as it is wherever it stands: it does not change it, and ``char`` neither
    combines nor composes with the character before it. (Every second half of a canonical composition is a
    mark, or a Hangul medial vowel or final consonant.)"""
    return (unicodedata.normalize("NFKC", char) == char and unicodedata.combining(char) == 0
            and not unicodedata.category(char).startswith("M") and not "\u1161" <= char <= "\u1175"
            and not "\u11a8" <= char <= "\u11c2")


_FEW = 8  # up to this many distinct characters to remove, one str.replace each beats a character-class pass


def _without_invisible(text: str, present: set[str], kinds: _Kinds) -> str:
    """:func:`strip_invisible` for a text whose characters of interest are ``present``."""
    hidden = present & kinds.invisible
    if len(hidden) > _FEW:
        return strip_invisible(text)
    for char in hidden:
        text = text.replace(char, "")
    for char in present & kinds.blank:
        text = text.replace(char, " ")
    return text


_MANY = 64  # more places to normalise than this, and one NFKC pass over the whole text is cheaper


def _nfkc(text: str, unstable: set[str]) -> str:
    """NFKC of ``text`` whose only characters NFKC may change or compose are among ``unstable``: only the
    stretches around them are normalised. Normalisation never reaches across an ASCII character (a starter
    that composes with nothing before it), so a stretch runs from the ASCII character before such a
    character (``e`` composes with a mark after it) to the next ASCII character; the text between stretches
    holds nothing NFKC changes."""
    if len(unstable) > _FEW:
        return unicodedata.normalize("NFKC", text)
    hits = _positions(text, unstable)
    if len(hits) > _MANY:
        return unicodedata.normalize("NFKC", text)
    pieces, done = [], 0
    for at in hits:
        if at < done:
            continue
        start = at
        while start > done and not text[start - 1].isascii():
            start -= 1
        start = max(done, start - 1)  # the ASCII character before the run
        end = _NON_ASCII_RUN.match(text, at).end()
        pieces += [text[done:start], unicodedata.normalize("NFKC", text[start:end])]
        done = end
    return "".join(pieces) + text[done:]


def _without_stray_marks(text: str) -> str:
    """``text`` without the combining marks left on an ASCII letter or digit (they compose with nothing)."""
    if _MARK_RUN.search(text) is None:
        return text
    return _MARK_RUN.sub(lambda run: "" if run.start() and text[run.start() - 1] in _ASCII_ALNUM else run.group(),
                         text)


def unify_lines(text: str) -> str:
    """Every line break written as ``\\n`` (CRLF, CR, NEL, VT, FF, U+2028, U+2029)."""
    if "\r" not in text and "\x0b" not in text and "\x0c" not in text and (
            text.isascii() or ("\x85" not in text and "\u2028" not in text and "\u2029" not in text)):
        return text  # a few scans in C: most text has no other line break than \n
    return _LINE_BREAKS.sub("\n", text)


def strip_invisible(text: str) -> str:
    """``text`` without the characters that show nothing; blank letters become spaces."""
    if text.isascii():
        return text
    text = _format_characters().sub("", text)
    text = _SHOWN_AS_NOTHING.sub("", text)
    return _BLANK_LETTERS.sub(" ", text)


@functools.cache
def _format_characters() -> re.Pattern[str]:
    """Every format character (category Cf) as one character class: one scan in C instead of a loop here."""
    return _character_class(map(ord, _format_character_list()))


@functools.cache
def _format_character_list() -> tuple[str, ...]:
    """Every format character (category Cf), ascending."""
    codes = (*range(0x80, 0x20000), *range(0xE0000, 0xE0100))  # no format character lies outside these
    return tuple(chr(code) for code in codes if unicodedata.category(chr(code)) == "Cf")


@functools.cache
def _to_read() -> re.Pattern[str]:
    """A character some step of :func:`canonical` may change: a format character, one shown as nothing or
    blank, a digit-group space, a super- or subscript, one NFKC changes or composes with (combining marks,
    Hangul jamo), a look-alike letter, or any character outside the Basic Multilingual Plane. Text without
    any (most non-ASCII text: quotes, dashes, accents, CJK, maths) is canonical as it stands, found in one
    scan."""
    named = set(map(ord, "\u2044\u00a0\u2007\u2008\u2009\u202f\u115f\u1160\u3164\uffa0\u2800\u034f"))
    named |= set(map(ord, "".join(_SUPERSCRIPTS) + "".join(_SUBSCRIPTS) + "".join(latin_lookalikes())))
    jamo = {*range(0x1100, 0x1200), *range(0xA960, 0xA980), *range(0xD7B0, 0xD800)}
    named |= {code for low, high in ((0xFE00, 0xFE10), *_MARK_BLOCKS) for code in range(low, high)}  # assigned or not

    def changes(code: int) -> bool:
        char = chr(code)
        return (code in named or code in jamo or unicodedata.category(char) in ("Mn", "Mc", "Me", "Cf")
                or unicodedata.combining(char) != 0 or unicodedata.normalize("NFKC", char) != char)

    # Outside the Basic Multilingual Plane any character sends the text through every step (rare in text,
    # and a class of a few hundred ranges there costs re a comparison per range and character).
    bmp = _character_class(code for code in range(0x80, 0x10000) if changes(code)).pattern
    return re.compile(bmp + "|[\U00010000-\U0010FFFF]")


def _character_class(codes: Iterable[int]) -> re.Pattern[str]:
    """A pattern matching one of ``codes`` (ascending), written as ranges: ``re`` tests a range at once, while
    a long list of single characters outside the Basic Multilingual Plane costs it a comparison each."""
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return re.compile("[" + "".join(re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b)))
                                    for a, b in ranges) + "]")


def is_blank(text: str | None) -> bool:
    """True when ``text`` shows nothing: empty, or only spaces, line breaks and invisible characters."""
    return text is None or not canonical(text).strip()


def fold_confusables(text: str) -> str:
    """Cyrillic and Greek look-alikes of Latin letters as Latin, where a reader would take them for Latin."""
    if text.isascii():
        return text
    first = _lookalike().search(text)
    if first is None:
        return text
    return _fold_words(text, (hit.start() for hit in _lookalike().finditer(text, first.start())),
                       _real_cyrillic().search(text) is not None)


def _fold_words(text: str, hits: Iterable[int], real_cyrillic: bool) -> str:
    """``text`` with the words holding a look-alike at ``hits`` (ascending positions) folded: only those
    words are read. ``real_cyrillic``: the text has a letter of a word of real Cyrillic."""
    table = latin_lookalikes()
    pieces, done = [], 0
    for start in hits:
        if start < done:
            continue
        end = _WORD_REST.match(text, start + 1).end()
        while start > done and _in_word(text[start - 1]):
            start -= 1
        pieces += [text[done:start], _folded(text[start:end], table, real_cyrillic)]
        done = end
    return "".join(pieces) + text[done:]


def _positions(text: str, chars: Iterable[str]) -> list[int]:
    """Where each of ``chars`` (a few distinct characters) stands in ``text``, ascending: ``str.find`` runs."""
    hits = []
    for char in chars:
        at = text.find(char)
        while at >= 0:
            hits.append(at)
            at = text.find(char, at + 1)
    return sorted(hits)


def _in_word(ch: str) -> bool:
    """``ch`` belongs to a word (``[^\\W\\d_]``): alphanumeric, not a decimal digit, not ``_``."""
    return ch.isalnum() and not ch.isdecimal()


def _folded(word: str, table: dict[str, str], real_cyrillic: bool) -> str:
    if _LATIN_LETTER.search(word):  # mixed with Latin letters: a disguised Latin word
        return "".join(table.get(ch, ch) for ch in word)
    if not real_cyrillic and all(ch in table and _script(ch) == "CYRILLIC" for ch in word):
        return "".join(table[ch] for ch in word)
    return word


@functools.cache
def _lookalike() -> re.Pattern[str]:
    """One look-alike letter (a Cyrillic or Greek letter the confusables table equates with a Latin one)."""
    return _character_class(sorted(map(ord, latin_lookalikes())))


@functools.cache
def _real_cyrillic() -> re.Pattern[str]:
    """A Cyrillic letter that looks like no Latin one: the text holds a word of real Cyrillic."""
    table = latin_lookalikes()
    blocks = (range(0x400, 0x530), range(0x1C80, 0x1C90), range(0x2DE0, 0x2E00), range(0xA640, 0xA6A0),
              range(0x1E030, 0x1E090))  # the Cyrillic blocks
    return _character_class(code for block in blocks for code in block
                            if chr(code) not in table and chr(code).isalnum() and _script(chr(code)) == "CYRILLIC")


@functools.cache
def latin_lookalikes() -> dict[str, str]:
    """Each Cyrillic or Greek letter the Unicode confusables table equates with one ASCII letter."""
    from confusable_homoglyphs import confusables

    table = {}
    for char, lookalikes in confusables.confusables_data.items():
        if len(char) != 1 or _script(char) not in _FOLDED_SCRIPTS:
            continue
        latin = next((entry["c"] for entry in lookalikes if len(entry["c"]) == 1 and entry["c"].isascii()
                      and entry["c"].isalpha()), None)
        if latin is not None:
            table[char] = latin
    return table


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0]


def _script_run(match: re.Match[str]) -> str:
    run = match.group()
    if run[0] in _SUPERSCRIPTS:
        body, mark = "".join(_SUPERSCRIPTS[ch] for ch in run), "^"
    else:
        body, mark = "".join(_SUBSCRIPTS[ch] for ch in run), "_"
    return f"{mark}{body}" if len(body) == 1 else f"{mark}{{{body}}}"
