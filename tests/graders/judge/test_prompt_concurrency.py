"""The run-wide limit on judge calls in flight: many cases, graded concurrently, never send
more requests at once than `--judge-concurrency` lets through."""

from __future__ import annotations

from judge_server import Answer, JudgeServer, judged
from judge_support import use_options

import gradekit
from gradekit.registry.entries import GraderEntry
from gradekit.suite.model import Case, Suite, Turn


def slow(request):  # each reply takes a moment, so requests pile up if nothing stops them
    answer = judged(8)(request)
    return Answer(answer.status, answer.body, delay=0.02)


def test_two_hundred_cases_never_exceed_the_limit(server: JudgeServer) -> None:
    server.default = slow
    use_options(judge_concurrency=5)
    grader = gradekit.create(
        "prompt", "judge", {"rubric": "Right?", "model": "gpt-test", "base_url": server.openai_url}
    )
    entry = GraderEntry(grader=grader, kind="prompt", name="judge")
    cases = [
        Case(
            f"case-{i}", (Turn(gradekit.Sample(case=f"case-{i}", output=f"answer {i}"), (entry,)),)
        )
        for i in range(200)
    ]
    suite = Suite("many", lambda: iter(cases), case_count=len(cases))
    report = gradekit.run_suite(suite, jobs=32)
    assert report.summary.passed == 200
    assert len(server.requests) == 200
    assert server.max_in_flight == 5  # reached, never passed
    stats = report.summary.judge
    assert stats is not None
    assert (stats["calls"], stats["errors"]) == (200, 0)
