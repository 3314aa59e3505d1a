"""`gradekit.grade` of graders whose grades are `bounded` (the built-in text kinds): graded in
the caller's own thread, as the runner grades a lone batch of them, with no thread or event
loop of its own; their timeout still holds, judged when the grade returns. Any other grader
among them sends the call through the event loop, where a grade can be abandoned."""

from __future__ import annotations

import asyncio
import threading

from runner_graders import BoundedWhere, Sleep, Where

import gradekit
from gradekit import Sample

SAMPLE = Sample(output="42", expected="42")


def test_bounded_grades_run_in_the_callers_thread() -> None:
    (result,) = gradekit.grade(SAMPLE, [BoundedWhere()])
    assert result.passed
    assert result.details == {"thread": threading.current_thread().name}


def test_the_built_in_text_kinds_give_their_results_in_place() -> None:
    kinds = ["equality", "numeric", "contains", "regex", "json", "behavior"]
    configs = {
        "contains": {"values": ["4"]},
        "regex": {"pattern": "^5"},
        "behavior": {"max_tool_calls": 3},
    }
    graders = [gradekit.create(kind, kind, configs.get(kind, {})) for kind in kinds]
    results = gradekit.grade(SAMPLE, graders)
    assert [(r.kind, r.passed) for r in results] == [
        ("equality", True),
        ("numeric", True),
        ("contains", True),
        ("regex", False),
        ("json", True),
        ("behavior", True),
    ]
    assert all(r.duration_ms is not None and r.duration_ms >= 0 for r in results)


def test_a_bounded_grade_that_returns_past_its_timeout_is_timed_out() -> None:
    (result,) = gradekit.grade(
        SAMPLE, [BoundedWhere(name="bounded-where", seconds=0.3)], timeout=0.05
    )
    assert not result.passed
    assert result.error == "TimeoutError: grader 'bounded-where' exceeded 0.05s"


def test_one_grader_that_is_not_bounded_sends_all_through_the_loop() -> None:
    bounded, other = gradekit.grade(SAMPLE, [BoundedWhere(), Where()])
    caller = threading.current_thread().name
    assert bounded.details != {"thread": caller}
    assert other.details != {"thread": caller}


def test_a_grader_that_is_not_bounded_is_still_abandoned_at_its_timeout() -> None:
    (result,) = gradekit.grade(SAMPLE, [Sleep(seconds=5.0)], timeout=0.2)
    assert result.error == "TimeoutError: grader 'sleep' exceeded 0.2s"
    assert result.duration_ms is not None and result.duration_ms < 1000


def test_grading_in_place_inside_a_running_loop_leaves_the_loop_alone() -> None:
    async def main() -> tuple[str, ...]:
        loop = asyncio.get_running_loop()
        results = gradekit.grade(SAMPLE, [BoundedWhere(), gradekit.create("numeric")])
        assert asyncio.get_running_loop() is loop
        return tuple(str(r.passed) for r in results)

    assert asyncio.run(main()) == ("True", "True")
