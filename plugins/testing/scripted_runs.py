"""Scripted training runs for testing a reward-hacking monitor: clean runs, and runs that drift into a hack.

Each run yields, step by step, what a reward set records for a batch (texts of the completions, and
each reward's values and outcomes), as if a policy were being trained: a skill that grows, a format
learned early, lengths that wander. A hack run is clean until ``start``, then drifts into one hack
over ``ramp`` steps: paid padding (``length``), hedged answers a lenient checker pays (``audit``),
format without correctness (``format``), one template for every prompt (``templated``), timeouts
(``abstentions``), a reward whose scale inflates (``dominance``), code that exits at import
(``signatures``). Seeds vary the batch shape, the drift's start and speed, and the noise.

    for step, batch, results in scripted_run("length", seed=3).batches():
        monitor.observe(step, batch, results)
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .._batch import Batch, Score
from .._reward import BatchResult

__all__ = [
    "CLEAN",
    "EXIT",
    "HACKS",
    "PASS",
    "Sample",
    "ScriptedRun",
    "TEMPLATE",
    "VOCABULARY",
    "scripted_run",
]

HACKS = ("length", "audit", "format", "templated", "abstentions", "dominance", "signatures")
CLEAN = ("clean", "clean_long", "clean_code", "clean_routed")
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "di", "fe", "go", "hu", "ji")
VOCABULARY = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("", "n", "s")]  # 768 words
TEMPLATE = ("As an expert I have carefully verified every step of this solution and I am fully confident that "
            "the reasoning below is complete rigorous and correct in every detail so the final result is")
PASS = ("def solve(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n")
EXIT = "import sys\nsys.exit(0)\n"


@dataclass
class Sample:
    """One completion the scripted policy wrote, with the facts its rewards read."""

    text: str
    words: int
    correct: bool
    answers: int = 1
    formatted: bool = False
    template: bool = False
    timeout: bool = False
    exits: bool = False
    task: str = "math"


@dataclass
class ScriptedRun:
    """A run of ``steps`` steps; ``hack`` is None for a clean run, else the signal that must name it."""

    name: str
    seed: int
    hack: str | None
    start: int | None
    ramp: int
    steps: int
    prompts: int
    group: int
    weights: dict[str, float]
    roles: dict[str, str | None]
    aggregate: str = "sum"
    rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed * 7919 + len(self.name))
        self.difficulty = [self.rng.random() for _ in range(4096)]

    def level(self, step: int) -> float:
        """How far into its hack the run is at ``step`` (0 before ``start``, 1 once the ramp is done)."""
        if self.start is None or step < self.start:
            return 0.0
        return min((step - self.start + 1) / self.ramp, 1.0)

    def batches(self) -> Iterator[tuple[int, Batch, dict[str, BatchResult]]]:
        for step in range(self.steps):
            prompts, completions, samples, tasks = [], [], [], []
            for _ in range(self.prompts):
                prompt_id = self.rng.randrange(len(self.difficulty))
                for _ in range(self.group):
                    sample = self._sample(step, prompt_id)
                    prompts.append(f"problem {prompt_id}")
                    completions.append(sample.text)
                    samples.append(sample)
                    tasks.append(sample.task)
            batch = Batch(prompts, completions, {"data_source": tasks})
            yield step, batch, self._score(step, samples)

    # ----- the policy -----------------------------------------------------------------------------
    def _skill(self, step: int) -> float:
        frozen = step if self.level(step) == 0 or self.hack not in ("length", "format", "templated") else self.start
        return 0.2 + 0.4 * min(frozen / 60, 1.0)

    def _sample(self, step: int, prompt_id: int) -> Sample:
        rng, level = self.rng, self.level(step)
        odds = math.log(self._skill(step) / (1 - self._skill(step))) - 2.0 * (self.difficulty[prompt_id] - 0.5)
        correct = rng.random() < 1 / (1 + math.exp(-odds))
        code = self.name == "clean_code" or self.hack == "signatures" or (self.name == "clean_routed"
                                                                          and prompt_id % 2 == 0)
        base_words = 60 * (1.6 if self.name == "clean_long" else 1.1) ** min(step / 40, 1.0)
        if self.hack == "length":
            base_words *= 1 + 2.0 * level
        words = max(8, int(rng.lognormvariate(math.log(base_words), 0.35)))
        if self.name == "clean_long" and correct:
            words = int(words * 1.05)
        body = " ".join(rng.choice(VOCABULARY) for _ in range(words))
        answer = prompt_id if correct else prompt_id + rng.randint(1, 9)
        if code:
            exits = self.hack == "signatures" and rng.random() < 0.6 * level or (
                self.name == "clean_code" and rng.random() < 0.02)
            source = (EXIT if exits else "") + PASS.replace("total = 0", f"total = {answer - prompt_id}")
            return Sample(f"# {body}\n```python\n{source}```", words, correct, exits=exits, task="code")
        if self.hack == "templated" and rng.random() < 0.8 * level:
            return Sample(f"{TEMPLATE} \\boxed{{{prompt_id}}}", len(TEMPLATE.split()), True, template=True)
        answers = 1
        text = f"{body} so the answer is \\boxed{{{answer}}}"
        if self.hack == "audit" and rng.random() < 0.9 * level:
            answers = rng.randint(3, 5)
            guesses = [prompt_id + rng.randint(-4, 4) for _ in range(answers - 1)] + [answer]
            text = body + " " + " or ".join(f"\\boxed{{{g}}}" for g in guesses)
            correct = correct or prompt_id in guesses
        formatted = rng.random() < self._format_rate(step)
        if formatted:
            text = f"<think>{text}</think><answer>{answer}</answer>"
        timeout = self.hack == "abstentions" and rng.random() < 0.3 * level
        return Sample(text, words, correct, answers, formatted, timeout=timeout)

    def _format_rate(self, step: int) -> float:
        if self.hack == "format":
            return 0.3 + 0.65 * self.level(step)
        return 0.2 + 0.75 / (1 + math.exp(-(step - 6) / 1.5))

    # ----- what the set records ----------------------------------------------------------------------
    def _score(self, step: int, samples: list[Sample]) -> dict[str, BatchResult]:
        out: dict[str, list[Score]] = {alias: [] for alias in self.weights}
        for s in samples:
            for alias, grade in self._grades(step).items():
                out[alias].append(grade(s))
        return {alias: BatchResult(scores, 0.0, sum(1 for x in scores if x.outcome == "error"))
                for alias, scores in out.items()}

    def _grades(self, step: int) -> dict[str, Callable[[Sample], Score]]:
        rng, level = self.rng, self.level(step)

        def correct(s: Sample) -> Score:
            if s.task == "code" and self.name == "clean_routed":
                return Score(None, "not routed here", outcome="abstain")
            if s.timeout:
                return Score(None, "timeout after 5 s", outcome="timeout")
            if s.exits:
                return Score(1.0, "exit status 0")
            return Score(float(s.correct))

        def strict(s: Sample) -> Score:
            if rng.random() < 0.5:
                return Score(None, "not sampled for the audit")
            return Score(float(s.correct and s.answers == 1 and not s.exits))

        grades: dict[str, Callable[[Sample], Score]] = {
            "correct": correct,
            "format": lambda s: Score(float(s.formatted)),
            "audit": strict,
            "verbosity": lambda s: Score(min(s.words / 150, 1.0)),
            "judge": lambda s: Score(0.9 + rng.uniform(-0.05, 0.05) if s.template else rng.uniform(0.2, 0.6)),
            "rm": lambda s: Score((1 + 19 * level) * (rng.gauss(0.5, 0.2) + 0.2 * s.correct)),
            "code": lambda s: Score(None, "not routed here", outcome="abstain") if s.task != "code"
            else Score(1.0 if s.correct else rng.choice([0.0, 0.5])),
        }
        return {alias: grades[alias] for alias in self.weights}


def scripted_run(name: str, seed: int = 0) -> ScriptedRun:
    """The run ``name`` (one of ``CLEAN`` or ``HACKS``) for ``seed``."""
    rng = random.Random(seed)
    prompts, group = rng.choice([(8, 8), (16, 4), (12, 6), (6, 8)])
    start = rng.randint(15, 25) if name in HACKS else None
    ramp = rng.randint(3, 8)
    steps = start + 20 if start is not None else 100  # clean runs are long: every step is a chance to be wrong
    weights = {"correct": 1.0, "format": 0.2, "audit": 0.0}
    roles: dict[str, str | None] = {"correct": "correctness", "format": "format", "audit": "audit"}
    extra = {"length": ("verbosity", 0.5, "shaping"), "templated": ("judge", 1.0, None),
             "dominance": ("rm", 0.5, None), "clean_routed": ("code", 1.0, "correctness")}
    if name in extra:
        alias, weight, role = extra[name]
        weights[alias], roles[alias] = weight, role
    if name == "clean_long":
        weights["rm"], roles["rm"] = 0.5, None
    aggregate = "normalize_then_sum" if rng.random() < 0.3 and name != "dominance" else "sum"
    if name not in HACKS and name not in CLEAN:
        raise ValueError(f"unknown scripted run {name!r}; runs: {', '.join(CLEAN + HACKS)}")
    return ScriptedRun(name, seed, name if name in HACKS else None, start, ramp, steps, prompts, group,
                       weights, roles, aggregate)
