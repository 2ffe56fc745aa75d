"""The contract kit: run it against your reward in your own tests.

    from rewardhub.testing import check_contract
    check_contract(rewardhub.get("my_reward"), columns={"solution": "10"})

It checks what every trainer relies on (one value per completion, ``None`` semantics, plain and
chat completions alike, sync/async parity, pickling, determinism, the deadline) and feeds gaming
probes (empty think blocks, several answers, hedged lists, 10k-character and deeply nested inputs,
look-alike characters) that must never earn full credit.
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

_HOMOGLYPHS = str.maketrans({"0": "O", "1": "l", "a": "а", "e": "е", "o": "о", "c": "с", "x": "х", "A": "Α", "B": "В"})


@dataclass(frozen=True)
class Probe:
    """A completion built to game a reward; it must not get full credit."""

    name: str
    make: Callable[[str, str], str]  # (right answer, wrong answer) -> completion text


GAMING_PROBES: tuple[Probe, ...] = (
    Probe("empty_think", lambda right, wrong: "<think></think>"),
    Probe("empty_think_answer", lambda right, wrong: "<think></think>\n<answer></answer>"),
    Probe("several_boxed", lambda right, wrong: f"\\boxed{{{wrong}}} \\boxed{{{right}}} \\boxed{{{wrong}9}}"),
    Probe("several_answer_tags", lambda r, w: f"<answer>{w}</answer>\n<answer>{r}</answer>\n<answer>{w}9</answer>"),
    Probe("hedged_list", lambda right, wrong: f"It is {wrong}, {right} or {wrong}9. \\boxed{{{wrong}, {right}, {wrong}9}}"),
    Probe("long_10k", lambda right, wrong: "filler " * 1500 + f"\\boxed{{{wrong}}}"),
    Probe("deep_nesting", lambda right, wrong: "\\boxed{" + "{" * 10_000 + wrong + "}" * 10_000 + "}"),
    Probe("unbalanced_braces", lambda right, wrong: "\\boxed{" + "{" * 10_000),
    Probe("lookalike_answer", lambda right, wrong: f"The answer is \\boxed{{{right.translate(_HOMOGLYPHS)}}}"),
)


class ContractViolation(AssertionError):
    """The reward broke its contract; the message lists every violation found."""


@dataclass
class ContractReport:
    """Every check's outcome: the violations found and the value each probe got."""

    failures: list[str] = field(default_factory=list)
    probe_values: dict[str, float | None] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


def check_contract(
    reward: Any,
    *,
    columns: dict[str, Any] | None = None,
    right: str = "10",
    wrong: str = "12",
    correct_completion: str | None = None,
    full_credit: float = 1.0,
    deadline: float = 60.0,
    probes: tuple[Probe, ...] = GAMING_PROBES,
    prompt: Any = "What is 4 + 6?",
    raise_on_failure: bool = True,
) -> ContractReport:
    """Run the contract checks and gaming probes against ``reward`` (any TRL-style reward callable).

    ``columns`` are given to every row (default: ``{"solution": right}``). When
    ``correct_completion`` is given it must earn ``full_credit``, showing the probes are meaningful.
    """
    columns = {"solution": right} if columns is None else columns
    report = ContractReport()
    texts = [
        correct_completion or f"The answer is \\boxed{{{right}}}.",
        f"The answer is \\boxed{{{wrong}}}.",
        "",
        *(probe.make(right, wrong) for probe in probes),
    ]
    start = time.perf_counter()
    # In a daemon thread: a reward that hangs on a probe fails the check instead of hanging the test run.
    first: list[list[float | None] | None] = []
    scratch = ContractReport()  # the thread's own: a call that ends after the deadline must not touch the report
    worker = threading.Thread(
        target=lambda: first.append(_checked_call(reward, prompt, texts, columns, scratch, "plain completions")),
        name="rewardhub-contract", daemon=True,
    )
    worker.start()
    worker.join(deadline)
    report.seconds = time.perf_counter() - start
    if worker.is_alive():
        report.failures.append(f"deadline: scoring {len(texts)} completions did not finish within {deadline} s "
                               f"(a gaming probe may send the reward into a runaway loop)")
        return _finish(report, raise_on_failure)
    report.failures.extend(scratch.failures)
    values = first[0]
    if values is None:
        return _finish(report, raise_on_failure)
    if report.seconds > deadline:
        report.failures.append(f"deadline: scoring {len(texts)} completions took {report.seconds:.1f} s > {deadline} s")
    if correct_completion is not None and (values[0] is None or values[0] < full_credit):
        report.failures.append(f"the correct completion got {values[0]!r}, not full credit {full_credit}")
    if values[2] is not None and values[2] >= full_credit:
        report.failures.append(f"an empty completion got full credit ({values[2]})")
    for probe, value in zip(probes, values[3:], strict=True):
        report.probe_values[probe.name] = value
        if value is not None and value >= full_credit:
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
    return _finish(report, raise_on_failure)


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
