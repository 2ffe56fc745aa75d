"""Numbers written in words, read as numbers: English "fifty-two" is 52, "seventy six" 76, "one hundred and
five" 105, "minus three" -3, "two thirds" 2/3.

A final answer in words has no digits, so a reader that looks only for digits falls back on an earlier
number (an intermediate total) and pays for it. Here a text is a number only when it is nothing but a
well-formed number in words (scales in decreasing order, no word repeated out of place): "one of them",
"two or three", "five hundred five hundred" are not numbers. Linear in the number of words.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["MAX_WORDS", "NUMBER_WORDS", "SCALE_CHAR", "cjk_number", "without_measure_word", "words_to_number"]

_UNITS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    " seventeen eighteen nineteen".split())}  # fmt: skip
_TENS = {word: 10 * (i + 2) for i, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
# Denominators of "two thirds", "one half", "three quarters" (singular and plural).
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
                 "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8,
                 "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10}  # fmt: skip
_SIGNS = {"minus": -1, "negative": -1, "positive": 1, "plus": 1}
_SEPARATOR = re.compile(r"[\s\-\u2010-\u2015]+")  # spaces and hyphens ("fifty-two", "fifty two")
NUMBER_WORDS = frozenset(_UNITS) | frozenset(_TENS) | frozenset(_SCALES) | {"hundred"}
MAX_WORDS = 12  # "nine hundred ninety-nine thousand nine hundred ninety-nine" is 10


def words_to_number(text: str) -> int | Fraction | None:
    """The number ``text`` spells out in words, or None when it is anything else (case and hyphens aside).

    ``"fifty-two"`` -> 52, ``"One hundred and five"`` -> 105, ``"a thousand"`` -> 1000, ``"minus seven"`` -> -7,
    ``"two thirds"`` -> 2/3, ``"one half"`` -> 1/2; ``"one of them"``, ``"twenty twenty"``, ``"and"`` -> None.
    """
    words = [word for word in _SEPARATOR.split(text.strip().lower()) if word]
    if not words or len(words) > MAX_WORDS:
        return None
    sign = 1
    if words[0] in _SIGNS and len(words) > 1:
        sign = _SIGNS[words.pop(0)]
    if len(words) == 2 and words[1] in _DENOMINATORS:  # "two thirds", "one half"
        numerator = _integer(words[:1])
        if numerator is None or numerator == 0 or (numerator == 1) == words[1].endswith("s"):
            return None
        return sign * Fraction(numerator, _DENOMINATORS[words[1]])
    value = _integer(words)
    return None if value is None else sign * value


def _integer(words: list[str]) -> int | None:
    """An integer in words: groups of (hundreds, tens, units) each followed by a smaller scale than the last."""
    if words and words[0] == "a" and len(words) > 1 and words[1] in ("hundred", *_SCALES):
        words = ["one", *words[1:]]  # "a hundred", "a thousand"
    total, group, last_scale = 0, None, None
    i = 0
    while i < len(words):
        group_value, i = _group(words, i)
        if group_value is None:
            return None
        if i < len(words) and words[i] in _SCALES:
            scale = _SCALES[words[i]]
            if last_scale is not None and scale >= last_scale:
                return None
            total += group_value * scale
            last_scale = scale
            i += 1
            if i < len(words) and words[i] == "and":
                i += 1
            group = None
            continue
        if i != len(words):
            return None
        group = group_value
    if group is None and last_scale is None:
        return None
    return total + (group or 0)


def _group(words: list[str], i: int) -> tuple[int | None, int]:
    """A number below 1000 starting at ``words[i]`` ("nine hundred and ninety-nine"), and where it ends."""
    value = None
    if i < len(words) and words[i] in _UNITS and i + 1 < len(words) and words[i + 1] == "hundred":
        if words[i] == "zero":
            return None, i
        value = _UNITS[words[i]] * 100
        i += 2
        if i < len(words) and words[i] == "and":
            i += 1
            if i == len(words):
                return None, i  # "one hundred and"
    if i < len(words) and words[i] in _TENS:
        value = (value or 0) + _TENS[words[i]]
        i += 1
        if i < len(words) and words[i] in _UNITS and 0 < _UNITS[words[i]] < 10:
            value += _UNITS[words[i]]
            i += 1
    elif i < len(words) and words[i] in _UNITS:
        if value is not None and words[i] == "zero":
            return None, i
        value = (value or 0) + _UNITS[words[i]]
        i += 1
    return value, i


# ----- CJK numerals ---------------------------------------------------------------------------------------
_CJK_DIGITS = "零〇一二两三四五六七八九十百千万亿兆"
_CJK_SCALES = "十百千万亿兆"
# A number in CJK numerals, or digits with CJK scales (3万, 1.5亿), with its sign: read by cn2an.
SCALE_CHAR = rf"[{_CJK_SCALES}](?![克米瓦])"  # 千克 (kg) and 千米 (km) are units, not thousands
_CJK_VALUE = rf"[负正]?(?:[{_CJK_DIGITS}]+(?:点[{_CJK_DIGITS}]+)?|\d+(?:\.\d+)?(?:{SCALE_CHAR})+)"
_CJK_FORM = re.compile(rf"(百分之)?({_CJK_VALUE})(?:分之({_CJK_VALUE}))?")
# What may follow the number in a short answer: a measure word or unit, then a copula, then punctuation (个, 元, です).
_MEASURE_WORDS = ("个 元 块 人 本 只 条 张 件 次 天 年 月 日 岁 米 克 千克 公斤 厘米 毫米 公里 千米 分钟 小时 秒 度 倍 名 位 辆 台 头 "
                  "匹 棵 朵 颗 支 杯 瓶 箱 页 道 题 分 升 毫升 平方米 立方米 円 個 枚 冊 匹 歳 개 명 원 살").split()  # fmt: skip
_CJK_TAIL = re.compile(  # each run of spaces follows a token it cannot take a character of: linear on any spaces
    r"\s*(?:(?:" + "|".join(sorted(_MEASURE_WORDS, key=len, reverse=True)) + r")\s*)?(?:(?:です|だ|입니다|이다)\s*)?(?:[.。]\s*)?"
)


_MEASURED = re.compile(r"(.*?[\d})\]])" + _CJK_TAIL.pattern)


def without_measure_word(text: str) -> str:
    """``text`` without the measure word, unit or copula a CJK sentence puts after a number: ``34 元`` -> ``34``,
    ``866 个`` -> ``866``, ``13です`` -> ``13``, ``42입니다`` -> ``42``; anything else unchanged."""
    measured = _MEASURED.fullmatch(text)
    return measured.group(1) if measured is not None and measured.end(1) < len(text.rstrip()) else text


# Sino-Korean numerals, read as the Chinese ones they come from (육십일 is 六十一).
_HANGUL_NUMERALS = dict(zip("영공일이삼사오육칠팔구십백천만억", "零零一二三四五六七八九十百千万亿", strict=True))
_HANGUL_RUN = re.compile(f"[{''.join(_HANGUL_NUMERALS)}]+")


def cjk_number(text: str) -> str | None:
    """The number a short text writes in CJK numerals (with at most a measure word or a copula after it), as
    digits: ``十二`` -> ``12``, ``负十九`` -> ``-19``, ``九分之一`` -> ``1/9``, ``百分之五十六`` -> ``56%``,
    ``3万`` -> ``30000``, ``1.5亿`` -> ``150000000``, ``十二个`` -> ``12``, Sino-Korean ``육십일`` -> ``61``; None for anything else (``12``,
    ``十分简单``, ``一些``). cn2an (the ``math`` extra) reads the numerals; it is imported on first use."""
    text = text.strip()
    hangul = _HANGUL_RUN.match(text)
    if hangul is not None:  # "육십일입니다", "십팔"
        text = "".join(_HANGUL_NUMERALS[char] for char in hangul.group()) + text[hangul.end() :]
    if not text or len(text) > 40 or not any(char in _CJK_DIGITS for char in text):
        return None
    form = _CJK_FORM.match(text)
    if form is None or not _CJK_TAIL.fullmatch(text, form.end()):
        return None
    percent, first, second = form.groups()
    if percent and second:
        return None
    numbers = [_cn2an(value) for value in (first, second) if value]
    if any(number is None for number in numbers):
        return None
    if second:  # "A分之B" is B/A
        return f"{numbers[1]}/{numbers[0]}" if "." not in numbers[0] + numbers[1] else None
    return numbers[0] + ("%" if percent else "")


_SCALE_VALUES = {"十": 10, "百": 100, "千": 1000, "万": 10**4, "亿": 10**8, "兆": 10**12}
_DIGITS_AND_SCALES = re.compile(rf"([负正]?)(\d+(?:\.\d+)?)((?:{SCALE_CHAR})+)")


def _cn2an(value: str) -> str | None:
    import warnings
    from decimal import Decimal

    scaled = _DIGITS_AND_SCALES.fullmatch(value)
    if scaled is not None:  # "8.6万亿", "6.4百万": the digits times each scale (cn2an reads one scale only)
        number = Decimal(scaled.group(2))
        for char in scaled.group(3):
            number *= _SCALE_VALUES[char]
        number = -number if scaled.group(1) == "负" else number
        return _plain(number)

    import cn2an

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            number = cn2an.cn2an(value, "smart")
        except (ValueError, KeyError, IndexError):  # cn2an raises ValueError on what it cannot read
            return None
    return _plain(Decimal(str(number)))


def _plain(number) -> str:
    exact = number.normalize()
    return format(exact, "f") if exact != exact.to_integral_value() else str(int(exact))
