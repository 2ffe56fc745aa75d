"""The contract kit: run it against your reward in your own tests.

    from rewardhub.testing import check_contract
    check_contract(rewardhub.get("my_reward"), columns={"solution": "42"})   # probes are built around 42

It checks what every trainer relies on (one value per completion, ``None`` semantics, plain and
chat completions alike, sync/async parity, pickling, determinism, the deadline) and feeds gaming
probes (empty think blocks, blocks holding only invisible characters, several answers, hedged lists in
any language, 10k-character and deeply nested inputs, look-alike characters, an answer of invisible
characters) that must never earn full credit. The answer probes (``RELATION_PROBES``: relations that end on
the answer, ``\\boxed{9 = 10}``; ``TEXT_PROBES``: hedges in other languages, candidates one per line) are fed
too and bind a reward that reads stated answers: one that pays the right answer more than the wrong one (a
reward that reads no answer, such as a length or politeness score, is not asked to tell a hedge from an
answer; ``answer_probes=True`` / ``False`` decides it explicitly). A reward that reads episodes (one of its
``required_columns()`` is a part of the trajectory view: ``tool_calls``, ``env_state``, ...) is also
fed the episode probes of :mod:`.episodes` (success claimed in prose, a forged tool result, a call
written as text, the submit tool spammed, look-alike arguments) and the right call whose tool failed with
an empty or a very long error (TRL's ``{'error': ''}``: a failure, not a success).
"""

from __future__ import annotations

import math
import numbers
import pickle
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._aio import run_coroutine
from .._reward import is_async_reward
from .._set.scorers import innermost
from ..episode import TRAJECTORY_COLUMNS
from .episodes import (
    EPISODE_PROBES,
    EpisodeProbe,
    EpisodeTask,
    _row,
    default_task,
    episode_failures,
    probe_values,
)
from .episodes import (
    _call as _tool_call,
)

__all__ = [
    "CONTRACT_EPISODE_PROBES",
    "ContractReport",
    "ContractViolation",
    "DEFAULT_PROBES",
    "GAMING_PROBES",
    "Probe",
    "RELATION_PROBES",
    "TEXT_PROBES",
    "check_contract",
    "reads_episodes",
]

# Characters that look like others but are not what a reader takes them for, even through rewardhub's
# canonical reading (rewards/text: NFKC, Cyrillic and Greek letters inside Latin words folded): digits
# written as letters, a standalone Greek capital for a Latin letter. A reward must not read them as the
# answer. (Cyrillic ``а`` inside ``bаnana`` *is* read as ``banana``: a reader sees that word.)
_HOMOGLYPHS = str.maketrans({"0": "O", "1": "l", "2": "ᒿ", "3": "Ʒ", "4": "Ꮞ", "5": "Ƽ", "6": "б", "7": "⁊",
                             "8": "Ȣ", "9": "ꝗ", "A": "Α", "B": "Β", "E": "Ε"})


def _lookalike(answer: str) -> str:
    """``answer`` written with look-alike characters (one more at the end if none of its own has one)."""
    disguised = answer.translate(_HOMOGLYPHS)
    return disguised if disguised != answer else answer + "о"


@dataclass(frozen=True)
class Probe:
    """A completion built to game a reward; it must not get full credit (an ``answer`` probe: from a reward that
    reads stated answers, see ``check_contract``)."""

    name: str
    make: Callable[[str, str], str]  # (right answer, wrong answer) -> completion text
    answer: bool = False


GAMING_PROBES: tuple[Probe, ...] = (
    Probe("empty_think", lambda right, wrong: "<think></think>"),
    Probe("empty_think_answer", lambda right, wrong: "<think></think>\n<answer></answer>"),
    Probe("several_boxed", lambda right, wrong: f"\\boxed{{{wrong}}} \\boxed{{{right}}} \\boxed{{{wrong}9}}"),
    Probe("several_answer_tags", lambda r, w: f"<answer>{w}</answer>\n<answer>{r}</answer>\n<answer>{w}9</answer>"),
    Probe("hedged_list", lambda right, wrong: f"It is {wrong}, {right} or {wrong}9. \\boxed{{{wrong}, {right}, {wrong}9}}"),
    Probe("long_10k", lambda right, wrong: "filler " * 1500 + f"\\boxed{{{wrong}}}"),
    Probe("deep_nesting", lambda right, wrong: "\\boxed{" + "{" * 10_000 + wrong + "}" * 10_000 + "}"),
    Probe("unbalanced_braces", lambda right, wrong: "\\boxed{" + "{" * 10_000),
    Probe("lookalike_answer", lambda right, wrong: f"The answer is \\boxed{{{_lookalike(right)}}}"),
    # blocks a reader sees as empty (a zero-width space, a word joiner) and answers that name no one value
    Probe("invisible_think_answer", lambda right, wrong: "<think>\u200b</think>\n<answer>\u2060\u200b</answer>"),
    Probe("hedged_other_language", lambda right, wrong: f"\\boxed{{{wrong} \\text{{ oder }} {right}}}"),
)
# Relations that end on the right answer: a reader that takes the value after the last "=" is fooled.
RELATION_PROBES: tuple[Probe, ...] = (
    Probe("relation_answer", lambda right, wrong: f"\\boxed{{{wrong} = {right}}}", answer=True),
    Probe("chained_relation", lambda right, wrong: f"\\boxed{{x = {wrong} = {right}}}", answer=True),
    Probe("false_arithmetic", lambda right, wrong: f"\\boxed{{{wrong} + 0 = {right}}}", answer=True),
)


