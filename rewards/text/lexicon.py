"""One multilingual lexicon of the words around an answer: answer phrases, hedges, corrections, estimates.

A policy states, hedges and takes back its answers in every language it was trained on: ``答案是 12``,
``12 oder 13``, ``\\boxed{12}。不对，重新算一下，应该是 13``. Every reward that reads a stated answer (``math``,
``exact_match``, ``majority_vote``, ``multiple_choice``) looks these words up here, so a hedge or a
correction in Russian is caught by all of them or by none. The data are plain tuples per language (ISO
639-1 codes), written canonically (see :func:`rewardhub.rewards.text.canonical`: full-width forms folded,
so ``答：`` is stored as ``答:``); :func:`find` and :func:`pattern` match them with the right boundaries
for each script: a word of a script written with spaces (Latin, Cyrillic, Greek, Hangul) must stand
alone, a word of a script written without them (Chinese, Japanese) is found inside a run of text.

Kinds of entries:

- ``ANSWER_PHRASES``: what introduces the final answer (``the answer is``, ``答案是``, ``Antwort:``).
- ``HEDGES``: words that, between two values, offer both (``or``, ``oder``, ``или``, ``或``, ``か``, ``또는``):
  an answer ``12 o 13`` states no single value.
- ``HEDGE_ADVERBS``: words that make a value a guess among others (``maybe``, ``vielleicht``, ``可能``).
- ``CORRECTIONS``: words that take back what was just stated (``wait``, ``scratch that``, ``不对``, ``重新算``,
  ``Moment``, ``en fait``, ``на самом деле``): the stated answer before them is not final.
- ``NEGATIONS``: words that deny a value: the one right after them (``not``, ``isn't``, ``nicht``, ``n'est pas``,
  ``не``, ``不是``), or in Japanese and Korean the one right before them (``12ではない``, ``12가 아니다``).
- ``CONDITIONS``: words that make a stated answer hold only in some case (``unless``, ``depending on``, ``除非``,
  ``je nach``, ``à moins que``): followed by a value, the answer is one of several.
- ``UNDECIDED``: words that leave the choice between values open (``I cannot decide``, ``not sure``, ``不确定``,
  ``nicht sicher``): a value guessed from a sentence that says so is no answer.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = [
    "ANSWER_PHRASES",
    "CONDITIONS",
    "CORRECTIONS",
    "HEDGES",
    "HEDGE_ADVERBS",
    "LANGUAGES",
    "KINDS",
    "NEGATIONS",
    "UNDECIDED",
    "any_of",
    "entries",
    "find",
    "find_last",
    "pattern",
    "single_letters",
    "spaced",
]

LANGUAGES = ("en", "zh", "ja", "ko", "es", "de", "fr", "pt", "it", "ru")

ANSWER_PHRASES: dict[str, tuple[str, ...]] = {
    "en": ("the answer is", "the final answer is", "answer:", "final answer:", "the result is", "the solution is"),
    "zh": ("答案是", "答案为", "答案:", "答案可能是", "答案应该是", "答案应为", "答:", "最终答案是", "最终答案:", "结果是", "结果为", "所以答案是", "因此答案是",
           "故答案为"),
    "ja": ("答えは", "答え:", "答:", "解答:", "正解は", "よって答えは", "したがって答えは"),
    "ko": ("답은", "정답은", "답:", "정답:", "따라서 답은"),
    "es": ("la respuesta es", "respuesta:", "la respuesta final es", "el resultado es", "respuesta final:"),
    "de": ("die antwort ist", "die antwort lautet", "antwort:", "das ergebnis ist", "ergebnis:", "lösung:"),
    "fr": ("la réponse est", "réponse:", "réponse :", "la réponse finale est", "le résultat est", "résultat:"),
    "pt": ("a resposta é", "resposta:", "a resposta final é", "o resultado é", "resultado:"),
    "it": ("la risposta è", "risposta:", "la risposta finale è", "il risultato è", "risultato:"),
    "ru": ("ответ:", "ответ -", "ответ —", "ответ равен", "ответ будет", "итоговый ответ:", "результат:"),
}  # fmt: skip

HEDGES: dict[str, tuple[str, ...]] = {
    "en": ("or", "and/or"),
    "zh": ("或", "或者", "或是", "也可能是", "也许是", "抑或"),
    "ja": ("か", "または", "もしくは", "あるいは", "それとも", "又は"),
    "ko": ("또는", "혹은", "아니면"),
    "es": ("o", "u", "o bien"),
    "de": ("oder", "bzw.", "beziehungsweise"),
    "fr": ("ou", "ou bien"),
    "pt": ("ou",),
    "it": ("o", "oppure", "ovvero"),
    "ru": ("или", "либо"),
}  # fmt: skip

HEDGE_ADVERBS: dict[str, tuple[str, ...]] = {
    "en": ("maybe", "perhaps", "possibly", "probably", "alternatively"),
    "zh": ("可能", "也许", "大概", "或许"),
    "ja": ("たぶん", "多分", "おそらく", "かもしれない"),
    "ko": ("아마", "아마도"),
    "es": ("quizás", "quizá", "tal vez", "posiblemente"),
    "de": ("vielleicht", "eventuell", "möglicherweise"),
    "fr": ("peut-être", "probablement"),
    "pt": ("talvez", "possivelmente"),
    "it": ("forse", "probabilmente"),
    "ru": ("возможно", "может быть", "наверное"),
}  # fmt: skip

CORRECTIONS: dict[str, tuple[str, ...]] = {
    "en": ("wait", "actually", "oops", "mistake", "error", "wrong", "incorrect", "correction", "should be", "instead",
           "second thought", "hold on", "hmm", "scratch that", "no,", "nope", "let me", "redo", "recount", "recheck",
           "recompute", "recalculate", "recalculating", "reconsider", "reconsidering", "rethink", "revise", "revised",
           "miscalculated", "miscalculation", "miscounted", "misread", "slipped", "typo", "not right", "not correct",
           "re-examine", "rechecking", "recomputing", "recounting", "redoing", "update", "updated", "on reflection"),
    "zh": ("不对", "不对劲", "错了", "算错", "重新算", "重新计算", "重算", "更正", "纠正", "等等", "等一下", "稍等", "其实",
           "实际上", "应该是", "应为", "有误", "修正", "检查一下", "再算"),
    "ja": ("待って", "いや", "間違", "訂正", "やり直", "計算し直", "再計算", "実は", "ではなく", "ちょっと待"),
    "ko": ("잠깐", "아니", "틀렸", "다시 계산", "정정", "수정", "사실은", "실수"),
    "es": ("espera", "en realidad", "corrijo", "corrección", "me equivoqué", "error", "perdón", "mejor dicho",
           "recalculando", "debería ser"),
    "de": ("warte", "moment", "eigentlich", "fehler", "korrektur", "korrigiere", "falsch", "ich habe mich verrechnet",
           "nochmal", "sollte sein", "stattdessen"),
    "fr": ("attends", "attendez", "en fait", "erreur", "correction", "je me suis trompé", "je corrige", "recalculons",
           "plutôt", "devrait être"),
    "pt": ("espera", "espere", "na verdade", "errei", "erro", "correção", "corrigindo", "recalculando", "deveria ser"),
    "it": ("aspetta", "in realtà", "errore", "correggo", "correzione", "ho sbagliato", "ricalcolo", "dovrebbe essere"),
    "ru": ("подожди", "постой", "стоп", "на самом деле", "ошибка", "ошибся", "исправлю", "исправление", "неверно",
           "пересчитаем", "должно быть"),
}  # fmt: skip

NEGATIONS: dict[str, tuple[str, ...]] = {
    "en": ("not", "never", "isn't", "aren't", "wasn't", "cannot", "can't", "couldn't", "won't",
           "does not equal", "doesn't equal", "other than", "≠", "!=", "=/="),
    "zh": ("不是", "不等于", "不可能是", "不会是", "并非", "绝不是"),
    "ja": ("ではない", "ではありません", "じゃない", "じゃありません", "ではなく"),  # after the value
    "ko": ("아니다", "아닙니다", "아니에요", "아니야", "아닌"),  # after the value and its particle (12가 아니다)
    "es": ("no es", "no son", "no puede ser", "nunca es", "distinto de", "diferente de"),
    "de": ("nicht", "kein", "keine", "niemals", "ungleich"),
    "fr": ("pas", "jamais", "différent de", "différente de"),
    "pt": ("não é", "não são", "não pode ser", "nunca é", "diferente de"),
    "it": ("non è", "non sono", "non può essere", "mai", "diverso da", "diversa da"),
    "ru": ("не", "не равно", "не равен", "никогда не"),
}  # fmt: skip

CONDITIONS: dict[str, tuple[str, ...]] = {
    "en": ("unless", "depending on", "otherwise", "if not", "except if", "except when"),
    "zh": ("除非", "取决于", "否则", "要不然"),
    "ja": ("でなければ", "そうでなければ", "次第で", "によっては"),
    "ko": ("아니라면", "그렇지 않으면", "에 따라"),
    "es": ("a menos que", "salvo que", "dependiendo de", "si no", "de lo contrario"),
    "de": ("es sei denn", "außer wenn", "je nach", "je nachdem", "sonst", "andernfalls"),
    "fr": ("à moins que", "sauf si", "selon que", "sinon"),
    "pt": ("a menos que", "dependendo de", "senão", "caso contrário"),
    "it": ("a meno che", "a seconda di", "a seconda che", "altrimenti", "salvo che"),
    "ru": ("если только не", "в зависимости от", "иначе", "если не"),
}  # fmt: skip

UNDECIDED: dict[str, tuple[str, ...]] = {
    "en": ("cannot decide", "can't decide", "could not decide", "couldn't decide", "not sure", "unsure", "undecided",
           "hard to say", "cannot tell which", "can't tell which"),
    "zh": ("无法确定", "不确定", "无法决定", "拿不准", "说不准", "不能确定"),
    "ja": ("決められない", "決められません", "わからない", "分からない", "わかりません", "分かりません", "確信がない", "判断できない"),
    "ko": ("확실하지 않다", "확실하지 않습니다", "확실하지 않아요", "모르겠다", "모르겠습니다", "모르겠어요", "결정할 수 없다"),
    "es": ("no estoy seguro", "no estoy segura", "no puedo decidir", "no sé cuál", "difícil de decir"),
    "de": ("nicht sicher", "unsicher", "kann mich nicht entscheiden", "schwer zu sagen"),
    "fr": ("pas sûr", "pas sûre", "je ne peux pas décider", "difficile à dire", "incertain", "incertaine"),
    "pt": ("não tenho certeza", "não consigo decidir", "não sei qual", "difícil dizer"),
    "it": ("non sono sicuro", "non sono sicura", "non riesco a decidere", "non so quale", "difficile dire"),
    "ru": ("не уверен", "не уверена", "не могу решить", "сложно сказать", "трудно сказать"),
}  # fmt: skip

KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    "answer_phrases": ANSWER_PHRASES,
    "hedges": HEDGES,
    "hedge_adverbs": HEDGE_ADVERBS,
    "corrections": CORRECTIONS,
    "negations": NEGATIONS,
    "conditions": CONDITIONS,
    "undecided": UNDECIDED,
}


def entries(kind: str, languages: Iterable[str] = LANGUAGES) -> tuple[str, ...]:
    """Every entry of ``kind`` (a key of :data:`KINDS`) in ``languages``, lowercased, longest first, no repeats."""
    return _entries(kind, tuple(languages))


@functools.cache
def _entries(kind: str, languages: tuple[str, ...]) -> tuple[str, ...]:
    if kind not in KINDS:
        raise KeyError(f"unknown lexicon kind {kind!r}; known kinds: {', '.join(KINDS)}")
    table = KINDS[kind]
    unknown = [language for language in languages if language not in table]
    if unknown:
        raise KeyError(f"no {kind} for language(s) {', '.join(unknown)}; known: {', '.join(table)}")
    words = {word.lower() for language in languages for word in table[language]}
    return tuple(sorted(words, key=lambda word: (-len(word), word)))


def spaced(word: str) -> bool:
    """Whether ``word`` belongs to a script written with spaces between words (it must then stand alone):
    true when its first and last letters are Latin, Cyrillic, Greek or Hangul (or it has no letter)."""
    letters = [char for char in word if char.isalpha()]
    return not letters or (_spaced_letter(letters[0]) and _spaced_letter(letters[-1]))


def _spaced_letter(char: str) -> bool:
    return char.lower() != char.upper() or "\uac00" <= char <= "\ud7a3" or "\u1100" <= char <= "\u11ff"


def _boundary(char: str) -> bool:
    """Whether ``char`` may stand beside a word of a spaced script: anything but a letter or digit of one."""
    return not (char.isdigit() or (char.isalpha() and _spaced_letter(char)))


def find(text: str, kind: str, start: int = 0, languages: Iterable[str] = LANGUAGES) -> Iterator[tuple[int, int, str]]:
    """Each occurrence of an entry of ``kind`` in ``text`` from ``start``, in text order: (start, end, entry).

    Case is ignored; a spaced-script entry stands alone (``or`` is not found in ``for``), an entry of
    Chinese or Japanese is found anywhere. Plain string search per entry, lazily merged: linear in the
    text for a fixed lexicon, with no backtracking, so it is safe on megabytes of completion.
    """
    offset = max(start - 1, 0)  # only the text from start is read, and the character before it (a boundary)
    text = text[offset:]
    lower = text.lower()
    if len(lower) != len(text):  # a few letters change length when lowercased (İ): search them as written
        lower = "".join(char.lower() if len(char.lower()) == 1 else char for char in text)
    begin = start - offset
    languages = tuple(languages)
    if len(lower) - begin <= _SHORT and _any_entry(kind, languages).search(lower, begin) is None:
        return  # no entry occurs in the text at all: every search below would fail (the usual case, told in one pass)
    cursor = {}
    for word in _candidates(lower, begin, kind, languages):
        i = lower.find(word, begin)
        if i >= 0:
            cursor[word] = i
    while cursor:
        i, word = min((i, word) for word, i in cursor.items())
        j = i + len(word)
        found = lower.find(word, i + 1)
        if found < 0:
            del cursor[word]
        else:
            cursor[word] = found
        if not spaced(word) or (_alone_before(lower, i, word) and _alone_after(lower, j, word)):
            yield i + offset, j + offset, word


_SHORT = 64  # a text this short is read for its letters; a longer one for the words that key the entries


def _candidates(lower: str, begin: int, kind: str, languages: tuple[str, ...]) -> list[str]:
    """The entries of ``kind`` that may occur in ``lower`` (lowercased) from ``begin``: those whose first letter
    it holds when it is short (a set of its letters, one pass in C), else those whose key word it holds (one
    scan per key, fewer than the entries). Searching every entry would cost a scan of the text each."""
    if len(lower) - begin <= _SHORT:
        by_first = _by_first_letter(kind, languages)
        return [word for letter in by_first.keys() & set(lower[begin:]) for word in by_first[letter]]
    return [word for key, group in _by_key(kind, languages, lower.isascii()) if key in lower for word in group]


@functools.cache
def _any_entry(kind: str, languages: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern matching any entry of ``kind`` as written (lowercase, no boundaries) wherever it occurs."""
    return any_of(entries(kind, languages))


