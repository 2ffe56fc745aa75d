"""Offline verifier test cases: YAML files of completions with the reward each must get.

A case file::

    reward: exact_match            # registry name (or `config: rewards.yaml` + per-case `reward: alias`)
    params: {column: solution}
    cases:
      - name: boxed answer
        completion: 'The answer is \\boxed{42}'
        columns: {solution: '42'}
        expect: 1.0                # a number, null (abstain), {approx: x, tol: t}, {min: a, max: b}
        reason: boxed              # optional: text the reason must contain
      - name: a whole GRPO group
        prompt: 'q1'
        completions: ['\\boxed{1}', '\\boxed{2}']
        columns: {solution: ['1', '1']}
        expect: [1.0, 0.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._batch import Batch
from .._registry import registry
from .._reward import Reward
from .._set.compose import RewardSet, load
from ..completions import is_conversational
from ..errors import ConfigError

__all__ = [
    "CASE_FILE_KEYS",
    "CASE_KEYS",
    "Case",
    "CaseResult",
    "DEFAULT_TOLERANCE",
    "Expectation",
    "load_case_file",
    "render_failures",
    "run_case",
    "run_cases",
]

CASE_FILE_KEYS = ("reward", "params", "config", "cases")
CASE_KEYS = ("name", "prompt", "completion", "completions", "columns", "expect", "reason", "reward")
DEFAULT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Expectation:
    """What a value must be: exact, approximate, within bounds, or ``None`` (abstain)."""

    kind: str  # "exact" | "approx" | "range" | "none"
    value: float | None = None
    tol: float = DEFAULT_TOLERANCE
    low: float = -math.inf
    high: float = math.inf

    def accepts(self, got: float | None) -> bool:
        if self.kind == "none":
            return got is None
        if got is None:
            return False
        if self.kind == "range":
            return self.low <= got <= self.high
        return abs(got - self.value) <= self.tol

    def describe(self) -> str:
        if self.kind == "none":
            return "None"
        if self.kind == "range":
            return f"in [{self.low:g}, {self.high:g}]"
        return f"{self.value:g}" if self.kind == "exact" else f"{self.value:g} ± {self.tol:g}"


@dataclass(frozen=True)
class Case:
    """One case: a batch of completions (usually one) and what each must score."""

    file: str
    name: str
    reward: Reward
    prompts: list[Any]
    completions: list[Any]
    columns: dict[str, list[Any]]
    expect: list[Expectation]
    reason: str | None = None


@dataclass
class CaseResult:
    """The outcome of one case."""

    case: Case
    got: list[float | None]
    reasons: list[str]
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def id(self) -> str:
        return f"{self.case.file}::{self.case.name}"

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "got": self.got, "reasons": self.reasons,
                "expected": [e.describe() for e in self.case.expect], "failures": self.failures}


def load_case_file(path: str | Path) -> list[Case]:
    """Parse a case file into cases; a malformed file raises ``ConfigError`` naming case and key."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"case file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"cannot parse case file {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ConfigError(f"{path}: a case file is a mapping with a 'cases' list")
    _reject_unknown(data, CASE_FILE_KEYS, f"{path}")
    rewards = _rewards_for(data, path)
    cases = [_case(path, i, raw, rewards) for i, raw in enumerate(data["cases"], start=1)]
    names = [case.name for case in cases]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ConfigError(f"{path}: case name(s) {', '.join(map(repr, twice))} used more than once; names identify cases")
    return cases


def _rewards_for(data: dict[str, Any], path: Path) -> RewardSet | Reward | None:
    if "config" in data and ("reward" in data or "params" in data):
        raise ConfigError(f"{path}: give either 'config' (cases pick an alias with 'reward') or 'reward' and 'params'")
    if "config" in data:
        return load(path.parent / data["config"])
    if "reward" in data:
        params = data.get("params") or {}
        if not isinstance(params, dict):
            raise ConfigError(f"{path}: 'params' must be a mapping")
        try:
            return registry.create(data["reward"], **params)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return None


