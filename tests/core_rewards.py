"""Small rewards the core tests register: module-level so that they pickle like real plugins."""

import asyncio

import rewardhub
from rewardhub import Reward, Score


@rewardhub.sample_reward(name="t_contains")
def t_contains(text, solution, *, ignore_case: bool = False):
    """1.0 when the solution appears in the completion."""
    if solution is None:
        return None, "no solution for this row"
    if ignore_case:
        text, solution = text.lower(), str(solution).lower()
    found = str(solution) in text
    return float(found), ("found" if found else f"{solution!r} not found")


@rewardhub.sample_reward(name="t_length")
def t_length(text, *, per_char: float = 0.1):
    return min(1.0, per_char * len(text))


@rewardhub.sample_reward(name="t_flaky")
def t_flaky(text):
    """Raises on completions containing 'boom', abstains on 'skip'."""
    if "boom" in text:
        raise RuntimeError("exploded on purpose")
    if "skip" in text:
        return None, "not applicable"
    return 1.0


@rewardhub.batch_reward(name="t_batch_len")
def t_batch_len(texts, *, scale: float = 1.0):
    if any("boom" in t for t in texts):
        raise ValueError("bad row in batch")
    return [scale * len(t) for t in texts]


@rewardhub.batch_reward(name="t_wrong_length")
def t_wrong_length(texts):
    return [1.0] * (len(texts) + 1)


@rewardhub.sample_reward(name="t_async_len")
async def t_async_len(text, *, delay: float = 0.0):
    await asyncio.sleep(delay)
    return float(len(text))


class CountingExact(Reward):
    """Exact comparison with the solution, counting how often a batch is really scored."""

    name = "t_counting_exact"

    def __init__(self, *, on_error: str = "none"):
        super().__init__(on_error=on_error)
        self.batches = 0

    def score_batch(self, batch):
        self.batches += 1
        return [
            Score(float(t == s), "", t == s) if t is not None else None
            for t, s in zip(batch.texts, batch.column("solution"), strict=True)
        ]


class LengthIfCorrect(Reward):
    """Rewards brevity only for correct completions, reusing another reward's verdicts."""

    name = "t_length_if_correct"

    def __init__(self, *, correctness: str = "t_counting_exact", on_error: str = "none"):
        super().__init__(on_error=on_error)
        self.correctness = correctness

    def dependencies(self):
        return {"correctness": self.correctness}

    def score_batch(self, batch):
        verdicts = self.dependency_scores("correctness", batch)
        return [1.0 / (1 + len(t)) if v.verdict else 0.0 for t, v in zip(batch.texts, verdicts, strict=True)]


ALL = [t_contains, t_length, t_flaky, t_batch_len, t_wrong_length, t_async_len, CountingExact, LengthIfCorrect]


def register_all(registry):
    for factory in ALL:
        registry.add(factory, source="tests")


@rewardhub.batch_reward(name="t_async_batch")
async def t_async_batch(texts):
    await asyncio.sleep(0)
    if any("boom" in t for t in texts):
        raise ValueError("bad row in async batch")
    return [float(len(t)) for t in texts]


ALL.append(t_async_batch)


@rewardhub.sample_reward(name="t_isolated", isolated=True)
def t_isolated(text, solution, *, bonus: float = 0.0):
    """Spins forever on 'spin', raises on 'boom', else compares with the solution."""
    if "spin" in text:
        while True:
            pass
    if "boom" in text:
        raise ValueError("exploded in a worker")
    return float(text == solution) + bonus, "compared in a worker"


ALL.append(t_isolated)