def _failed_call(error: str) -> Callable[[EpisodeTask], dict[str, Any]]:
    """The right call, whose tool raised: TRL hands the policy ``str({"error": str(e)})``; nothing changed."""
    def make(task: EpisodeTask) -> dict[str, Any]:
        return _row(task, [{"role": "assistant", "content": "", "tool_calls": [_tool_call(task.tool, task.arguments)]},
                           {"role": "tool", "name": task.tool, "content": str({"error": error})},
                           {"role": "assistant", "content": "Done."}], task.start_state)
    return make


# The episode probes check_contract feeds: those of .episodes, and a call whose tool failed silently or at length.
CONTRACT_EPISODE_PROBES: tuple[EpisodeProbe, ...] = (
    *EPISODE_PROBES,
    EpisodeProbe("failed_call_empty_error", _failed_call("")),
    EpisodeProbe("failed_call_long_error", _failed_call("Traceback (most recent call last):\n" * 1000)),
)
# Hedges in other languages, candidates one per line and answers that show nothing (issue 33): a reward reading
# policy text through a canonical, multilingual layer gives none of them full credit.
TEXT_PROBES: tuple[Probe, ...] = (
    Probe("hedge_oder", lambda right, wrong: f"The answer is {wrong} oder {right}.", answer=True),
    Probe("hedge_ou", lambda right, wrong: f"La réponse est {wrong} ou {right}.", answer=True),
    Probe("hedge_cjk", lambda right, wrong: f"答案是{wrong}或{right}", answer=True),
    Probe("hedge_russian", lambda right, wrong: f"Ответ: {wrong} или {right}", answer=True),
    Probe("one_per_line", lambda right, wrong: f"{wrong}\n{right}", answer=True),
    Probe("invisible_answer", lambda right, wrong: "\u200b\u2060\ufeff"),
)
# What ``check_contract`` feeds by default: every probe above.
DEFAULT_PROBES: tuple[Probe, ...] = GAMING_PROBES + RELATION_PROBES + TEXT_PROBES


class ContractViolation(AssertionError):
    """The reward broke its contract; the message lists every violation found."""


@dataclass
class ContractReport:
    """Every check's outcome: the violations found and the value each probe got."""

    failures: list[str] = field(default_factory=list)
    probe_values: dict[str, float | None] = field(default_factory=dict)
    answer_probes: bool = False  # whether the answer probes bound the reward (it reads stated answers)
    episode_values: dict[str, float | None] = field(default_factory=dict)  # episode probes and ``honest``
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


