"""The judge's state is the run's: `--judge-concurrency N` bounds the requests in flight over
the whole run, whatever threads and event loops it grades on, and two runs in one process
share neither limit, cache nor statistics (each report's `summary.judge` is its own run's)."""

from __future__ import annotations

import threading
from typing import Any

import attrs
from judge_server import Answer, JudgeServer, judged
from judge_support import use_options

import gradekit
from gradekit.registry.entries import GraderEntry
from gradekit.suite.model import Case, Suite, Turn


def slow(request: Any) -> Answer:
    answer = judged(8)(request)
    return Answer(answer.status, answer.body, delay=0.05)


@attrs.frozen
class SyncJudge:
    """A sync grader that asks the judge itself: each grade runs its own event loop in one of
    the runner's worker threads."""

    judge: Any
    kind = "sync-judge"
    name = "sync-judge"

    def grade(self, sample: gradekit.Sample) -> gradekit.GradeResult:
        return attrs.evolve(self.judge.grade(sample), kind=self.kind, name=self.name)


def a_suite(server: JudgeServer, count: int) -> Suite:
    """Half the cases judged on the run's loop, half from worker threads' loops."""
    config = {"rubric": "Right?", "model": "gpt-test", "base_url": server.openai_url}
    grader = gradekit.create("prompt", "judge", config)
    on_loop = GraderEntry(grader=grader, kind="prompt", name="judge")
    in_threads = GraderEntry(grader=SyncJudge(grader), kind="sync-judge", name="sync-judge")
    cases = [
        Case(
            f"case-{i}",
            (
                Turn(
                    gradekit.Sample(case=f"case-{i}", output=f"{i}"),
                    (on_loop if i % 2 else in_threads,),
                ),
            ),
        )
        for i in range(count)
    ]
    return Suite("many", lambda: iter(cases), case_count=len(cases))


def test_the_limit_holds_over_every_thread_and_loop_of_the_run(server: JudgeServer) -> None:
    server.default = slow
    use_options(judge_concurrency=2)
    report = gradekit.run_suite(a_suite(server, 24), jobs=16)
    assert report.summary.passed == 24
    assert server.max_in_flight == 2  # reached, never passed (the old per-loop limit: 10)
    assert report.summary.judge is not None
    assert report.summary.judge["calls"] == 24  # the threads' calls counted in the run


def test_two_runs_at_once_share_no_statistics(server: JudgeServer) -> None:
    server.default = slow
    use_options(judge_cache=False)
    reports: dict[int, gradekit.SuiteReport] = {}

    def run(count: int) -> None:
        reports[count] = gradekit.run_suite(a_suite(server, count), jobs=8)

    threads = [threading.Thread(target=run, args=(count,)) for count in (4, 6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(server.requests) == 10
    for count in (4, 6):
        judge = reports[count].summary.judge
        assert judge is not None
        assert (judge["calls"], judge["cached"]) == (count, 0)


def test_each_run_has_its_own_cache_settings(server: JudgeServer, tmp_path: Any) -> None:
    server.default = judged(8)
    use_options(judge_cache_dir=tmp_path / "cache")
    first = gradekit.run_suite(a_suite(server, 2))
    use_options(judge_cache=False)
    second = gradekit.run_suite(a_suite(server, 2))
    assert len(server.requests) == 4  # the second run read no cache
    assert first.summary.judge is not None and second.summary.judge is not None
    assert (first.summary.judge["calls"], second.summary.judge["cached"]) == (2, 0)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2


def test_a_run_without_a_judge_has_no_judge_summary() -> None:
    report = gradekit.run_suite(
        Suite("plain", lambda: iter([Case("c", (Turn(gradekit.Sample(output="x"), ()),))]))
    )
    assert report.summary.judge is None
    assert "judge" not in report.to_dict()["summary"]
