"""``heuristic``: unsupervised quality signals, each weighted and switchable, averaged into [0, 1].

Checks (a check is on when it is configured and its weight is > 0):

- length window ``min_len``..``max_len`` (tokens from ``completion_ids``, else words): 1 inside, else
  ``len/min_len`` below and ``max_len/len`` above;
- keywords: share of ``required_keywords`` present and ``forbidden_keywords`` absent (whole words);
- ending: the text ends with one of ``ending_punctuation`` (closing quotes, brackets or tags such as
  ``</answer>`` may follow it);
- repetition: 1 while at most ``max_repeated`` of the word n-grams repeat, then falling linearly to 0.

The value is the weighted mean; the reason lists the checks that failed. Every check reads the completion
as a person sees it (:func:`rewardhub.rewards.text.canonical`): invisible characters neither hide a keyword
nor vary a loop, and a full-width ``．`` ends a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rewardhub import ConfigError, Reward, Row, Score, hookimpl

from .length import completion_length
from .repetition import repeated_share
from .text import canonical

__all__ = ["Check", "Heuristic", "register_rewards"]

_CLOSERS = "\"')]}*_”’»"
_CLOSING_TAG = re.compile(r"</\w+>")
_MAX_TAG = 40

Check = Callable[[str, str, Row], tuple[float, str]]  # (completion, its canonical text, row) -> (value, failure)


class Heuristic(Reward):
    """Weighted mean of length-window, keyword, ending-punctuation and no-repetition checks."""

    name = "heuristic"
    description = "weighted unsupervised checks in [0,1]: length window, keywords, ending punctuation, repetition"

    def __init__(
        self,
        *,
        min_len: int | None = None,
        max_len: int | None = None,
        length_weight: float = 1.0,
        required_keywords: list[str] | None = None,
        forbidden_keywords: list[str] | None = None,
        case_sensitive: bool = False,
        keywords_weight: float = 1.0,
        ending_punctuation: str | None = ".!?",
        ending_weight: float = 1.0,
        ngram_size: int = 3,
        max_repeated: float = 0.2,
        repetition_weight: float = 1.0,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        weights = {"length": length_weight, "keywords": keywords_weight, "ending": ending_weight,
                   "repetition": repetition_weight}
        for check, weight in weights.items():
            if weight < 0:
                raise ConfigError(f"{check}_weight must be >= 0 (0 switches the check off), got {weight}")
        if (min_len is not None and min_len < 0) or (max_len is not None and max_len < 1):
            raise ConfigError(f"need min_len >= 0 and max_len >= 1; got min_len={min_len}, max_len={max_len}")
        if min_len is not None and max_len is not None and min_len > max_len:
            raise ConfigError(f"min_len ({min_len}) must not exceed max_len ({max_len})")
        if ngram_size < 1 or not 0 <= max_repeated < 1:
            raise ConfigError(f"need ngram_size >= 1 and 0 <= max_repeated < 1; got {ngram_size}, {max_repeated}")
        self.min_len = min_len or 0
        self.max_len = max_len
        self.ending = ending_punctuation or ""
        self.ngram_size = ngram_size
        self.max_repeated = max_repeated
        flags = 0 if case_sensitive else re.IGNORECASE
        self.required = _keyword_patterns("required_keywords", required_keywords, flags)
        self.forbidden = _keyword_patterns("forbidden_keywords", forbidden_keywords, flags)
        configured = {
            "length": min_len is not None or max_len is not None,
            "keywords": bool(self.required or self.forbidden),
            "ending": bool(self.ending),
            "repetition": True,
        }
        checks: dict[str, Check] = {"length": self._length, "keywords": self._keywords, "ending": self._ending,
                                    "repetition": self._repetition}
        self.checks = [(checks[c], weights[c]) for c in checks if configured[c] and weights[c] > 0]
        if not self.checks:
            raise ConfigError("heuristic has no check switched on: give a check a weight > 0 and its settings")

    def score_sample(self, text: str, row: Row) -> Score:
        total = weight_sum = 0.0
        failures = []
        seen = canonical(text)
        for check, weight in self.checks:
            value, failure = check(text, seen, row)
            total += weight * value
            weight_sum += weight
            if failure:
                failures.append(failure)
        return Score(total / weight_sum, "failed: " + "; ".join(failures) if failures else "all checks passed")

    def _length(self, text: str, seen: str, row: Row) -> tuple[float, str]:
        length = completion_length(text, row.get("completion_ids"))
        if length.count < self.min_len:
            return length.count / self.min_len, f"length {length} < min_len {self.min_len}"
        if self.max_len is not None and length.count > self.max_len:
            return self.max_len / length.count, f"length {length} > max_len {self.max_len}"
        return 1.0, ""

    def _keywords(self, text: str, seen: str, row: Row) -> tuple[float, str]:
        missing = [k for k, pattern in self.required if pattern.search(seen) is None]
        present = [k for k, pattern in self.forbidden if pattern.search(seen) is not None]
        total = len(self.required) + len(self.forbidden)
        failures = [f"{label} {', '.join(map(repr, words))}"
                    for label, words in (("missing keyword(s)", missing), ("forbidden keyword(s)", present)) if words]
        return 1.0 - (len(missing) + len(present)) / total, "; ".join(failures)

    def _ending(self, text: str, seen: str, row: Row) -> tuple[float, str]:
        last = _last_char(seen)
        if last and last in self.ending:
            return 1.0, ""
        return 0.0, f"does not end with one of {self.ending!r}"

    def _repetition(self, text: str, seen: str, row: Row) -> tuple[float, str]:
        fraction = repeated_share(text, self.ngram_size, seen)
        if fraction is None or fraction <= self.max_repeated:
            return 1.0, ""
        value = 1.0 - (fraction - self.max_repeated) / (1.0 - self.max_repeated)
        return value, f"{fraction:.0%} of {self.ngram_size}-grams repeated > max_repeated {self.max_repeated:.0%}"


def _last_char(text: str) -> str:
    """The last character that is not whitespace, a closing quote/bracket or a closing tag (``</answer>``)."""
    end = len(text)
    while end > 0:
        char = text[end - 1]
        if char.isspace() or char in _CLOSERS:
            end -= 1
            continue
        tag = text.rfind("</", max(0, end - _MAX_TAG), end)
        if char != ">" or tag < 0 or _CLOSING_TAG.fullmatch(text, tag, end) is None:
            return char
        end = tag
    return ""


def _keyword_patterns(param: str, keywords: list[str] | None, flags: int) -> list[tuple[str, re.Pattern[str]]]:
    """One literal pattern per keyword, matching whole words where the keyword starts/ends with one."""
    if keywords is None:
        return []
    if isinstance(keywords, str) or not isinstance(keywords, list | tuple):
        raise ConfigError(f"{param} must be a list of strings, got {keywords!r}")
    patterns = []
    for keyword in keywords:
        if not isinstance(keyword, str) or not keyword.strip():
            raise ConfigError(f"{param} must hold non-empty strings, got {keyword!r}")
        start = r"\b" if re.match(r"\w", keyword) else ""
        end = r"\b" if re.search(r"\w$", keyword) else ""
        patterns.append((keyword, re.compile(start + re.escape(canonical(keyword)) + end, flags)))
    return patterns


@hookimpl
def register_rewards(register):
    register(Heuristic)
