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
_BLANK_LETTERS = re.compile("[\u115f\u1160\u3164\uffa0\u2800]")
_GROUP_SPACE = re.compile("(?<=\\d)[\u00a0\u2007\u2008\u2009\u202f](?=\\d{3}(?!\\d))")
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", "0123456789+-=()ni", strict=True))
_SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎", "0123456789+-=()", strict=True))
_SCRIPT_RUN = re.compile(f"[{''.join(_SUPERSCRIPTS)}]+|[{''.join(_SUBSCRIPTS)}]+")
_STRAY_MARKS = re.compile("(?<=[A-Za-z0-9])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_WORD = re.compile(r"[^\W\d_]+")
_FOLDED_SCRIPTS = ("CYRILLIC", "GREEK")


def canonical(text: str) -> str:
    """``text`` as a reader sees it (see the module docstring for each step)."""
    text = unify_lines(text)
    if text.isascii():
        return text
    text = strip_invisible(text)
    text = _GROUP_SPACE.sub("", text)
    text = _SCRIPT_RUN.sub(_script_run, text)
    text = unicodedata.normalize("NFKC", text).replace("\u2044", "/")
    text = _STRAY_MARKS.sub("", text)
    return fold_confusables(text)


def unify_lines(text: str) -> str:
    """Every line break written as ``\\n`` (CRLF, CR, NEL, VT, FF, U+2028, U+2029)."""
    return _LINE_BREAKS.sub("\n", text)


def strip_invisible(text: str) -> str:
    """``text`` without the characters that show nothing; blank letters become spaces."""
    if text.isascii():
        return text
    text = "".join(ch for ch in text if ch.isascii() or unicodedata.category(ch) != "Cf")
    text = _SHOWN_AS_NOTHING.sub("", text)
    return _BLANK_LETTERS.sub(" ", text)


def is_blank(text: str | None) -> bool:
    """True when ``text`` shows nothing: empty, or only spaces, line breaks and invisible characters."""
    return text is None or not canonical(text).strip()


def fold_confusables(text: str) -> str:
    """Cyrillic and Greek look-alikes of Latin letters as Latin, where a reader would take them for Latin."""
    if text.isascii():
        return text
    table = latin_lookalikes()
    if not any(ch in table for ch in text):
        return text
    real_cyrillic = any(_has_real_cyrillic(word, table) for word in _WORD.findall(text))

    def fold(match: re.Match[str]) -> str:
        word = match.group()
        if not any(ch in table for ch in word):
            return word
        if any("a" <= ch.lower() <= "z" for ch in word):  # mixed with Latin letters: a disguised Latin word
            return "".join(table.get(ch, ch) for ch in word)
        if not real_cyrillic and all(ch in table and _script(ch) == "CYRILLIC" for ch in word):
            return "".join(table[ch] for ch in word)
        return word

    return _WORD.sub(fold, text)


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


def _has_real_cyrillic(word: str, table: dict[str, str]) -> bool:
    return any(ch not in table and _script(ch) == "CYRILLIC" for ch in word)


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