def any_of(words: Iterable[str]) -> re.Pattern[str]:
    """A pattern matching any of ``words`` as written (no boundaries) wherever it occurs: it finds one in a text
    exactly when some word's string search would. The words are merged into a tree of their common beginnings, so
    a position is tried once per character of the words, not once per word."""
    return re.compile(_tree(words) or "(?!)")  # no words: nothing to find


def _tree(words: Iterable[str]) -> str:
    """A regular expression matching exactly the strings ``words`` (one of them where it stands), each shared
    beginning written once: ``abc|abd|b`` is ``ab[cd]|b`` in effect."""
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[:1], []).append(word[1:])
    alternatives = []
    for head, tails in sorted(branches.items()):
        if not head:
            continue
        rest = _tree([tail for tail in tails if tail])
        optional = "" in tails  # the head alone is an entry too
        alternatives.append(re.escape(head) + (f"(?:{rest})" + ("?" if optional else "") if rest else ""))
    return "|".join(alternatives)


@functools.cache
def _by_key(kind: str, languages: tuple[str, ...], ascii_only: bool = False) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The entries of ``kind`` in ``languages`` grouped by a key word each of them holds (so the text holds it
    wherever the entry occurs): of an entry's words, one of four letters or more where it has one, the one
    most entries share (``answer`` for ``the final answer is`` and ``answer:``), the longest among equals.
    ``ascii_only``: only the entries written in ASCII (none of the others occurs in ASCII text)."""
    words = tuple(word for word in entries(kind, languages) if word.isascii() or not ascii_only)
    pieces = {word: re.findall(r"\w+", word) or [word] for word in words}
    shared = Counter(piece for word in words for piece in set(pieces[word]))
    groups: dict[str, list[str]] = {}
    for word in words:
        long = [piece for piece in pieces[word] if len(piece) >= 4] or pieces[word]
        groups.setdefault(max(long, key=lambda piece: (shared[piece], len(piece))), []).append(word)
    return tuple((key, tuple(group)) for key, group in groups.items())


@functools.cache
def _by_first_letter(kind: str, languages: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The entries of ``kind`` in ``languages`` by their first character."""
    grouped: dict[str, list[str]] = {}
    for word in entries(kind, languages):
        grouped.setdefault(word[0], []).append(word)
    return {letter: tuple(words) for letter, words in grouped.items()}


