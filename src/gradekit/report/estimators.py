"""The figures a run's summary estimates from its counts: pass@k and pass^k, and the
intervals of its rates and means (after Miller (2024), "Adding Error Bars to Evals", arXiv
2411.00640): `wilson_interval` (a proportion, each case graded once) and `clustered_interval`
(a mean ± z · its cluster-robust standard error without small-sample correction,
SE = sqrt(Σ_c (Σ_i (x_i - mean))²) / N, clusters being cases). Nothing here reads or writes
reports: callers hand in counts; the standard library alone.

pass@k and pass^k: how likely k attempts at a task succeed, from n graded attempts.

pass@k is the unbiased estimator of Chen et al. (2021), "Evaluating Large Language Models
Trained on Code": of n attempts, c passed; the chance that at least one of k attempts drawn
without replacement passes is `1 - C(n-c, k) / C(n, k)`. pass^k (Yao et al., 2024, tau-bench)
is the chance that all k pass: `C(c, k) / C(n, k)`. Both are computed as running products, never
as binomials of large numbers, so they stay exact to floating point for any n.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = [
    "DEFAULT_CONFIDENCE",
    "Interval",
    "check_confidence",
    "clustered_interval",
    "clustered_se",
    "mean_over_tasks",
    "pass_at_k",
    "pass_hat_k",
    "wilson_interval",
    "z_value",
]

DEFAULT_CONFIDENCE: Final = 0.95
"""The level of every interval unless another is asked for (`--confidence C`)."""

Interval = tuple[float, float]
"""An interval `(low, high)`."""


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"passed attempts must be from 0 to n ({n}), got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be from 1 to the number of attempts ({n}), got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k of the n attempts passes, given c of n passed."""
    _check(n, c, k)
    if n - c < k:  # every draw of k holds a passing attempt
        return 1.0
    failing_only = 1.0
    for drawn in range(n - c + 1, n + 1):  # C(n-c, k) / C(n, k) as a product of k factors
        failing_only *= 1.0 - k / drawn
    return 1.0 - failing_only


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all of k of the n attempts pass, given c of n passed."""
    _check(n, c, k)
    if c < k:
        return 0.0
    all_pass = 1.0
    for i in range(k):
        all_pass *= (c - i) / (n - i)
    return all_pass


def mean_over_tasks(counts: Iterable[tuple[int, int]], ks: Sequence[int]) -> dict[str, float]:
    """The mean pass@k and pass^k for each k of `ks`, over the tasks (given as (n, c)) that
    have at least k attempts: `{"pass@1": ..., "pass^1": ..., ...}`; a k no task has at least
    k attempts for is left out (empty when there is no task)."""
    tasks = list(counts)
    means: dict[str, float] = {}
    for k in ks:
        counted = [(n, c) for n, c in tasks if n >= k]
        if not counted:
            continue
        means[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in counted) / len(counted)
        means[f"pass^{k}"] = sum(pass_hat_k(n, c, k) for n, c in counted) / len(counted)
    return means


def check_confidence(confidence: float) -> float:
    """`confidence` checked: a number strictly between 0 and 1 (ValueError otherwise)."""
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not 0.0 < confidence < 1.0
    ):
        raise ValueError(
            f"the confidence level must be a number between 0 and 1 (exclusive), got "
            f"{confidence!r}; write 0.95 for 95% intervals"
        )
    return float(confidence)


def z_value(confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The two-sided normal quantile of `confidence`: 1.959964... for 0.95."""
    from statistics import NormalDist  # imported when needed: it imports `random`, `decimal`

    return NormalDist().inv_cdf(1.0 - (1.0 - check_confidence(confidence)) / 2.0)


def _clip(low: float, high: float) -> Interval:
    return (min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0))


def wilson_interval(
    successes: float, n: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """The Wilson score interval of `successes` out of `n` (None when n is 0). `successes`
    may be a sum of scores in [0, 1] (a grader's mean score over results graded once)."""
    if n <= 0:
        return None
    z = z_value(confidence)
    z2 = z * z
    rate = successes / n
    denominator = 1.0 + z2 / n
    center = (rate + z2 / (2.0 * n)) / denominator
    half = z * math.sqrt(rate * (1.0 - rate) / n + z2 / (4.0 * n * n)) / denominator
    return _clip(center - half, center + half)


def clustered_se(clusters: Iterable[tuple[float, int]]) -> tuple[float, float, int] | None:
    """The mean and its clustered standard error over `clusters`, each given as (sum of its
    values, how many values): SE = sqrt(Σ_c (S_c - n_c · mean)²) / N, N = Σ n_c (no
    small-sample correction). Returns (mean, SE, N); None when there is no value."""
    listed = [(float(total), int(count)) for total, count in clusters if count > 0]
    n = sum(count for _, count in listed)
    if n == 0:
        return None
    mean = math.fsum(total for total, _ in listed) / n
    spread = math.fsum((total - count * mean) ** 2 for total, count in listed)
    return mean, math.sqrt(spread) / n, n


def clustered_interval(
    clusters: Iterable[tuple[float, int]], confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """The mean ± z · clustered SE over `clusters` (see `clustered_se`), clipped to [0, 1];
    None when there is no value."""
    found = clustered_se(clusters)
    if found is None:
        return None
    mean, se, _ = found
    half = z_value(confidence) * se
    return _clip(mean - half, mean + half)
