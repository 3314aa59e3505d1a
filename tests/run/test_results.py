"""What a grader returns stays its own: the runner records what it measures (the duration) on
the records it makes, and makes a new result when the entry corrects one."""

from __future__ import annotations

import attrs
import pytest
from runner_graders import Cached, InlineCached, entry, one_turn_suite

import gradekit
from gradekit import GradeResult, Outputs, Sample
from gradekit.run.runner import run_suite

CACHED = GradeResult("cached", "cached", True, 1.0, "from the cache")


@pytest.mark.parametrize("kind", [InlineCached, Cached], ids=["batched", "one case at a time"])
def test_a_result_a_grader_returned_is_never_changed_and_durations_are_the_records(kind):
    grader = kind(seconds=0.01)
    report = run_suite(one_turn_suite([entry(grader)], ["0"] * 5))
    assert grader.result == CACHED and grader.result.duration_ms == 0.0
    records = [case.turns[0].results[0] for case in report.cases]
    assert all(record.result is grader.result for record in records)  # kept as it is
    assert all(record.duration_ms >= 10.0 for record in records)
    results = [case.to_dict()["turns"][0]["results"][0] for case in report.cases]
    assert [result["duration_ms"] for result in results] == [r.duration_ms for r in records]


def test_a_run_that_only_counts_leaves_the_results_alone_too():
    grader = InlineCached()
    report = run_suite(
        one_turn_suite([entry(grader)], ["0"] * 5), outputs=Outputs(keep_cases=False)
    )
    assert report.summary.passed == 5 and grader.result == CACHED


def test_a_result_the_entry_corrects_is_a_new_one():
    grader = InlineCached(result=GradeResult("cached", "cached", True, 0.3))
    report = run_suite(one_turn_suite([entry(grader, threshold=0.5)], ["0"]))
    result = report.cases[0].turns[0].results[0].result
    assert result.passed is False and result.score == 0.3
    assert grader.result.passed is True  # the grader's own result is as it returned it


def test_grade_returns_copies_with_the_measured_duration():
    grader = Cached(seconds=0.02)
    (result,) = gradekit.grade(Sample(), [grader])
    assert result.duration_ms >= 20.0
    assert grader.result == CACHED and grader.result.duration_ms == 0.0
    assert result == attrs.evolve(CACHED, duration_ms=result.duration_ms)
