"""Batches of `bounded` grades (the built-in text kinds) graded in the loop's own thread while
nothing else is in flight: the same reports as on the inline lane, the run's timeout still
holding, and every other inline grader still on the lane, where a hung grade is abandoned."""

from __future__ import annotations

import re
import time
from typing import ClassVar

import attrs
from runner_graders import BoundedWhere, Echo, Where, entry

import gradekit
from gradekit import GradeResult, Sample
from gradekit.core.types import bounded
from gradekit.suite.model import Case, Suite, Turn


@attrs.frozen
class BoundedSpin:
    """A bounded grade that takes `seconds` of CPU (a long text, say)."""

    kind: ClassVar[str] = "spin"
    inline: ClassVar[bool] = True
    name: str = "spin"
    seconds: float = 0.05

    @bounded
    def grade(self, sample: Sample) -> GradeResult:
        end = time.perf_counter() + self.seconds
        while time.perf_counter() < end:
            pass
        return GradeResult(self.kind, self.name, True, 1.0)


def _suite(grader: object, cases: int, *, first: Case | None = None) -> Suite:
    graders = (entry(grader),)
    made = [Case(f"c{i}", (Turn(Sample(output=str(i)), graders),)) for i in range(cases)]
    return Suite("bounded", lambda: iter(([first] if first else []) + made))


def _threads(report: gradekit.SuiteReport) -> set[str]:
    """The threads that graded the `where` results, by name without a worker's number."""
    return {
        re.sub(r"-\d+$", "", record.result.details["thread"])
        for case in report.cases
        for turn in case.turns
        for record in turn.results
        if record.result.kind == "where"
    }


def test_bounded_grades_alone_are_graded_in_the_loop_s_thread() -> None:
    report = gradekit.run_suite(_suite(BoundedWhere(), 3000))

    assert report.summary.passed == 3000
    assert _threads(report) == {"gradekit-loop"}


def test_other_inline_grades_stay_on_the_lane_where_a_hung_one_is_abandoned() -> None:
    report = gradekit.run_suite(_suite(Where(), 3000))

    assert report.summary.passed == 3000
    assert _threads(report) == {"gradekit-lane"}


def test_while_another_case_is_graded_bounded_batches_go_to_the_lane() -> None:
    slow = Case("slow", (Turn(Sample(output="a", expected="a"), (entry(Echo(jitter=0.3)),)),))

    report = gradekit.run_suite(_suite(BoundedWhere(), 3000, first=slow), jobs=2)

    assert report.summary.passed == 3001
    assert "gradekit-lane" in _threads(report)


def test_the_run_s_timeout_holds_for_a_bounded_grade_graded_on_the_loop() -> None:
    report = gradekit.run_suite(
        _suite(BoundedSpin(seconds=0.05), 3), defaults=gradekit.GraderDefaults(timeout=0.01)
    )

    errors = [case.turns[0].results[0].result.error for case in report.cases]
    assert len(errors) == 3
    assert all(error is not None and "exceeded 0.01s" in error for error in errors), errors


def test_the_built_in_kinds_report_the_same_on_the_loop_and_on_the_lane(tmp_path) -> None:
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        "name: kinds\n"
        "graders:\n"
        "  - {kind: equality}\n"
        "  - {kind: numeric}\n"
        "  - {kind: contains, values: ['1']}\n"
        "  - {kind: regex, pattern: '^[0-9]+$'}\n"
        "  - {kind: json}\n"
        "  - {kind: behavior, required_tools: [search]}\n"
        "dataset: data.jsonl\n",
        encoding="utf-8",
    )
    lines = []
    for i in range(2500):
        calls = ', "tool_calls": [{"name": "search"}]' if i % 2 else ""
        lines.append(f'{{"name": "c{i}", "output": "{i % 13}", "expected": {i % 11}{calls}}}\n')
    (tmp_path / "data.jsonl").write_text("".join(lines), encoding="utf-8")
    suite = gradekit.load_suite(suite_file)
    slow = Case("slow", (Turn(Sample(output="a", expected="a"), (entry(Echo(jitter=0.3)),)),))

    alone = gradekit.run_suite(suite)
    beside = gradekit.run_suite(
        attrs.evolve(suite, cases=lambda: iter([slow, *suite.cases()]), case_count=None), jobs=2
    )

    def without_durations(report: gradekit.SuiteReport) -> list[object]:
        forms = [case.to_dict() for case in report.cases if case.name != "slow"]
        for form in forms:
            form.pop("duration_ms")
            for turn in form["turns"]:
                for result in turn["results"]:
                    result.pop("duration_ms")
        return forms

    assert without_durations(alone) == without_durations(beside)
    assert alone.summary.cases == 2500 and beside.summary.cases == 2501
