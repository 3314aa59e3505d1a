"""The batch's grouping of alike turns: what the rules read of a result is all `likeness`
holds, and turns past the limit of distinct groups are still decided and counted each."""

from __future__ import annotations

import pytest
from runner_graders import Fixed, PooledScored, Scored, entry

from gradekit import GradeResult, Outputs, Sample
from gradekit.report.summary import SummaryBuilder
from gradekit.run.alike import GROUPS, entries_key
from gradekit.run.runner import run_suite
from gradekit.run.verdict import likeness, tally
from gradekit.suite.model import Case, Suite, Turn


class Watched:
    """An object that records which of its attributes are read."""

    def __init__(self, watched: object, read: set[str]) -> None:
        self._watched = watched
        self._read = read

    def __getattr__(self, name: str):
        self._read.add(name)
        return getattr(self._watched, name)


RESULTS = [
    GradeResult("k", "a", True, 0.75, "fine", {"x": 1}),
    GradeResult("k", "b", False, 0.25, "not quite"),
    GradeResult.of_error("k", "c", "ValueError: broken"),
]
ENTRIES = [
    entry(Fixed(name="a"), weight=2.0),
    entry(Fixed(name="b"), advisory=True),
    entry(Fixed(name="c"), fail_on_error=True),
]


def watched(values, read):
    return [Watched(value, read) for value in values]


def test_the_rules_and_the_counts_read_only_what_turns_alike_are_keyed_by():
    held: set[str] = set()
    likeness(watched(RESULTS, held))
    assert held == {"error", "passed", "score"}
    read: set[str] = set()
    tally(watched(RESULTS, read), ENTRIES)
    summary = SummaryBuilder()
    summary.count_results(watched(RESULTS, read), summary.counters("abc"))
    assert read <= held
    keyed: set[str] = set()
    entries_key(watched(ENTRIES, keyed))
    read.clear()
    tally(RESULTS, watched(ENTRIES, read))
    assert read <= keyed - {"name"}  # the name is what the summary counts results by


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
    scores = [index / (4 * GROUPS) for index in range(4 * GROUPS)]
    batched = run_suite(suite(Scored, scores), outputs=Outputs(keep_cases=keep))
    pooled = run_suite(suite(PooledScored, scores))
    expected, summary = pooled.summary.graders["scored"], batched.summary.graders["scored"]
    assert (summary.passed, summary.failed) == (expected.passed, expected.failed)
    assert (summary.passed, summary.failed) == (len(scores) // 2, len(scores) // 2)
    assert summary.mean_score == pytest.approx(expected.mean_score)
    assert batched.summary.cases == pooled.summary.cases == len(scores) // 2
    assert batched.summary.passed == pooled.summary.passed
    if keep:
        assert [c.to_dict()["turns"][1]["score"] for c in batched.cases] == scores[1::2]
