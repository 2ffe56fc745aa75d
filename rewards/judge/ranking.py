"""The judge's group modes: the completions of one prompt compared by the judge, turned into rewards.

``pairwise``: each pair of a prompt's completions in one request ("Winner: 1 / 2 / tie"), asked in
both orders when ``swap`` (position bias cancels; a judge that disagrees with itself is a tie); a
completion's reward is its share of comparisons won (a tie is half). ``groupwise``: all of a prompt's
completions in one request, listed in an order shuffled by their content (stable across calls),
ranked best first ("Ranking: 2 > 1 = 3"); the reward is the share of the others ranked below (best
1.0, worst 0.0, ties halved). Both are group rewards (``needs_groups``): one-sample callers (verl,
OpenRLHF, the server) assemble whole groups of ``group_size`` first. A lone completion, a group short
of ``group_size`` and a group with any unanswered or unreadable comparison abstain.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from collections.abc import Mapping
from typing import Any

from rewardhub import Batch, Score
from rewardhub.rewards.text import canonical

from .client import Answer, JudgeStats, shorten
from .errors import JudgeConfigError
from .hollow import hollow_score
from .parse import unquoted
from .prompt import EPISODE_FIELDS, JudgeTemplate
from .reward import JudgeReward

__all__ = [
    "GroupwiseJudge",
    "PairwiseJudge",
    "beating_hollow",
    "rank_values",
    "read_ranking",
    "read_winner",
    "shuffled",
]

_WINNER = re.compile(r"""(?:winner|better(?:\s+response)?|verdict|choice)\s*(?:is\s*)?[:=]?[\s*`"']*"""
                     r"(?:response\s*|\[\s*)?(1|2|tie|neither|both|equal)\b", re.IGNORECASE)
_RANKING = re.compile(r"ranking\s*[:=]\s*([^\n]+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


class _GroupJudge(JudgeReward):
    """Shared by the group modes: group assembly checks, the completions block, the answer carrier."""

    needs_groups = True  # callers sending one completion per call must assemble groups first

    async def _ask(self, asks: list[tuple[list[int], list[dict[str, str]]]], stats: JudgeStats,
                   deadline: float) -> list[tuple[list[int], Answer]]:
        """Each group's (order, answer) for its request messages; identical requests are sent once."""
        requests: dict[tuple[str, ...], list[dict[str, str]]] = {}
        keys = []
        for _, messages in asks:
            key = tuple(m["content"] for m in messages)
            stats.deduplicated += key in requests
            requests[key] = messages
            keys.append(key)
        answers = await self._judged(requests, stats, deadline)
        return [(order, answers[key]) for (order, _), key in zip(asks, keys, strict=True)]

    def __init__(self, *, group_size: int | None = None, template: str, **params: Any):
        super().__init__(**params)
        if group_size is not None and (isinstance(group_size, bool) or group_size < 2):
            raise JudgeConfigError(f"judge group modes compare 2 or more completions: group_size must be >= 2; got {group_size}")
        self.group_size = group_size
        self.template = JudgeTemplate.load(template, required="completions")
        shown = [name for name in EPISODE_FIELDS if name in self.template.fields]
        if shown:  # one request shows several completions: a field of one row's episode would mislabel the rest
            raise JudgeConfigError(f"{self.template.origin} shows {{{shown[0]}}}, one completion's episode, but a group "
                                   f"mode shows several completions in {{completions}}; judge episodes with "
                                   f"mode 'trajectory'")

    def _score(self, answer: Answer) -> Score:
        # The answer's text travels to _score_rows, which reads it for the whole group.
        return Score(0.0, answer.content, None, "ok")

    def _hollow(self, batch: Batch, index: int) -> Score | None:
        """0.0 for a hollow completion (a judge master key): every group template shows the completions."""
        return hollow_score(batch.texts[index], batch.row(index), self.reference_column) if self.refuses_hollow else None

    def _groups(self, batch: Batch, scores: list[Score | None]) -> tuple[list[list[int]], dict[int, int]]:
        """The groups to judge (rows with text, by prompt) and, per member, how many hollow completions
        (hollow.py) its group had: those are ranked last unasked (0.0, a win for each other member); rows
        that cannot be judged get their score."""
        groups = []
        hollow_counts: dict[int, int] = {}
        for group in batch.groups():
            members = [i for i in group if batch.texts[i] is not None]
            for i in group:
                if batch.texts[i] is None:
                    scores[i] = Score(None, batch.text_errors[i])
            if self.group_size is not None and len(group) % self.group_size:
                reason = (f"incomplete group: {len(group)} completions of this prompt in the batch, "
                          f"group_size is {self.group_size}")
                for i in members:
                    scores[i] = Score(None, reason)
                continue
            judged = []
            for i in members:
                hollow = self._hollow(batch, i)
                if hollow is None:
                    judged.append(i)
                else:
                    scores[i] = Score(0.0, f"{hollow.reason}; ranked last of its group", False)
            hollow_count = len(members) - len(judged)
            if len(judged) == 1 and hollow_count:
                scores[judged[0]] = Score(1.0, f"ranked first: the {hollow_count} other completion(s) of its prompt "
                                               f"are hollow", None)
            elif len(judged) < 2:
                for i in judged:
                    scores[i] = Score(None, "a lone completion of its prompt: nothing to compare with", outcome="abstain")
            else:
                groups.append(judged)
                hollow_counts.update(dict.fromkeys(judged, hollow_count))
        return groups, hollow_counts

    def _request(self, batch: Batch, order: list[int]) -> list[dict[str, str]]:
        block = "\n\n".join(f"[Response {n}]\n{self.template.shown(batch.texts[i] or '')}\n[End of response {n}]"
                              for n, i in enumerate(order, 1))
        return self._conversation(self.template.render(batch.row(order[0]), self.reference_column, {"completions": block}))


class PairwiseJudge(_GroupJudge):
    """Every pair of a prompt's completions compared by the judge; the reward is the share won."""

    def __init__(self, *, group_size: int | None = None, swap: bool = True, template: str = "pairwise", **params: Any):
        super().__init__(group_size=group_size, template=template, **params)
        self.swap = swap

    async def _score_rows(self, batch: Batch, stats: JudgeStats, deadline: float) -> list[Score]:
        scores: list[Score | None] = [None] * len(batch)
        requests: dict[tuple[str, ...], list[dict[str, str]]] = {}
        plans = []
        groups, hollow_counts = self._groups(batch, scores)
        for group in groups:
            comparisons = []
            for a, b in itertools.combinations(group, 2):
                for first, second in ((a, b), (b, a)) if self.swap else ((a, b),):
                    messages = self._request(batch, [first, second])
                    key = tuple(m["content"] for m in messages)
                    stats.deduplicated += key in requests
                    requests[key] = messages
                    comparisons.append((first, second, key))
            plans.append((group, comparisons))
        answers = await self._judged(requests, stats, deadline)
        for group, comparisons in plans:
            self._score_group(group, comparisons, answers, scores, hollow_counts)
        return scores  # type: ignore[return-value]

    @staticmethod
    def _score_group(group: list[int], comparisons: list[tuple[int, int, tuple[str, ...]]],
                     answers: dict[tuple[str, ...], Score], scores: list[Score | None],
                     hollow_counts: dict[int, int]) -> None:
        points = {i: 0.0 for i in group}
        counts = {i: 0 for i in group}
        for first, second, key in comparisons:
            answer = answers[key]
            winner = read_winner(answer.reason) if answer.value is not None else None
            if winner is None:
                why = answer.reason if answer.value is None else f"unparsable judge answer (no winner): {shorten(answer.reason)!r}"
                for i in group:
                    scores[i] = Score(None, f"pairwise: {why}", None, "error" if answer.outcome != "timeout" else "timeout")
                return
            share = {1: (1.0, 0.0), 2: (0.0, 1.0), 0: (0.5, 0.5)}[winner]
            points[first] += share[0]
            points[second] += share[1]
            counts[first] += 1
            counts[second] += 1
        for i in group:
            value, note = beating_hollow(points[i] / counts[i], len(group) - 1, hollow_counts[i])
            scores[i] = Score(value, f"pairwise: won {points[i]:g} of {counts[i]} comparisons "
                                     f"with {len(group) - 1} other completion(s){note}", None)


def read_winner(text: str) -> int | None:
    """1 or 2 for the winning response, 0 for a tie; ``None`` when the answer names none or disagrees.
    The answer is read canonically; what it quotes (``"Winner: 1"``, a ``>`` line, backticks, a fence)
    is the responses' text, not the judge's verdict."""
    text = canonical(text)
    data = _json(text)
    if isinstance(data, Mapping) and "winner" in data:
        return _winner_word(str(data["winner"]))
    found = _WINNER.findall(unquoted(text)[-5000:])
    if found:
        return _winner_word(found[-1])
    return _winner_word(text.strip().strip("*.[]").removeprefix("Response").strip())


def _winner_word(word: str) -> int | None:
    word = word.strip().lower().removeprefix("response").strip()
    if word in ("1", "2"):
        return int(word)
    return 0 if word in ("tie", "neither", "both", "equal") else None


class GroupwiseJudge(_GroupJudge):
    """All of a prompt's completions ranked in one request; the reward is the share ranked below."""

    def __init__(self, *, group_size: int | None = None, template: str = "groupwise", **params: Any):
        super().__init__(group_size=group_size, template=template, **params)

    async def _score_rows(self, batch: Batch, stats: JudgeStats, deadline: float) -> list[Score]:
        scores: list[Score | None] = [None] * len(batch)
        groups, hollow_counts = self._groups(batch, scores)
        orders = [shuffled(group, [batch.texts[i] or "" for i in group]) for group in groups]
        for order, answer in await self._ask([(order, self._request(batch, order)) for order in orders], stats,
                                             deadline):
            tiers = read_ranking(answer.reason, len(order)) if answer.value is not None else None
            if tiers is None:
                why = answer.reason if answer.value is None else (
                    f"unparsable judge answer (no ranking of all {len(order)} responses): {shorten(answer.reason)!r}")
                for i in order:
                    scores[i] = Score(None, f"groupwise: {why}", None, "error" if answer.outcome != "timeout" else "timeout")
                continue
            for value, rank, position in rank_values(tiers):
                value, note = beating_hollow(value, len(order) - 1, hollow_counts[order[position - 1]])
                scores[order[position - 1]] = Score(value, f"groupwise: ranked {rank} of {len(order)} (listed as response "
                                                           f"{position}){note}", None)
        return scores  # type: ignore[return-value]


def beating_hollow(value: float, compared: int, hollow: int) -> tuple[float, str]:
    """``value`` (a share among ``compared`` others) counting a win over each of ``hollow`` hollow members."""
    if not hollow:
        return value, ""
    return (value * compared + hollow) / (compared + hollow), f"; ranked above {hollow} hollow completion(s)"


def shuffled(group: list[int], texts: list[str]) -> list[int]:
    """The group in an order drawn from its texts: stable for the same completions, unrelated to batch order."""
    seed = hashlib.sha256("\x00".join(sorted(texts)).encode()).digest()
    order = sorted(group, key=lambda i: texts[group.index(i)])
    random.Random(seed).shuffle(order)
    return order


def read_ranking(text: str, n: int) -> list[list[int]] | None:
    """Tiers of response numbers, best first (``2 > 1 = 3`` -> ``[[2], [1, 3]]``); ``None`` unless every
    number 1..n appears exactly once. Read like :func:`read_winner`: canonically, quotes ignored."""
    text = canonical(text)
    data = _json(text)
    if isinstance(data, Mapping) and isinstance(data.get("ranking"), list):
        tiers = [[int(x)] if isinstance(x, int | str) and str(x).strip().isdecimal() else [] for x in data["ranking"]]
    else:
        lines = _RANKING.findall(unquoted(text)[-5000:])
        if not lines:
            return None
        tiers = [[int(x) for x in _NUMBER.findall(part)] for part in re.split(r">|,|;|\bthen\b", lines[-1])]
        tiers = [t for t in tiers if t]
    flat = [x for tier in tiers for x in tier]
    return tiers if sorted(flat) == list(range(1, n + 1)) else None


def rank_values(tiers: list[list[int]]) -> list[tuple[float, int, int]]:
    """(reward, rank, response number) per response: the share of the others ranked below, ties halved."""
    n = sum(len(t) for t in tiers)
    out, above = [], 0
    for tier in tiers:
        below = n - above - len(tier)
        for position in tier:
            out.append(((below + 0.5 * (len(tier) - 1)) / (n - 1), above + 1, position))
        above += len(tier)
    return out


def _json(text: str) -> Mapping | None:
    """The JSON object ``text`` is as a whole (in a ```json fence or not), else ``None``: anything else is
    not parsed at all (a failed parse costs an exception per answer)."""
    body = text.strip().removeprefix("```json").removesuffix("```").strip()
    if not body.startswith("{"):
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, Mapping) else None