def _alone_before(text: str, i: int, word: str) -> bool:
    return i == 0 or not word[0].isalnum() or _boundary(text[i - 1])


def _alone_after(text: str, j: int, word: str) -> bool:
    return j == len(text) or not word[-1].isalnum() or _boundary(text[j])


def find_last(text: str, kind: str, start: int = 0, languages: Iterable[str] = LANGUAGES) -> tuple[int, int, str] | None:
    """The last occurrence of an entry of ``kind`` in ``text[start:]`` (the longest where several end there)."""
    last = None
    for found in find(text, kind, start, languages):
        if last is None or found[0] >= last[1] or (found[0] == last[0] and found[1] > last[1]):
            last = found
    return last


def pattern(kind: str, languages: Iterable[str] = LANGUAGES, *, single_letters: bool = True) -> str:
    """A regular expression (source text, for ``re.IGNORECASE``) matching one entry of ``kind`` with the
    boundaries of :func:`find`: for callers that place the entry inside a larger pattern (``12 (or|oder) 13``).
    An alternation of literals, longest first: it never backtracks beyond one entry. ``single_letters=False``
    leaves out the entries of one Latin letter (Spanish and Italian ``o``, Spanish ``u``), which a caller
    reading math must tell from a variable itself."""
    return _pattern(kind, tuple(languages), single_letters)


