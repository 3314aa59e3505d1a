"""Helpers the prompt kind's tests import by name (a unique module name: `conftest` is
ambiguous when several test folders are collected in one run)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradekit

Make = Callable[..., Any]
"""`make(**options)`: a prompt grader judged by the test's server (see conftest.make)."""


def grade_one(grader: Any, sample: gradekit.Sample | None = None) -> gradekit.GradeResult:
    """Grade one sample (default: a small question and answer) through the runner."""
    sample = sample or gradekit.Sample(input="What is 2 + 2?", output="4", expected="4")
    return gradekit.grade(sample, [grader])[0]
