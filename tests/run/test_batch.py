"""The batch's grouping of alike turns: what the rules read of a result is all `likeness`
holds, and turns past the limit of distinct groups are still decided and counted each."""

from __future__ import annotations

import pytest
from runner_graders import Fixed, PooledScored, Scored, entry

from gradekit import GradeResult, Sample
from gradekit.report.model import SummaryBuilder
from gradekit.run.alike import GROUPS as _ALIKE_GROUPS
from gradekit.run.runner import run_suite
from gradekit.run.verdict import likeness, tally
from gradekit.suite.model import Case, Suite, Turn


class Watched:
    """A result that records which of its attributes are read."""

    def __init__(self, result: GradeResult, read: set[str]) -> None:
        self._result = result
        self._read = read

    def __getattr__(self, name: str):
        self._read.add(name)
        return getattr(self._result, name)


RESULTS = [
    GradeResult("k", "a", True, 0.75, "fine", {"x": 1}),
    GradeResult("k", "b", False, 0.25, "not quite"),
    GradeResult.of_error("k", "c", "ValueError: broken"),
]


def test_the_rules_and_the_counts_read_only_what_likeness_holds():
    entries = [entry(Fixed(name=r.name)) for r in RESULTS]
    read: set[str] = set()
    likeness([Watched(r, read) for r in RESULTS])
    held = set(read)
    assert held == {"error", "passed", "score"}
    read.clear()
    tally([Watched(r, read) for r in RESULTS], entries)
    summary = SummaryBuilder()
    summary.count_results([Watched(r, read) for r in RESULTS], summary.counters("abc"))
    assert read <= held


def suite(kind, scores):
    """Two-turn cases graded by one tuple of graders (a batch of reports holds 256 cases, so
    512 turns), a score a turn."""
    graders = (entry(kind()),)
    pairs = zip(scores[::2], scores[1::2], strict=True)
    cases = [
        Case(f"c{i}", tuple(Turn(Sample(output=str(s)), graders) for s in pair))
        for i, pair in enumerate(pairs)
    ]
    return Suite("s", lambda: iter(cases))


@pytest.mark.parametrize("keep", [True, False])
def test_more_distinct_turns_than_groups_are_each_decided_and_counted(keep):
    scores = [index / (4 * _ALIKE_GROUPS) for index in range(4 * _ALIKE_GROUPS)]
    batched = run_suite(suite(Scored, scores), keep_cases=keep)
    pooled = run_suite(suite(PooledScored, scores))
    expected, summary = pooled.summary.graders["scored"], batched.summary.graders["scored"]
    assert (summary.passed, summary.failed) == (expected.passed, expected.failed)
    assert (summary.passed, summary.failed) == (len(scores) // 2, len(scores) // 2)
    assert summary.mean_score == pytest.approx(expected.mean_score)
    assert batched.summary.cases == pooled.summary.cases == len(scores) // 2
    assert batched.summary.passed == pooled.summary.passed
    if keep:
        assert [c.to_dict()["turns"][1]["score"] for c in batched.cases] == scores[1::2]
