"""The inline batch decides and counts every turn as the pool's path does, whatever the
number of distinct scores."""

from __future__ import annotations

import pytest
from runner_graders import PooledScored, Scored, entry

from gradekit import Outputs, Sample
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn


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
def test_every_distinct_turn_is_decided_and_counted(keep):
    scores = [index / 1024 for index in range(1024)]
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