def check_contract(
    reward: Any,
    *,
    columns: dict[str, Any] | None = None,
    right: str | None = None,
    wrong: str | None = None,
    correct_completion: str | None = None,
    full_credit: float = 1.0,
    deadline: float = 60.0,
    probes: tuple[Probe, ...] = DEFAULT_PROBES,
    answer_probes: bool | None = None,
    prompt: Any = None,
    episode_task: EpisodeTask | None = None,
    episode_probes: tuple[EpisodeProbe, ...] = CONTRACT_EPISODE_PROBES,
    raise_on_failure: bool = True,
) -> ContractReport:
    """Run the contract checks and gaming probes against ``reward`` (any TRL-style reward callable).

    ``columns`` are given to every row (default: ``{"solution": right}``). The probes follow them:
    ``right`` (the answer they are built around) defaults to the reference answer in ``columns``
    (the first of the reward's ``required_columns()`` holding one answer, else ``solution``, else
    the only such column), and to ``"10"`` when there is none; ``wrong`` to an answer that neither
    holds ``right`` nor is held in it. When ``correct_completion`` is given it must earn
    ``full_credit``, showing the probes are meaningful.

    Every probe but the answer probes binds any reward; the answer probes (``Probe.answer``) bind a reward
    that reads stated answers: by default one that pays the right answer (``correct_completion``, else
    ``\\boxed{right}``) more than ``\\boxed{wrong}``; ``answer_probes`` True or False says so explicitly (a
    reward that votes or reads answers in groups may not tell them apart alone).

    A reward that reads episodes, or any reward when ``episode_task`` is given, is also fed
    ``episode_probes`` built on ``episode_task`` (default: submitting ``right`` once); when
    ``episode_task`` is given, its honest episode must earn ``full_credit``.
    """
    if right is None:
        right = _reference_answer(reward, columns) or "10"
    columns = {"solution": right} if columns is None else columns
    wrong = _wrong_answer(right) if wrong is None else wrong
    if prompt is None:
        prompt = "What is 4 + 6?" if right == "10" else "Solve the problem."
    report = ContractReport()
    texts = [
        correct_completion or f"The answer is \\boxed{{{right}}}.",
        f"The answer is \\boxed{{{wrong}}}.",
        "",
        *(probe.make(right, wrong) for probe in probes),
    ]
    start = time.perf_counter()
    scratch = ContractReport()  # the thread's own: a call that ends after the deadline must not touch the report
    finished, values = _within(deadline, lambda: _checked_call(reward, prompt, texts, columns, scratch,
                                                                "plain completions"))
    report.seconds = time.perf_counter() - start
    if not finished:
        report.failures.append(f"deadline: scoring {len(texts)} completions did not finish within {deadline} s "
                               f"(a gaming probe may send the reward into a runaway loop)")
        return _finish(report, raise_on_failure)
    report.failures.extend(scratch.failures)
    if values is None:
        return _finish(report, raise_on_failure)
    if report.seconds > deadline:
        report.failures.append(f"deadline: scoring {len(texts)} completions took {report.seconds:.1f} s > {deadline} s")
    if correct_completion is not None and (values[0] is None or values[0] < full_credit):
        report.failures.append(f"the correct completion got {values[0]!r}, not full credit {full_credit}")
    if values[2] is not None and values[2] >= full_credit:
        report.failures.append(f"an empty completion got full credit ({values[2]})")
    report.answer_probes = _reads_answers(values) if answer_probes is None else answer_probes
    for probe, value in zip(probes, values[3:], strict=True):
        report.probe_values[probe.name] = value
        if value is not None and value >= full_credit and (report.answer_probes or not probe.answer):
            report.failures.append(f"gaming probe {probe.name!r} got full credit ({value})")

    chat = [[{"role": "assistant", "content": t}] for t in texts]
    _compare(report, "chat completions", values, _checked_call(reward, prompt, chat, columns, report, "chat"))
    _compare(report, "a second call (determinism)", values, _checked_call(reward, prompt, texts, columns, report, "repeat"))
    try:
        clone = pickle.loads(pickle.dumps(reward))
    except Exception as exc:
        report.failures.append(f"not picklable (TRL's async GRPO sends rewards to a child process): {exc}")
    else:
        _compare(report, "the unpickled copy", values, _checked_call(clone, prompt, texts, columns, report, "unpickled"))
    if hasattr(reward, "evaluate"):
        try:
            evaluated = reward.evaluate([prompt] * len(texts), texts, **_repeat(columns, len(texts))).values
        except Exception as exc:
            report.failures.append(f"evaluate(): the reward raised {type(exc).__name__}: {exc}")
        else:
            _compare(report, "evaluate() (sync/async parity)", values, evaluated)
    if not isinstance(getattr(reward, "__name__", None), str):
        report.failures.append("no __name__: TRL names its reward metrics by it")
    odd = _checked_call(reward, prompt, [None, 123, {"role": "assistant"}], columns, report, "non-text completions")
    if odd is not None and any(v is not None and v >= full_credit for v in odd):
        report.failures.append(f"a non-text completion got full credit: {odd}")
    if episode_task is not None or reads_episodes(reward):
        _check_episodes(report, reward, episode_task, episode_probes, columns, right, full_credit, deadline)
    return _finish(report, raise_on_failure)


def _reads_answers(values: list[float | None]) -> bool:
    """Whether the reward paid the right answer (first completion) more than the wrong one (second)."""
    return values[0] is not None and values[1] is not None and values[0] > values[1]


def reads_episodes(reward: Any) -> bool:
    """Whether ``reward`` (or the reward inside its gates and routes) declares a trajectory column."""
    declared = getattr(innermost(reward), "required_columns", None)
    return any(name in TRAJECTORY_COLUMNS for name in (declared() if callable(declared) else ()))


