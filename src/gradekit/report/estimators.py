"""pass@k and pass^k: how likely k attempts at a task succeed, from n graded attempts.

pass@k is the unbiased estimator of Chen et al. (2021), "Evaluating Large Language Models
Trained on Code": of n attempts, c passed; the chance that at least one of k attempts drawn
without replacement passes is `1 - C(n-c, k) / C(n, k)`. pass^k (Yao et al., 2024, tau-bench)
is the chance that all k pass: `C(c, k) / C(n, k)`. Both are computed as running products, never
as binomials of large numbers, so they stay exact to floating point for any n.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["mean_over_tasks", "pass_at_k", "pass_hat_k"]


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