def single_letters(kind: str, languages: Iterable[str] = LANGUAGES) -> tuple[str, ...]:
    """The entries of ``kind`` that are one letter of a spaced script (``o``, ``u``): ambiguous beside math."""
    return tuple(word for word in entries(kind, languages) if len(word) == 1 and spaced(word))


@functools.cache
def _pattern(kind: str, languages: tuple[str, ...], single: bool) -> str:
    groups: dict[str, list[str]] = {}  # first character -> the rest of each entry opening with it, in entry order
    for word in entries(kind, languages):
        if not single and len(word) == 1 and spaced(word):
            continue
        rest = re.escape(word[1:]).replace("\\ ", "\\s+")
        if spaced(word):
            # the lookbehind that the entry stands alone (no letter or digit before it), read over its first letter
            before = rf"(?<![^\W_]{re.escape(word[0])})" if word[0].isalnum() else ""
            after = r"(?![^\W_])" if word[-1].isalnum() else ""
            rest = f"{before}{rest}{after}"
        groups.setdefault(word[0], []).append(rest)
    # Entries are grouped by their first character, which is matched once: a position where no entry starts fails
    # on one class test, and one where some do tries only theirs. No two first characters match one character
    # of the text (see the tests), so at any position only one group can match, in the order of its entries.
    starts = "".join(sorted("\\" + char if char in "\\]^-[" else char for char in groups))
    branches = (re.escape(head) + "(?:" + "|".join(rests) + ")" for head, rests in groups.items())
    return f"(?:(?=[{starts}])(?:" + "|".join(branches) + "))"
