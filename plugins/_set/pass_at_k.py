"""``pass_at_k: K`` on a config entry: the reward's values become PKPO's unbiased per-sample pass@k rewards.

Pass@k Policy Optimization (Walder & Karkhanis, 2025) trains for the best of k samples instead of the
average one. Within a prompt group of n scored samples with values g, sorted ascending (rank r = 1..n),
the gradient of E[max of k samples] is estimated without bias by giving sample r the reward

    s_r = ( g_r * C(r-1, k-1) + sum_{m > r} g_m * C(m-2, k-2) ) / C(n, k)

(the mean, over the k-subsets holding the sample, of the subset's best value). rewardhub pays n/k * s_r, so
that ``pass_at_k: 1`` leaves every value as it was and, for 0/1 rewards, a correct sample gets 1.0 and a wrong
one 1 - C(n-c-1, k-1) / C(n-1, k-1) (less the more of the group is wrong). The group's unbiased pass@k
estimate, 1/C(n,k) * sum_r g_r C(r-1, k-1), is in each reason. Abstentions stay abstentions and are left out
of n; a group with fewer than k scored samples uses k = n (said in the reason).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from .._batch import Batch, Score
from .._call import Call
from .._reward import BatchResult, aevaluate_any
from ..errors import ConfigError
from .scorers import Scorer

__all__ = ["PassAtK", "check_k", "pass_at_k_estimate", "pass_at_k_rewards", "with_pass_at_k"]


def pass_at_k_rewards(values: Sequence[float], k: int) -> list[float]:
    """PKPO's per-sample rewards for one group's ``values`` (in their order), scaled by n/k."""
    n = len(values)
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n; got k={k}, n={n}")
    order = sorted(range(n), key=values.__getitem__)
    ranked = [values[i] for i in order]
    total = math.comb(n, k)
    rewards = [0.0] * n
    above = 0.0  # sum over m > r of g_m * C(m-2, k-2), built from the top down
    for r in range(n, 0, -1):  # 1-based rank
        own = ranked[r - 1] * math.comb(r - 1, k - 1)
        rewards[order[r - 1]] = (own + above) / total * n / k
        if k >= 2 and r >= 2:
            above += ranked[r - 1] * math.comb(r - 2, k - 2)
    return rewards


def pass_at_k_estimate(values: Sequence[float], k: int) -> float:
    """The unbiased estimate of the expected best of k samples (pass@k for 0/1 values) from one group."""
    ranked = sorted(values)
    return math.fsum(g * math.comb(r - 1, k - 1) for r, g in enumerate(ranked, start=1)) / math.comb(len(ranked), k)


def check_k(where: str, k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"{where}: 'pass_at_k' must be an integer k >= 1 (the k of pass@k), got {k!r}")
    return k


class PassAtK(Scorer):
    """``inner``'s values turned into PKPO pass@k rewards within each prompt group (see the module docstring)."""

    def __init__(self, inner: Any, k: int):
        super().__init__(inner)
        self.k = k

    @property
    def needs_groups(self) -> bool:
        return True  # it compares the completions of one prompt

    def _evaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        start = time.perf_counter()
        result = self.inner.evaluate_batch(batch, call)
        return BatchResult(self.transform(batch, result.scores), time.perf_counter() - start, result.errors)

    async def _aevaluate(self, batch: Batch, call: Call | None) -> BatchResult:
        start = time.perf_counter()
        result = await aevaluate_any(self.inner, batch, call)
        return BatchResult(self.transform(batch, result.scores), time.perf_counter() - start, result.errors)

    def transform(self, batch: Batch, scores: Sequence[Score]) -> list[Score]:
        scores = list(scores)
        for group in batch.groups():
            present = [i for i in group if scores[i].value is not None]
            if not present:
                continue
            k = min(self.k, len(present))
            values = [scores[i].value for i in present]
            estimate = pass_at_k_estimate(values, k)
            note = f"; only {len(present)} scored in the group, so k = {k}" if k < self.k else ""
            for i, value in zip(present, pass_at_k_rewards(values, k), strict=True):
                old = scores[i]
                reason = f"{old.reason}; pass@{k} reward {value:.4g} (group pass@{k} {estimate:.3g}, n={len(present)}{note})"
                scores[i] = Score(value, reason.lstrip("; "), old.verdict, old.outcome, None)
        return scores


def with_pass_at_k(scorer: Any, k: int | None) -> Any:
    """``scorer`` behind the pass@k transform when the entry sets ``pass_at_k`` (else as it is)."""
    return scorer if k is None else PassAtK(scorer, k)
