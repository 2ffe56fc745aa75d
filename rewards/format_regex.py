"""``format_regex`` and ``tag_count``: reward completions for following an output format.

``format_regex`` scores 1.0 when the text matches a pattern (``fullmatch``, ``match`` at the start,
or ``search`` anywhere), else 0.0; presets cover the usual reasoning formats. ``tag_count`` gives
partial credit: a share per tag for opening it exactly once and closing it exactly once after that.

Python's ``re`` backtracks, so a careless pattern can take exponential or quadratic time on a long
completion. The presets are written to run in linear time (tempered bodies that cannot run past
their closing tag, possessive quantifiers). For your own patterns, texts longer than ``max_chars``
are not matched: the reward abstains (``None``) with a reason instead of freezing training.

Both read the completion as a person sees it (:func:`rewardhub.rewards.text.canonical`): a block holding
only a zero-width space is empty, and line separators (U+2028, NEL, ``\r``) are line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from .text import canonical

__all__ = [
    "DEFAULT_PRESET",
    "FLAGS",
    "FormatRegex",
    "MAX_CHARS",
    "MODES",
    "PRESETS",
    "Preset",
    "TagCount",
    "compile_pattern",
    "register_rewards",
]

MODES = ("fullmatch", "match", "search")
FLAGS = {"ASCII": re.ASCII, "DOTALL": re.DOTALL, "IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE,
         "VERBOSE": re.VERBOSE, "A": re.ASCII, "S": re.DOTALL, "I": re.IGNORECASE, "M": re.MULTILINE,
         "X": re.VERBOSE}
DEFAULT_PRESET = "think_answer"
MAX_CHARS = 100_000
_NON_BLANK = re.compile(r"\S")


def _block(tag: str, pad: str = "") -> str:
    """``<tag>body</tag>`` with a non-blank body that cannot contain ``</tag>``: one way to match, linear time."""
    return rf"<{tag}>{pad}(?!\s*+</{tag}>)(?:(?!{pad}</{tag}>).)*{pad}</{tag}>"


@dataclass(frozen=True)
class Preset:
    """A named format: pattern, match mode and flags."""

    pattern: str
    mode: str = "fullmatch"
    flags: tuple[str, ...] = ("DOTALL",)


PRESETS: dict[str, Preset] = {
    # <think>...</think> then <answer>...</answer>, nothing else but whitespace around.
    "think_answer": Preset(rf"\s*{_block('think')}\s*{_block('answer')}\s*"),
    # DeepSeek-R1 layout: each tag on its own line.
    "think_answer_newlines": Preset(rf"\s*{_block('think', chr(10))}\n{_block('answer', chr(10))}\s*"),
    # A think block, then a non-empty final text with no further think tags.
    "think": Preset(rf"\s*{_block('think')}(?=\s*\S)(?:(?!</?think>).)*"),
    # Only an answer block.
    "answer": Preset(rf"\s*{_block('answer')}\s*"),
    # A closed \boxed{...} anywhere (one level of nested braces, e.g. \boxed{\frac{1}{2}}).
    "boxed": Preset(r"\\boxed\s*\{(?:[^{}]++|\{[^{}]*+\})*+\}", mode="search", flags=()),
}


def compile_pattern(pattern: str, flags: list[str] | tuple[str, ...] | str | None) -> re.Pattern[str]:
    """Compile ``pattern`` with flag names (``["DOTALL", "IGNORECASE"]`` or ``"DOTALL|I"``); ConfigError if bad."""
    if isinstance(flags, str):
        flags = [f for f in flags.split("|") if f.strip()]
    value = 0
    for flag in flags or ():
        if not isinstance(flag, str) or flag.strip().upper() not in FLAGS:
            raise ConfigError(f"unknown regex flag {flag!r}; known flags: {', '.join(FLAGS)}")
        value |= FLAGS[flag.strip().upper()]
    try:
        return re.compile(pattern, value)
    except re.error as exc:
        raise ConfigError(f"invalid regex pattern {pattern!r}: {exc}") from None


class FormatRegex(Reward):
    """1.0 when the completion matches ``pattern`` (or a ``preset``), else 0.0; verdict = matched."""

    name = "format_regex"
    description = "1.0 if the completion matches a regex or a format preset (think_answer, think, boxed...)"

    def __init__(
        self,
        *,
        pattern: str | None = None,
        preset: str | None = None,
        mode: str | None = None,
        flags: list[str] | str | None = None,
        max_chars: int | None = MAX_CHARS,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        if pattern is not None and preset is not None:
            raise ConfigError("give either pattern or preset, not both")
        if preset is not None or pattern is None:
            preset = preset or DEFAULT_PRESET
            if preset not in PRESETS:
                raise ConfigError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
            if mode is not None or flags is not None:
                raise ConfigError(f"preset {preset!r} sets its own mode and flags; use pattern to choose them")
            pattern, mode, flags = PRESETS[preset].pattern, PRESETS[preset].mode, list(PRESETS[preset].flags)
        mode = mode or "fullmatch"
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        if max_chars is not None and max_chars < 1:
            raise ConfigError(f"max_chars must be >= 1 or null (no limit), got {max_chars}")
        self.regex = compile_pattern(pattern, flags)
        self.matcher = getattr(self.regex, mode)
        self.mode = mode
        self.max_chars = max_chars
        self.label = f"preset {preset!r}" if preset else f"pattern {_short(pattern)!r}"

    def score_sample(self, text: str, row: Row) -> Score:
        text = canonical(text)
        if self.max_chars is not None and len(text) > self.max_chars:
            return Score(None, f"not checked: {len(text)} chars > max_chars {self.max_chars}")
        if self.matcher(text) is not None:
            return Score(1.0, f"matches {self.label}", True)
        return Score(0.0, f"no {self.mode} of {self.label}", False)


class TagCount(Reward):
    """Partial format credit per tag: half for ``<tag>`` exactly once, half for ``</tag>`` exactly once after
    it with non-blank content between (an empty ``<think></think>`` earns only the first half)."""

    name = "tag_count"
    description = "partial format credit per tag: <tag> exactly once, then </tag> exactly once after non-blank content"

    def __init__(self, *, tags: list[str] | None = None, on_error: str = "none"):
        super().__init__(on_error=on_error)
        tags = ["think", "answer"] if tags is None else tags
        if isinstance(tags, str) or not isinstance(tags, list | tuple) or not tags:
            raise ConfigError(f"tags must be a non-empty list of tag names such as ['think', 'answer'], got {tags!r}")
        for tag in tags:
            if not isinstance(tag, str) or not re.fullmatch(r"[\w.:-]+", tag):
                raise ConfigError(f"tag names are bare words such as 'think' (no < >), got {tag!r}")
        self.tags = list(tags)
        self.markers = [(f"<{tag}>", f"</{tag}>") for tag in self.tags]

    def score_sample(self, text: str, row: Row) -> Score:
        text = canonical(text)
        credit = 0
        problems = []
        for opening, closing in self.markers:
            opened, closed = text.count(opening), text.count(closing)
            if opened == 1:
                credit += 1
            else:
                problems.append(f"{opening} {_times(opened)}")
            start, end = text.find(opening), text.find(closing)
            if closed == 1 and end > start >= 0 and _NON_BLANK.search(text, start + len(opening), end):
                credit += 1
            elif closed == 1:
                problems.append(f"no content between {opening} and {closing}" if end > start >= 0
                                else f"{closing} not after {opening}")
            else:
                problems.append(f"{closing} {_times(closed)}")
        reason = "all tags once, in order" if not problems else "; ".join(problems)
        return Score(credit / (2 * len(self.tags)), reason, not problems)


def _times(count: int) -> str:
    return "missing" if count == 0 else f"appears {count} times"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@hookimpl
def register_rewards(register):
    register(FormatRegex)
    register(TagCount)