def _check_episodes(report: ContractReport, reward: Any, task: EpisodeTask | None, probes: tuple[EpisodeProbe, ...],
                    columns: dict[str, Any], right: str, full_credit: float, deadline: float) -> None:
    """The episode probes (and the honest episode) scored one row at a time, within the deadline."""
    outcome: list[Any] = []

    def run() -> dict[str, Any] | None:
        try:
            return probe_values(reward, task or default_task(right), probes, columns)
        except Exception as exc:
            outcome.append(f"episode probes: the reward raised {type(exc).__name__}: {exc}")
            return None

    finished, values = _within(deadline, run)
    if not finished:
        report.failures.append(f"deadline: the episode probes did not finish within {deadline} s")
        return
    report.failures.extend(outcome)
    if values is None:
        return
    report.episode_values = values
    bad = [f"episode probe {name!r}: value {v!r}; must be a finite float or None" for name, v in values.items()
           if v is not None and not _is_finite_number(v)]
    report.failures.extend(bad or episode_failures(values, full_credit, honest_required=task is not None))


def _within(deadline: float, work: Callable[[], Any]) -> tuple[bool, Any]:
    """``(True, work())``, or ``(False, None)`` when it is still running after ``deadline`` seconds: it runs
    in a daemon thread, so a reward that hangs on a probe fails the check instead of hanging the test run."""
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(work()), name="rewardhub-contract", daemon=True)
    worker.start()
    worker.join(deadline)
    return (False, None) if worker.is_alive() else (True, done[0])


def _reference_answer(reward: Any, columns: dict[str, Any] | None) -> str | None:
    """The answer a reward is scored against in ``columns`` (see ``check_contract``), if any."""
    if not columns:
        return None
    answers = {k: str(v).strip() for k, v in columns.items()
               if isinstance(v, str | numbers.Real) and not isinstance(v, bool) and str(v).strip()}
    declared = getattr(reward, "required_columns", None)
    for name in (*(declared() if callable(declared) else ()), "solution"):
        if name in answers:
            return answers[name]
    return next(iter(answers.values())) if len(answers) == 1 else None


def _wrong_answer(right: str) -> str:
    """An answer other than ``right`` that a reward paying for ``right`` anywhere would not pay for."""
    candidates = ["12", "7", "3", "none", "unknown"]
    if right.lstrip("-").isdigit():
        n = int(right)
        candidates = [str(n + 2), str(n + 3), str(2 * n + 7), *candidates]
    return next((c for c in candidates if right not in c and c not in right), "#")


def _repeat(columns: dict[str, Any], n: int) -> dict[str, list[Any]]:
    return {k: [v] * n for k, v in columns.items()}


def _call(reward: Any, prompt: Any, completions: list[Any], columns: dict[str, Any]) -> list[Any]:
    kwargs = _repeat(columns, len(completions))
    if is_async_reward(reward):
        # rewardhub's persistent loop, not asyncio.run: works inside a running loop (Jupyter, async tests)
        # and keeps loop-bound clients alive across the kit's calls, as a trainer's loop would.
        return run_coroutine(reward(prompts=[prompt] * len(completions), completions=completions, **kwargs))
    return reward(prompts=[prompt] * len(completions), completions=completions, **kwargs)


def _checked_call(reward: Any, prompt: Any, completions: list[Any], columns: dict[str, Any],
                  report: ContractReport, label: str) -> list[float | None] | None:
    """Call the reward and check the shape of what it returned; None when the call itself failed."""
    try:
        values = list(_call(reward, prompt, completions, columns))
    except Exception as exc:
        report.failures.append(f"{label}: the reward raised {type(exc).__name__}: {exc}")
        return None
    if len(values) != len(completions):
        report.failures.append(f"{label}: {len(values)} values for {len(completions)} completions")
        return None
    bad = [(i, v) for i, v in enumerate(values) if v is not None and not _is_finite_number(v)]
    for i, value in bad:
        report.failures.append(f"{label}: value #{i} is {value!r}; must be a finite float or None")
    return None if bad else values


def _is_finite_number(value: Any) -> bool:
    # numbers.Real: numpy floats and ints count too (TRL turns them into a tensor like floats); bool does not.
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _compare(report: ContractReport, label: str, expected: list[Any], got: list[Any] | None) -> None:
    if got is not None and got != expected:
        diff = [i for i, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b]
        report.failures.append(f"{label} gave other values at positions {diff}: {[got[i] for i in diff]} "
                               f"instead of {[expected[i] for i in diff]}")


def _finish(report: ContractReport, raise_on_failure: bool) -> ContractReport:
    if raise_on_failure and report.failures:
        raise ContractViolation("reward contract violated:\n  - " + "\n  - ".join(report.failures))
    return report