def _case(path: Path, index: int, raw: Any, rewards: RewardSet | Reward | None) -> Case:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: case #{index} must be a mapping")
    name = str(raw.get("name", f"case {index}"))
    where = f"{path}: case {name!r}"
    _reject_unknown(raw, CASE_KEYS, where)
    reward = _case_reward(raw, rewards, where)
    if ("completion" in raw) == ("completions" in raw):
        raise ConfigError(f"{where}: give exactly one of 'completion' or 'completions'")
    single = "completion" in raw
    if not single and (not isinstance(raw["completions"], list) or not raw["completions"]):
        raise ConfigError(f"{where}: 'completions' must be a non-empty list (one completion: use 'completion')")
    completions = [raw["completion"]] if single else raw["completions"]
    n = len(completions)
    prompt = raw.get("prompt")
    per_completion = not single and isinstance(prompt, list) and not is_conversational(prompt)
    if per_completion and len(prompt) != n:
        raise ConfigError(f"{where}: 'prompt' is a list of {len(prompt)} prompts for {n} completions "
                          f"(a chat prompt is a list of messages with 'role')")
    prompts = list(prompt) if per_completion else [prompt] * n
    raw_columns = raw.get("columns") or {}
    if not isinstance(raw_columns, dict):
        raise ConfigError(f"{where}: 'columns' must be a mapping of column name to value")
    columns = {}
    for key, value in raw_columns.items():
        if not single and isinstance(value, list) and len(value) != n:
            raise ConfigError(f"{where}: column {key!r} has {len(value)} values for {n} completions; give one "
                              f"per completion (a list value shared by all: repeat it in a list of {n})")
        columns[key] = [value] if single else (list(value) if isinstance(value, list) else [value] * n)
    if raw.get("reason") is not None and not isinstance(raw["reason"], str):
        raise ConfigError(f"{where}: 'reason' must be text the reason contains, got {raw['reason']!r}")
    if "expect" not in raw:
        raise ConfigError(f"{where}: missing 'expect' (a number, null, {{approx, tol}} or {{min, max}})")
    expected = raw["expect"]
    expectations = [_expectation(expected, where)] * n if single or not isinstance(expected, list) else [
        _expectation(e, where) for e in expected
    ]
    if len(expectations) != n:
        raise ConfigError(f"{where}: {len(expectations)} expectations for {n} completions")
    return Case(str(path), name, reward, prompts, completions, columns, expectations, raw.get("reason"))


def _case_reward(raw: dict[str, Any], rewards: RewardSet | Reward | None, where: str) -> Reward:
    if isinstance(rewards, RewardSet):
        alias = raw.get("reward")
        if alias is None:
            return rewards.weighted
        try:
            return rewards[alias]
        except KeyError as exc:
            raise ConfigError(f"{where}: {exc.args[0]}") from None
    if "reward" in raw:
        try:
            return registry.create(raw["reward"])
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    if rewards is None:
        raise ConfigError(f"{where}: no reward: set 'reward' (and 'params') or 'config' at the top of the file")
    return rewards


def _expectation(raw: Any, where: str) -> Expectation:
    if raw is None:
        return Expectation("none")
    if isinstance(raw, bool) or isinstance(raw, int | float):
        return Expectation("exact", float(raw))
    if isinstance(raw, dict) and all(_is_number(v) for v in raw.values()):
        if "approx" in raw and set(raw) <= {"approx", "tol"}:
            return Expectation("approx", float(raw["approx"]), tol=float(raw.get("tol", 1e-2)))
        if raw and set(raw) <= {"min", "max"}:
            return Expectation("range", low=float(raw.get("min", -math.inf)), high=float(raw.get("max", math.inf)))
    raise ConfigError(f"{where}: cannot read 'expect' {raw!r}: use a number, null, {{approx, tol}} or {{min, max}}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _reject_unknown(raw: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = [k for k in raw if k not in allowed]
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}")


def run_case(case: Case) -> CaseResult:
    """Score the case's batch and compare with its expectations."""
    try:
        batch = Batch(case.prompts, case.completions, case.columns, reward_name=case.reward.__name__)
        result = case.reward.evaluate_batch(batch)
    except Exception as exc:  # a crashing reward is a failed case, not a crashed run
        return CaseResult(case, [], [], [f"reward raised {type(exc).__name__}: {exc}"])
    failures = []
    for i, (expect, score) in enumerate(zip(case.expect, result.scores, strict=True)):
        label = f"completion {i + 1}: " if len(case.expect) > 1 else ""
        if not expect.accepts(score.value):
            failures.append(f"{label}expected {expect.describe()}, got {score.value!r} ({score.reason or 'no reason'})")
        if case.reason is not None and case.reason.lower() not in score.reason.lower():
            failures.append(f"{label}reason {score.reason!r} does not contain {case.reason!r}")
    return CaseResult(case, result.values, result.reasons, failures)


def run_cases(cases: list[Case]) -> list[CaseResult]:
    return [run_case(case) for case in cases]


def render_failures(results: list[CaseResult]) -> str:
    """A plain-text table of failed cases: id and what went wrong."""
    lines = ["FAILED CASES", "-" * 12]
    for result in results:
        lines.append(result.id)
        lines.extend(f"    {failure}" for failure in result.failures)
    return "\n".join(lines)
