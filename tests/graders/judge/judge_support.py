"""Helpers the prompt kind's tests import by name (a unique module name: `conftest` is
ambiguous when several test folders are collected in one run)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradekit
from gradekit.core.context import RunContext, RunOptions, set_run
from gradekit.graders.prompt.shared import JudgeStatistics, judge_run

Make = Callable[..., Any]
"""`make(**options)`: a prompt grader judged by the test's server (see conftest.make)."""


def grade_one(grader: Any, sample: gradekit.Sample | None = None) -> gradekit.GradeResult:
    """Grade one sample (default: a small question and answer) through the runner."""
    sample = sample or gradekit.Sample(input="What is 2 + 2?", output="4", expected="4")
    return gradekit.grade(sample, [grader])[0]


def use_options(**options: Any) -> RunContext:
    """Make a fresh run context with these `RunOptions` current for the rest of the test (the
    autouse fixture `fresh_judge` restores the one before); later runs take its options."""
    run = RunContext(RunOptions(**options))
    set_run(run)
    return run


def statistics() -> JudgeStatistics | None:
    """The judge statistics of the run context in effect (`gradekit.grade` calls grade
    within it; each `run_suite` has its own, on its report's `summary.judge`)."""
    return judge_run().statistics()
