"""The multilingual lexicon: every kind in every language, matched with the boundaries of its script."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardhub.rewards.text import lexicon


@pytest.mark.parametrize("kind", list(lexicon.KINDS))
def test_every_kind_covers_every_language(kind):
    assert set(lexicon.KINDS[kind]) == set(lexicon.LANGUAGES)
    assert all(lexicon.KINDS[kind][language] for language in lexicon.LANGUAGES)


@pytest.mark.parametrize(("text", "word"), [
    ("12 or 13", "or"), ("12 oder 13", "oder"), ("12 ou 13", "ou"), ("12 или 13", "или"), ("12或13", "或"),
    ("12 或者 13", "或者"), ("12か13", "か"), ("答案可能是 610，也可能是 61", "也可能是"), ("12 o 13", "o"),
    ("12 또는 13", "또는"), ("12 oppure 13", "oppure"), ("12 либо 13", "либо"),
])
def test_hedges_are_found_in_every_language(text, word):
    assert word in [found for _, _, found in lexicon.find(text, "hedges")]


@pytest.mark.parametrize("text", ["for 12 forms", "Bordeaux", "dobro", "bouquet", "или́"[:0] + "пилили"])
def test_a_spaced_word_inside_another_word_is_not_found(text):
    assert [found for found in lexicon.find(text, "hedges") if found[2] in ("or", "oder", "o", "ou", "или")] == []


@pytest.mark.parametrize(("text", "word"), [
    ("答案是 \\boxed{12}。不对，重新算一下，应该是 13。", "不对"), ("Scratch that, it's 432", "scratch that"),
    ("Warte, das ist falsch", "warte"), ("En fait, c'est 5", "en fait"), ("На самом деле 5", "на самом деле"),
    ("待って、13です", "待って"), ("잠깐, 13입니다", "잠깐"), ("Espera, es 13", "espera"), ("Aspetta, è 13", "aspetta"),
    ("Na verdade, é 13", "na verdade"),
])
def test_corrections_in_ten_languages(text, word):
    assert next(lexicon.find(text, "corrections"))[2] == word


def test_entries_are_lowercase_longest_first_and_reject_unknown_names():
    hedges = lexicon.entries("hedges", ["zh"])
    assert hedges[0] == "也可能是" and "或" in hedges and all(word == word.lower() for word in hedges)
    with pytest.raises(KeyError, match="unknown lexicon kind"):
        lexicon.entries("hedgez")
    with pytest.raises(KeyError, match="xx"):
        lexicon.entries("hedges", ["xx"])


def test_the_pattern_matches_what_find_finds():
    hedge = re.compile(r"\d+\s*" + lexicon.pattern("hedges") + r"\s*\d+", re.IGNORECASE)
    for text in ("12 or 13", "12 oder 13", "12或13", "12 или 13", "12 OR 13"):
        assert hedge.fullmatch(text), text
    assert hedge.search("12 for 13") is None and hedge.search("12 door 13") is None


def test_find_is_linear_on_a_long_text():
    text = "wait " * 200_000 + "12"
    assert lexicon.find_last(text, "corrections") == (len(text) - 7, len(text) - 3, "wait")


def every_occurrence(text: str, kind: str, start: int) -> list[tuple[int, int, str]]:
    """What find yields, by brute force: each entry at each position from ``start``, with the script's
    boundaries (in text order, then by entry)."""
    lower = "".join(char.lower() if len(char.lower()) == 1 else char for char in text)
    found = []
    for i in range(start, len(lower)):
        for word in lexicon.entries(kind):
            j = i + len(word)
            if lower.startswith(word, i) and (not lexicon.spaced(word) or (
                    (i == 0 or not word[0].isalnum() or lexicon._boundary(lower[i - 1]))
                    and (j == len(lower) or not word[-1].isalnum() or lexicon._boundary(lower[j])))):
                found.append((i, j, word))
    return sorted(found, key=lambda hit: (hit[0], hit[2]))


_PIECES = ["wait", "or", "Wait", " ", "x", "答", "不对", "o", "OR", "İ", "actually", ",", "Moment", "5", "u"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join), st.integers(0, 12),
       st.sampled_from(list(lexicon.KINDS)))
def test_find_from_a_start_yields_every_occurrence_after_it(text, start, kind):
    assert list(lexicon.find(text, kind, start)) == every_occurrence(text, kind, start)


def test_find_from_a_start_reads_the_boundary_before_it():
    assert list(lexicon.find("xor 5", "hedges", 1)) == []  # "or" inside "xor"
    assert list(lexicon.find("x or 5", "hedges", 2)) == [(2, 4, "or")]
    assert list(lexicon.find("\\boxed{12} Wait, 13", "corrections", 10)) == [(11, 15, "wait")]
    assert list(lexicon.find("\\boxed{12}", "corrections", 10)) == []


@pytest.mark.parametrize("kind", list(lexicon.KINDS))
@pytest.mark.parametrize("ascii_only", [False, True])
def test_every_entry_holds_the_key_a_long_text_is_searched_for(kind, ascii_only):
    groups = lexicon._by_key(kind, lexicon.LANGUAGES, ascii_only)
    assert sorted(word for _, group in groups for word in group) == sorted(
        word for word in lexicon.entries(kind) if word.isascii() or not ascii_only)
    assert all(key in word for key, group in groups for word in group)


@pytest.mark.parametrize(("text", "at", "found"), [
    ("maybe 12", 0, "maybe"), ("Maybe 12", 0, "Maybe"), ("xmaybe 12", 1, None), ("1maybe", 1, None),
    ("_maybe", 1, "maybe"), ("(vielleicht 13)", 1, "vielleicht"), ("может  быть", 0, "может  быть"),
    ("оможет быть", 1, None), ("12或13", 2, "或"),
])
def test_a_pattern_entry_stands_alone_only_where_find_would_find_it(text, at, found):
    match = re.compile(lexicon.pattern("hedge_adverbs") + "|" + lexicon.pattern("hedges"), re.IGNORECASE).match(text, at)
    assert (match.group() if match else None) == found


@pytest.mark.parametrize("kind", list(lexicon.KINDS))
def test_the_presence_test_matches_exactly_the_entries(kind):
    words = lexicon.entries(kind)
    tree = re.compile(lexicon._tree(words))
    assert all(tree.fullmatch(word) for word in words)
    assert not any(tree.fullmatch(word[:-1]) for word in words if word[:-1] not in words)
    assert lexicon._any_entry(kind, lexicon.LANGUAGES).search("12. " + words[-1] + " 13")


@pytest.mark.parametrize("kind", list(lexicon.KINDS))
def test_no_two_first_characters_of_entries_match_one_character(kind):
    """The pattern tries the entries grouped by first character: two groups must never both match at a position."""
    heads = sorted({word[0] for word in lexicon.entries(kind)})
    assert not [(a, b) for a in heads for b in heads if a != b and re.fullmatch(re.escape(a), b, re.IGNORECASE)]
