"""One lane for sync graders: a case whose graders are all sync (built-in kinds, a `code`
callable, a grader without `agrade`), with or without a timeout, is graded in the lane's
thread; a grade past its timeout is timed out by the loop's watch, its thread abandoned and
replaced; slow grades get threads of their own, up to `jobs` at once."""

from __future__ import annotations

import re
import textwrap
import threading
import time
from pathlib import Path

from runner_graders import Sleep, Where, entry
from test_hangs import run_script

import gradekit
from gradekit import Sample
from gradekit.suite.model import Case, Suite, Turn

GRADERS = """
import threading
from gradekit.code import GraderResult

def where(ctx):
    return GraderResult(1.0, details={"thread": threading.current_thread().name})
"""


def _suite(tmp_path: Path, third: str) -> Path:
    (tmp_path / "lane_where.py").write_text(GRADERS, encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(f"""\
            name: lane
            graders:
              - {{kind: equality}}
              - {{kind: contains, values: ["4"]}}
              - {third}
            cases:
              - {{name: a, output: "4", expected: "4"}}
              - {{name: b, output: "5", expected: "4"}}
        """),
        encoding="utf-8",
    )
    return suite


def _threads(report: gradekit.SuiteReport, name: str) -> set[str]:
    return {
        record.result.details["thread"]
        for case in report.cases
        for turn in case.turns
        for record in turn.results
        if record.result.name == name
    }


def test_a_code_grader_among_text_kinds_is_graded_in_the_lane_s_thread(tmp_path):
    for third in (
        "{kind: code, grader: 'lane_where:where'}",
        "{kind: code, grader: 'lane_where:where', timeout: 5}",
    ):
        report = gradekit.run_suite(gradekit.load_suite(_suite(tmp_path, third)))

        threads = _threads(report, "where")
        assert len(threads) == 1 and next(iter(threads)).startswith("gradekit-lane"), threads
        assert [case.passed for case in report.cases] == [True, False]
        assert report.cases[1].turns[0].results[0].result.passed is False  # equality


def test_a_hung_sync_grader_times_out_the_rest_is_recorded_and_a_new_thread_goes_on():
    graders = (entry(Where(name="before")), entry(Sleep(), timeout=0.5), entry(Where()))
    quick = (entry(Where()),)
    cases = [Case(f"c{i}", (Turn(Sample(output="0"), quick),)) for i in range(20)]
    cases.insert(5, Case("hung", (Turn(Sample(output="0"), graders),)))
    started = time.monotonic()

    report = gradekit.run_suite(Suite("s", lambda: iter(cases)), jobs=2)

    assert time.monotonic() - started < 10
    hung = report.cases[5]
    assert hung.name == "hung" and hung.errored
    results = {record.result.name: record.result for record in hung.turns[0].results}
    assert results["sleep"].error == "TimeoutError: grader 'sleep' exceeded 0.5s"
    assert results["before"].passed and results["where"].passed  # graded, recorded
    assert report.summary.passed == 20 and report.summary.errored == 1
    # The hung grade's thread was left behind: what came after was graded in another one.
    first = report.cases[0].turns[0].results[0].result.details["thread"]
    last = report.cases[-1].turns[0].results[0].result.details["thread"]
    assert first.startswith("gradekit-lane") and last.startswith("gradekit-lane")
    assert first != last


def test_slow_sync_grades_run_up_to_jobs_at_once():
    slow = (entry(Where(seconds=0.3)),)
    cases = [Case(f"c{i}", (Turn(Sample(output="0"), slow),)) for i in range(12)]
    started = time.monotonic()

    report = gradekit.run_suite(Suite("s", lambda: iter(cases)), jobs=4)

    elapsed = time.monotonic() - started
    assert report.summary.passed == 12
    assert elapsed < 12 * 0.3 / 2, elapsed  # one after another would take 3.6 s
    threads = {re.sub(r"-\d+$", "", name) for name in _threads(report, "where")}
    assert threads == {"gradekit-lane"}
    assert len(_threads(report, "where")) > 1


def test_a_batch_of_slow_grades_hands_its_cases_over_as_it_goes():
    slow = (entry(Where(seconds=0.05)),)
    cases = [Case(f"c{i}", (Turn(Sample(output="0"), slow),)) for i in range(30)]
    seen: list[float] = []
    started = time.monotonic()

    gradekit.run_suite(
        Suite("s", lambda: iter(cases)),
        jobs=1,
        on_case=lambda case: seen.append(time.monotonic() - started),
    )

    assert len(seen) == 30
    assert seen[0] < seen[-1] - 0.3, seen  # not all at the end of the batch


SEVERAL_HUNG = """
import json, time
from gradekit import Sample
from gradekit.suite.model import Case, Suite, Turn
from gradekit.run.runner import run_suite
from runner_graders import Sleep, Spin, Where, entry

quick = (entry(Where()),)
cases = [Case(f"c{i}", (Turn(Sample(output="0"), quick),)) for i in range(300)]
for n, grader in enumerate([Spin(), Sleep(), Spin(), Sleep(), Spin(), Sleep()]):
    hung = (entry(Where(name="before")), entry(grader, timeout=0.5))
    cases.insert(40 * n + 7, Case(f"hung{n}", (Turn(Sample(output="0"), hung),)))
started = time.monotonic()
report = run_suite(Suite("s", lambda: iter(cases)), jobs=2)
print(json.dumps({"seconds": time.monotonic() - started, "report": report.to_dict()}))
"""


def test_several_hung_sync_graders_do_not_starve_the_run():
    """Three spin in pure Python (taking the GIL until the process exits), three sleep."""
    data, elapsed = run_script(SEVERAL_HUNG)
    report = data["report"]
    assert data["seconds"] < 20
    assert elapsed < data["seconds"] + 10
    summary = report["summary"]
    assert (summary["cases"], summary["passed"], summary["errored"]) == (306, 300, 6)
    for case in report["cases"]:
        if case["name"].startswith("hung"):
            results = {r["name"]: r for r in case["turns"][0]["results"]}
            hung = results.get("spin") or results["sleep"]
            assert hung["error"] == f"TimeoutError: grader '{hung['name']}' exceeded 0.5s"
            assert results["before"]["passed"] is True
    assert threading.active_count() >= 1
