"""The ``majority_vote`` reward (self-consistency, test-time RL): agree with your siblings, no gold needed.

Completions of the same prompt form a group; their final answers are clustered by math
equivalence (``0.5`` and ``\\frac{1}{2}`` vote together; checked through the same worker path as
``math``) or by normalised string, and members of the largest cluster get 1.0, the others 0.0.
Each distinct answer that needs the parser is first read once, alone, in a worker with ``timeout``
(as ``math`` reads an answer: parsed, and compared with 0, which evaluates it): one that cannot be
read in time (``\\boxed{9^{9^{9^{9}}}}``) does not vote and gets ``timeout_score`` with outcome
``timeout``, so it costs its group one deadline, not one per sibling it would be compared with.
Only answers that name one value vote: a hedge (``5 or 6``, ``5 oder 6``, ``maybe 5``) offers several, and a
relation between values (``5 = 7``, ``3 < 7``, ``x = 5 = 7``, ``x \neq 5``) states no answer; the math parser
would read its right side and let it vote with the 7s. An equation or a bound on one named quantity
(``x = 7``, ``f(1) = 7``, ``x > 2``) is an answer and votes. A row that does not vote scores as a row
with no answer (``answerless``), with its reason.
A lone completion has nobody to agree with, and a group short of ``group_size`` is a fragment: both
abstain. Under one-sample callers (verl, OpenRLHF) the shims and ``rewardhub serve`` assemble whole
groups of ``group_size`` first (``needs_groups``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rewardhub import Batch, ConfigError, Reward, Score, hookimpl

from .math.checker import MathChecker, verify_pair, warm_up
from .math.literals import normalize, parse_literal, unit_of
from .math.reward import find_answer
from .text import lexicon
from .text.extract import Extraction, alternatives
from .text.extract.answers import HEDGE

__all__ = ["ANSWERLESS", "EQUIVALENCE", "MajorityVote", "TIES", "register_rewards"]

TIES = ("none", "all", "first")
ANSWERLESS = ("zero", "abstain")
EQUIVALENCE = ("math", "string")
_WARM_UP = f"{warm_up.__module__}:{warm_up.__name__}"
_READABLE = 1 << 14  # answers remembered as read (or as unparseable) across batches
# The relation signs an answer may hold (TeX, Unicode and ASCII spellings).
_RELATION = re.compile(
    r"\\(?:leq?|geq?|leqslant|geqslant|neq?|lt|gt|approx|equiv|sim|simeq|cong|propto|ne|to|mapsto|iff|implies"
    r"|Rightarrow|Leftrightarrow|in|notin|subset|subseteq)(?![A-Za-z])|<=|>=|!=|==|:=|[=<>≤≥≠≈≡∼→⇒⇔∈∉]"
)
# Signs that put a named quantity in a set: a bound (x > 2) or a membership (x \\in [1, 2]).
_SET_SIGNS = frozenset({"<", ">", "\\le", "\\leq", "\\ge", "\\geq", "\\lt", "\\gt", "\\leqslant", "\\geqslant",
                        "<=", ">=", "≤", "≥", "\\in", "∈"})
# "or" in any language, even inside \text{...} (7 \text{ oder } 8), and maybe / vielleicht / 可能
_HEDGE_WORD = re.compile(f"{HEDGE}|{lexicon.pattern('hedge_adverbs')}", re.IGNORECASE)
# A named quantity: a letter or a Greek command, then subscripts, primes and one argument list (x, a_n, f(1), \theta').
_NAME = re.compile(r"\s*(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[\w,]+\}?|')*(?:\([^()]*\))?'*\s*")


class MajorityVote(Reward):
    """1.0 for completions whose answer is the group's majority answer, 0.0 for the rest."""

    name = "majority_vote"
    description = (
        "Self-consistency: reward completions that agree with the majority answer of their prompt's group"
    )
    needs_groups = True  # callers sending one completion per call must assemble groups first

    def __init__(
        self,
        *,
        group_size: int | None = None,
        min_votes: int = 1,
        ties: str = "none",
        answerless: str = "zero",
        equivalence: str = "math",
        timeout: float = 5.0,
        timeout_score: float | None = None,
        last_number: bool = True,
        max_answer_chars: int = 1000,
        workers: int | None = None,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        for param, value, allowed in (
            ("ties", ties, TIES),
            ("answerless", answerless, ANSWERLESS),
            ("equivalence", equivalence, EQUIVALENCE),
        ):
            if value not in allowed:
                raise ConfigError(
                    f"majority_vote: {param} must be one of {', '.join(allowed)}; got {value!r}"
                )
        if group_size is not None and group_size < 1:
            raise ConfigError(
                f"majority_vote: group_size must be a positive number of completions; got {group_size}"
            )
        if min_votes < 1:
            raise ConfigError(f"majority_vote: min_votes must be at least 1; got {min_votes}")
        self.group_size = group_size
        self.min_votes = min_votes
        self.ties = ties
        self.answerless = answerless
        self.equivalence = equivalence
        self.last_number = last_number
        self.max_answer_chars = max_answer_chars
        self.timeout_score = timeout_score
        self.checker = MathChecker(timeout, workers) if equivalence == "math" else None
        self._read: dict[str, bool] = {}  # answer -> parses (True) or not (False); timeouts are not remembered

    def score_batch(self, batch: Batch) -> list[Score]:
        scores: list[Score | None] = [None] * len(batch)
        read: dict[str, tuple[str | None, str | None]] = {}  # siblings often state the same answer: read it once
        cast = [self._vote(text, read) for text in batch.texts]
        answers, refusals = [answer for answer, _ in cast], [why for _, why in cast]
        votes: list[list[int]] = []
        for group in batch.groups():
            if self.group_size is not None and len(group) % self.group_size:
                reason = (
                    f"incomplete group: {len(group)} completions of this prompt in the batch, "
                    f"group_size is {self.group_size}"
                )
                for i in group:
                    scores[i] = Score(None, reason)
                continue
            if len(group) == 1:
                scores[group[0]] = Score(None, "a lone completion of its prompt: nothing to vote with", outcome="abstain")
                continue
            for i in group:
                if answers[i] is None:
                    scores[i] = Score(0.0 if self.answerless == "zero" else None, refusals[i] or "no answer found", False)
            votes.append([i for i in group if answers[i] is not None])
        try:
            labels, unread = self._clusters(votes, answers)
        except Exception as exc:  # the base would retry row by row: one-row "groups" must never vote
            failure = self._failure(exc)
            return [failure if score is None else score for score in scores]
        for voters in votes:
            for i in voters:
                if answers[i] in unread:
                    scores[i] = unread[answers[i]]
            self._score_group([i for i in voters if answers[i] not in unread], answers, labels, scores)
        return scores  # type: ignore[return-value]

    def _vote(self, text: str | None, read: dict[str, tuple[str | None, str | None]]) -> tuple[str | None, str | None]:
        """The answer ``text`` votes for, or ``None`` and why it does not vote (``None``: it states no answer);
        ``read``: the answers of this batch read so far."""
        found = find_answer(text, last_number=self.last_number) if text is not None else None
        if not isinstance(found, Extraction) or len(found.answer) > self.max_answer_chars:  # none, or unreadable
            return None, None
        if found.answer not in read:
            why = _refused(found.answer)
            read[found.answer] = (None, why) if why else (_normalized(found.answer), None)
        return read[found.answer]

    def _clusters(
        self, votes: list[list[int]], answers: list[str | None]
    ) -> tuple[dict[int, int], dict[str, Score]]:
        """Cluster label per voting row (rows with equivalent answers share the label of the first), and
        the score of each answer that could not be read or compared in time (it does not vote)."""
        groups = [list(dict.fromkeys(answers[i] for i in voters)) for voters in votes]
        pairs = [(a, b) for distinct in groups for k, a in enumerate(distinct) for b in distinct[k + 1 :]]
        same = {pair for pair in pairs if self._equivalent_strings(*pair)}
        unread: dict[str, Score] = {}
        if self.checker is not None:
            undecided = [pair for pair in pairs if pair not in same]
            parses = self._read_answers({a for pair in undecided for a in pair}, unread)
            undecided = [pair for pair in undecided if all(parses.get(a, a not in unread) for a in pair)]
            for pair, check in zip(undecided, self.checker.compare(undecided), strict=True):
                if check.verdict:
                    same.add(pair)
                elif check.status in ("timeout", "error"):  # no verdict on the pair: neither answer can vote
                    for answer in pair:
                        unread.setdefault(answer, self._late(check.status, check.detail, "compared"))
        labels: dict[int, int] = {}
        for voters, distinct in zip(votes, groups, strict=True):
            root = {a: k for k, a in enumerate(distinct)}  # cluster = index of its first-seen answer
            for k, a in enumerate(distinct):
                for b in distinct[k + 1 :]:
                    if (a, b) in same and root[b] != root[a]:
                        low, high = sorted((root[a], root[b]))
                        root = {x: low if r == high else r for x, r in root.items()}
            for i in voters:
                labels[i] = root[answers[i]]  # type: ignore[index]
        return labels, unread

    def _read_answers(self, answers: Iterable[str], unread: dict[str, Score]) -> dict[str, bool]:
        """Read each answer that needs the parser once, alone, in a worker with the deadline (plain literals
        are settled in this process): answer -> whether it parses; those not read in time go to ``unread``.

        Reading is ``math``'s check against the answer ``0``: parsing alone is lazy (``9^{9^{9^{9}}}`` parses
        in a millisecond), a comparison with a number evaluates the answer, as every sibling's would."""
        parses = {a: self._read[a] for a in answers if a in self._read}
        todo = sorted(a for a in answers if a not in parses and parse_literal(a) is None)
        outcomes = self.checker.pool.map(verify_pair, [("0", a) for a in todo], timeout=self.checker.timeout,
                                         requires=(_WARM_UP,))
        for answer, outcome in zip(todo, outcomes, strict=True):
            if outcome.status != "ok":
                unread[answer] = self._late(outcome.status, str(outcome.value or ""), "read")
                continue
            parses[answer] = outcome.value != "answer unparseable"
            if len(self._read) >= _READABLE:
                self._read.pop(next(iter(self._read)))
            self._read[answer] = parses[answer]
        return parses

    def _late(self, status: str, detail: str, what: str) -> Score:
        """The score of a row whose answer could not be ``what`` (read / compared) in time: it does not vote."""
        if status == "timeout":
            return Score(self.timeout_score, f"timeout after {self.checker.timeout:g} s: the answer could not be "
                                             f"{what} in time, so it does not vote", None, "timeout")
        return Score(None, f"error: the answer could not be {what}: {detail}".rstrip(": "), None, "error")

    @staticmethod
    def _equivalent_strings(a: str, b: str) -> bool:
        return "".join(a.split()).lower() == "".join(b.split()).lower()

    def _score_group(
        self, voters: list[int], answers: list[str | None], labels: dict[int, int], scores: list[Score | None]
    ) -> None:
        counts: dict[int, int] = {}
        for i in voters:
            counts[labels[i]] = counts.get(labels[i], 0) + 1
        top = max(counts.values(), default=0)
        leaders = [label for label, count in counts.items() if count == top]
        if top < self.min_votes:
            winners: list[int] = []
            why = f"no majority: top answer has {top} vote(s) < min_votes {self.min_votes}"
        elif len(leaders) > 1 and self.ties == "none":
            winners, why = [], f"tie: {len(leaders)} answers with {top} votes each"
        else:
            winners = leaders if self.ties == "all" else [min(leaders)]
            why = ""
        total = len(voters)
        for i in voters:
            won = labels[i] in winners
            votes = f"{counts[labels[i]]}/{total} votes"
            if why:
                scores[i] = Score(0.0, f"{why}; this answer {answers[i]} has {votes}", False)
            elif won:
                scores[i] = Score(1.0, f"majority answer {answers[i]} ({votes})", True)
            else:
                scores[i] = Score(0.0, f"minority answer {answers[i]} ({votes}; majority has {top})", False)


def _normalized(answer: str) -> str | None:
    """``answer`` as it votes: normalised, with its unit (5 km never votes with 5 cm); None when nothing is left."""
    value, unit = normalize(answer), unit_of(answer)
    return None if not value else value if unit is None else f"{value} \\text{{ {unit}}}"


def _refused(answer: str) -> str | None:
    """Why ``answer`` cannot vote, or ``None`` when it names one value (see the module docstring)."""
    if len(alternatives(answer)) > 1 or _HEDGE_WORD.search(answer):
        return f"a hedge names no one answer, so it does not vote: {answer[:60]}"
    signs = list(_RELATION.finditer(answer))
    if not signs:
        return None
    if len(signs) == 1:
        sign = signs[0].group()
        left, right = answer[: signs[0].start()], answer[signs[0].end():]
        if sign == "=" and _NAME.fullmatch(left) and right.strip():
            return None  # x = 7: the value of a named quantity
        if sign in _SET_SIGNS and right.strip() and (_NAME.fullmatch(left) or _NAME.fullmatch(right)):
            return None  # x > 2, x \\in [1, 2]: the set a named quantity lies in
    return f"a relation between values states no one answer, so it does not vote: {answer[:60]}"


@hookimpl
def register_rewards(register):
    register(MajorityVote)
